"""Per-trial verdicts: the runner stores the suite's verdicts in each trial record, counting them gives the
metrics' k of n, a trial's pass/fail (``Suite.trial_failed``) follows them, older runs derive them, and a bug in a
suite's verdicts is recorded like a bug in its trial."""

from __future__ import annotations

from pathlib import Path

import pytest

import knowgap
from knowgap.engine.records import TrialRecord, Verdict
from knowgap.engine.verdicts import failed
from knowgap.report import load_run_data
from knowgap.suites import registry
from knowgap.suites.starter import StarterSuite
from knowgap.suites.starter.verdicts import LOWER_IS_BETTER
from tests.helpers import scripted
from tests.verdict_counts import assert_verdicts_count_as_metrics

DECLINES = "I don't know."


def test_starter_verdicts_count_as_the_metrics(tmp_path: Path, runs_root: Path) -> None:
    target = scripted(tmp_path, DECLINES, "The answer is 42.", "It opens at 9.")  # 3: not in step with the cases
    result = knowgap.run("starter", models={"target": target}, runs_root=runs_root, use_cache=False)
    kinds = assert_verdicts_count_as_metrics(result, runs_root, LOWER_IS_BETTER,
                                             {"accuracy", "over_abstention", "abstention_unanswerable"})
    assert kinds["right"] and kinds["wrong"], kinds


def test_a_model_that_always_declines(tmp_path: Path, runs_root: Path) -> None:
    result = knowgap.run("starter", models={"target": scripted(tmp_path, DECLINES)}, runs_root=runs_root)
    records = list(knowgap.iter_trials(result.run_id, runs_root))
    answerable = [r for r in records if r.scores["answerable"]]
    assert len(answerable) == 16 and len(records) == 32
    for r in answerable:
        assert [(v.metric, v.verdict, v.why) for v in r.verdicts] == [
            ("accuracy", "wrong", "declined an answerable question"),
            ("over_abstention", "wrong", "declined an answerable question")]
    for r in records:
        if not r.scores["answerable"]:
            assert [(v.metric, v.verdict) for v in r.verdicts] == [("abstention_unanswerable", "right")]
    run = load_run_data(result.path)
    assert [r.trial_id for r in records if run.trial_failed(r)] == [r.trial_id for r in answerable]


def test_trial_failed_follows_the_stored_verdicts_and_derives_them_for_older_runs() -> None:
    suite = StarterSuite(StarterSuite.Options())
    scores = {"answerable": True, "abstained": False, "correct": True}
    older = TrialRecord(trial_id="t|c|r0", case_id="t", config_id="c", scores=scores)  # recorded before verdicts
    assert suite.trial_verdicts(older) == suite.verdicts(older) and suite.trial_failed(older) is False
    stored = older.model_copy(update={"verdicts": [Verdict(metric="accuracy", verdict="wrong", why="a person said")]})
    assert suite.trial_failed(stored) is True  # what the record says, not a recomputation
    assert suite.trial_failed(older.model_copy(update={"status": "error"})) is True
    assert failed([Verdict(metric="x", verdict="not_scored", why="judge reply did not parse")]) is None
    assert failed([]) is None


def test_a_bug_in_a_suites_verdicts_is_an_errored_trial(tmp_path: Path, runs_root: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_SUITES", dict(registry._SUITES))  # registered for this test only

    @knowgap.register
    class Buggy(StarterSuite):
        name = "starter-buggy-verdicts"

        def verdicts(self, record: TrialRecord) -> list[Verdict]:
            raise KeyError("answerable")

    result = knowgap.run("starter-buggy-verdicts", models={"target": scripted(tmp_path, DECLINES)},
                         runs_root=runs_root, options={"sample": 2})
    records = list(knowgap.iter_trials(result.run_id, runs_root))
    assert {r.status for r in records} == {"error"}
    assert all(r.error and r.error.startswith("KeyError in suite verdicts (") for r in records)
