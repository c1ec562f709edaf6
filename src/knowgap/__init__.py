"""knowgap: test whether LLM systems know the limits of what they were given."""

from knowgap.api import cache_info, clear_cache, demo, iter_trials, list_models, list_runs, load_run, resume, run
from knowgap.engine.records import Manifest, MetricValue, RunConfig, TrialRecord
from knowgap.engine.runner import RunResult
from knowgap.errors import InputError, KnowgapError

__all__ = ["InputError", "KnowgapError", "Manifest", "MetricValue", "RunConfig", "RunResult", "TrialRecord",
           "cache_info", "clear_cache", "demo", "iter_trials", "list_models", "list_runs", "load_run", "resume",
           "run"]
