"""Evaluation files: one YAML file describes a whole evaluation (suites, models per role, repeats, thresholds,
reports); ``knowgap eval FILE`` runs it. See :mod:`knowgap.evaluation.eval_file`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowgap.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "knowgap.evaluation.eval_file": ("EvalConfig", "EvalResult", "EvalSuite", "eval_schema", "load_eval", "run_eval"),
})
__all__ = ["EvalConfig", "EvalResult", "EvalSuite", "eval_schema", "load_eval", "run_eval"]

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use
    from knowgap.evaluation.eval_file import EvalConfig, EvalResult, EvalSuite, eval_schema, load_eval, run_eval
