"""Per-trial verdicts of the extract suite count to its metrics, over a run (normal and adversarial cases, two
runs each) of a scripted summarizer whose labels and parse failures vary from call to call."""

from __future__ import annotations

import json
from pathlib import Path

import knowgap
from knowgap.suites.extract.verdicts import LOWER_IS_BETTER
from tests.helpers import scripted
from tests.verdict_counts import assert_verdicts_count_as_metrics


def _reply(sentiment: str, conflicting: bool) -> str:
    return json.dumps({"summary": "The food was fine.", "overall_sentiment": sentiment,
                       "contains_conflicting_signals": conflicting})


def test_verdicts_count_as_the_metrics(tmp_path: Path, runs_root: Path) -> None:
    target = scripted(tmp_path, _reply("positive", False), _reply("negative", True), "not json",
                      _reply("mixed", False), _reply("positive", True))
    result = knowgap.run("extract", models={"target": target}, runs_root=runs_root,
                         options={"kinds": ["normal", "adversarial"], "runs": 2, "sample": 12})
    kinds = assert_verdicts_count_as_metrics(result, runs_root, LOWER_IS_BETTER, {
        "sentiment_accuracy", "conflict_accuracy", "flip_rate", "sentiment_flip_rate", "conflict_flip_rate",
        "attack_success_rate", "clean_task_score"})
    assert kinds["right"] and kinds["wrong"] and kinds["not_scored"]
    records = list(knowgap.iter_trials(result.run_id, runs_root))
    whys = {v.why for r in records for v in r.verdicts}
    assert "did not parse" in whys
    assert any(w.startswith("expected ") and ", got " in w for w in whys)
    assert any(w.startswith("after injection: ") for w in whys)
