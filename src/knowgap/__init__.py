"""knowgap: test whether LLM systems know the limits of what they were given.

The public API is what this module exports (``__all__``); every other module is private by convention and may
change. Names are imported when first used, so ``import knowgap`` stays fast.

>>> import knowgap
>>> result = knowgap.run("starter", models={"target": "local:qwen2.5-0.5b"}, options={"sample": 4})
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowgap.lazy import lazy_exports

_EXPORTS: dict[str, tuple[str, ...]] = {
    # running and reading runs
    "knowgap.api": ("run", "resume", "demo", "list_runs", "load_run", "iter_trials", "failures", "list_models",
                    "cache_info", "clear_cache", "clear_embeddings"),
    "knowgap.engine.runner": ("RunResult",),
    "knowgap.engine.records": ("TrialRecord", "CallRecord", "MetricValue", "Manifest", "RunConfig", "Verdict"),
    # writing a suite (see docs/architecture.md, "Adding a suite")
    "knowgap.suites": ("Suite", "SuiteOptions", "Case", "Configuration", "Trial", "TrialContext", "TrialResult",
                       "JudgeUse", "register"),
    # a suite's data part: its case file and what `knowgap data` does with it (import, check, inject)
    "knowgap.engine.suite_data": ("SuiteData",),
    "knowgap.engine.case_injection": ("CaseInjection", "CaseRecord", "Placement", "Planned"),
    "knowgap.injection.carried": ("CarriedInjections",),
    # a suite's metrics, each declared once (see docs/architecture.md, "Adding a metric")
    "knowgap.engine.metric_spec": ("MetricSpec", "Need", "Choice"),
    # ... counted from a trial's verdicts (judged, rate) in one pass (count_metrics; ERRORED: the errors count)
    "knowgap.engine.verdicts": ("judged", "rate", "not_scored"),
    "knowgap.engine.verdict_tally": ("count_metrics",),
    "knowgap.engine.reducers": ("ERRORED",),
    # writing a judge (see docs/architecture.md, "Adding a judge"): the object, and the validity card it measures
    "knowgap.judges.judge": ("Judge",),
    "knowgap.judges.cards": ("ValidityCard", "binary_card"),
    # writing a provider
    "knowgap.models.base": ("ChatModel",),
    "knowgap.models.registry": ("register_provider",),
    "knowgap.models.types": ("ChatRequest", "ChatResponse", "Message", "ToolSpec", "ToolCall", "Usage"),
    "knowgap.errors": ("KnowgapError", "InputError"),
    "knowgap.plugins": ("PluginWarning",),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["ERRORED", "CallRecord", "CarriedInjections", "Case", "CaseInjection", "CaseRecord", "ChatModel",
           "ChatRequest", "ChatResponse", "Choice", "Configuration", "InputError", "Judge", "JudgeUse", "KnowgapError",
           "Manifest", "Message", "MetricSpec", "MetricValue", "Need", "Placement", "Planned", "PluginWarning",
           "RunConfig", "RunResult", "Suite", "SuiteData", "SuiteOptions", "ToolCall", "ToolSpec", "Trial",
           "TrialContext", "TrialRecord", "TrialResult", "Usage", "ValidityCard", "Verdict", "binary_card",
           "cache_info", "clear_cache", "clear_embeddings", "count_metrics", "demo", "failures", "iter_trials",
           "judged", "list_models", "list_runs", "load_run", "not_scored", "rate", "register", "register_provider",
           "resume", "run"]


if TYPE_CHECKING:  # what type checkers and IDEs see; at run time the names are imported on first use
    from knowgap.api import (
        cache_info,
        clear_cache,
        clear_embeddings,
        demo,
        failures,
        iter_trials,
        list_models,
        list_runs,
        load_run,
        resume,
        run,
    )
    from knowgap.engine.case_injection import CaseInjection, CaseRecord, Placement, Planned
    from knowgap.engine.metric_spec import Choice, MetricSpec, Need
    from knowgap.engine.records import CallRecord, Manifest, MetricValue, RunConfig, TrialRecord, Verdict
    from knowgap.engine.reducers import ERRORED
    from knowgap.engine.runner import RunResult
    from knowgap.engine.suite_data import SuiteData
    from knowgap.engine.verdict_tally import count_metrics
    from knowgap.engine.verdicts import judged, not_scored, rate
    from knowgap.errors import InputError, KnowgapError
    from knowgap.injection.carried import CarriedInjections
    from knowgap.judges.cards import ValidityCard, binary_card
    from knowgap.judges.judge import Judge
    from knowgap.models.base import ChatModel
    from knowgap.models.registry import register_provider
    from knowgap.models.types import ChatRequest, ChatResponse, Message, ToolCall, ToolSpec, Usage
    from knowgap.plugins import PluginWarning
    from knowgap.suites import (
        Case,
        Configuration,
        JudgeUse,
        Suite,
        SuiteOptions,
        Trial,
        TrialContext,
        TrialResult,
        register,
    )
