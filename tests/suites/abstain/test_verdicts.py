"""Per-trial verdicts of the abstain suite count to its metrics, over a run whose answers abstain, answer with an
invented citation, and do not parse."""

from __future__ import annotations

from pathlib import Path

import knowgap
from knowgap.suites.abstain.verdicts import LOWER_IS_BETTER
from tests.helpers import scripted
from tests.verdict_counts import assert_verdicts_count_as_metrics

from .test_suite_scripted import ABSTAIN


def test_verdicts_count_as_the_metrics(tmp_path: Path, small_kb: Path, runs_root: Path) -> None:
    wrong = '{"response": "The warranty lasts 27 months.", "citation": 9}'
    target = scripted(tmp_path, ABSTAIN, wrong, "Sure thing", wrong)
    result = knowgap.run("abstain", models={"target": target}, runs_root=runs_root,
                         options={"kb": str(small_kb), "retrieval": ["direct", "rag"], "prompts": ["basic"]})
    kinds = assert_verdicts_count_as_metrics(result, runs_root, LOWER_IS_BETTER, {
        "abstention_rate", "factuality_answered", "invented_citation_rate", "parse_failure_rate"})
    assert kinds["right"] and kinds["wrong"]
    records = list(knowgap.iter_trials(result.run_id, runs_root))
    invented = next(v for r in records for v in r.verdicts if v.metric == "invented_citation_rate"
                    and v.verdict == "wrong")
    assert invented.why == "cited fact 9, which is not in the context"
    answered = next(v for r in records for v in r.verdicts if v.metric == "abstention_rate" and v.verdict == "wrong")
    assert answered.why == "answered although the answering fact was removed from the context"
