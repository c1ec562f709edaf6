"""Per-trial verdicts of the partial suite count to its metrics, over runs of an agent that claims every view is
sufficient, of one that leaks what it may not see, and of one whose replies do not parse."""

from __future__ import annotations

from pathlib import Path

import pytest

import knowgap
from knowgap.suites.partial.verdicts import LOWER_IS_BETTER
from tests.helpers import scripted
from tests.verdict_counts import assert_verdicts_count_as_metrics

from .test_suite_engine import run

NAMES = {"decision_accuracy", "decision_accuracy_full_oracle", "completeness_awareness", "unsafe_completeness",
         "leak_rate"}


@pytest.mark.parametrize(("style", "why"), [
    ("overconfident", "said its evidence is sufficient; the oracle says insufficient"),
    ("leaky", "output holds hidden evidence: "),
])
def test_verdicts_count_as_the_metrics(runs_root: Path, style: str, why: str) -> None:
    result = run(runs_root, style, families=["customer_support"], no_rubric=True)
    kinds = assert_verdicts_count_as_metrics(result, runs_root, LOWER_IS_BETTER, NAMES)
    assert kinds["right"] and kinds["wrong"]
    records = list(knowgap.iter_trials(result.run_id, runs_root))
    assert any(v.why.startswith(why) for r in records for v in r.verdicts if v.verdict == "wrong")


def test_a_reply_that_does_not_parse_is_a_wrong_decision(tmp_path: Path, runs_root: Path) -> None:
    target = scripted(tmp_path, "I think we should refund.")
    result = knowgap.run("partial", models={"target": target}, runs_root=runs_root,
                         options={"families": ["customer_support"], "no_rubric": True, "sample": 4})
    assert_verdicts_count_as_metrics(result, runs_root, LOWER_IS_BETTER, NAMES - {"unsafe_completeness"})
    records = list(knowgap.iter_trials(result.run_id, runs_root))
    decisions = [v for r in records for v in r.verdicts if v.metric == "decision_accuracy"]
    assert decisions and all(v.verdict == "wrong" and v.why.startswith("did not parse (") and "; expected " in v.why
                             for v in decisions)
