"""Evaluation files: one YAML file describes a whole evaluation (suites, models per role, repeats, thresholds,
reports); ``knowgap eval FILE`` runs it. See :mod:`knowgap.evaluation.eval_file`."""

from knowgap.evaluation.eval_file import EvalConfig, EvalResult, EvalSuite, eval_schema, load_eval, run_eval

__all__ = ["EvalConfig", "EvalResult", "EvalSuite", "eval_schema", "load_eval", "run_eval"]
