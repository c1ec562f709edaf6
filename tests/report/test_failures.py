"""``knowgap show RUN --failed`` (and ``knowgap.failures``): the wrong per-metric verdicts and errored trials of a
real stored run, filtered by metric and limited; a run recorded before verdicts derives them and says so; a run
whose suite is not installed lists its errored trials only."""

from __future__ import annotations

import json
from pathlib import Path

import knowgap
from knowgap.engine.records import Manifest, TrialRecord
from tests.helpers import knowgap_cli, scripted
from tests.labels.starter_runs import errored_run


def _declining_run(tmp_path: Path, runs_root: Path) -> knowgap.RunResult:
    """32 starter trials answered "I don't know.": the 16 answerable ones fail accuracy and over_abstention."""
    return knowgap.run("starter", models={"target": scripted(tmp_path, "I don't know.")}, runs_root=runs_root)


def test_show_failed_lists_wrong_verdicts_by_metric(tmp_path: Path, runs_root: Path) -> None:
    run = _declining_run(tmp_path, runs_root)
    done = knowgap_cli("show", run.run_id, "--runs-dir", str(runs_root), "--failed", "--limit", "3")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{run.run_id}: 32 failures in 16 trials (accuracy 16, over_abstention 16); the first 3 trials"
    assert lines[1].startswith("- ") and lines[2].startswith("  input: ") and lines[3] == "  answer: \"I don't know.\""
    assert lines[4] == "  accuracy: declined an answerable question" and lines[5].startswith("  over_abstention: ")
    assert len([x for x in lines if x.startswith("- ")]) == 3  # --limit counts trials, each with all its failures
    done = knowgap_cli("show", run.run_id, "--runs-dir", str(runs_root), "--metric", "over_abstention", "--json")
    found = json.loads(done.stdout)
    assert found["total"] == 16 and len(found["failures"]) == 16 and found["source"] == "stored"
    assert {f["metric"] for f in found["failures"]} == {"over_abstention"}
    answerable = {r.trial_id for r in knowgap.iter_trials(run.run_id, runs_root) if r.scores["answerable"]}
    assert {f["trial_id"] for f in found["failures"]} == answerable
    done = knowgap_cli("show", run.run_id, "--runs-dir", str(runs_root), "--failed", "--metric", "flip_rate")
    assert done.returncode != 0 and "suite 'starter' has no metric 'flip_rate'" in done.stderr
    assert "Traceback" not in done.stderr
    assert knowgap.failures(run.run_id, runs_root, metric="abstention_unanswerable").total == 0


def test_a_run_from_before_verdicts_derives_them(tmp_path: Path, runs_root: Path) -> None:
    run = _declining_run(tmp_path, runs_root)
    trials = run.path / "trials.jsonl"
    rows = [json.loads(line) for line in trials.read_text(encoding="utf-8").splitlines()]
    trials.write_text("".join(json.dumps({k: v for k, v in row.items() if k != "verdicts"}) + "\n" for row in rows),
                      encoding="utf-8")
    assert not any(TrialRecord.model_validate(row).verdicts for row in (json.loads(x) for x in trials.open()))
    found = knowgap.failures(run.run_id, runs_root)
    assert found.source == "derived" and "predates per-trial verdicts" in found.note
    assert found.by_metric == {"accuracy": 16, "over_abstention": 16}
    done = knowgap_cli("show", run.run_id, "--runs-dir", str(runs_root), "--failed")
    assert done.stdout.startswith("this run predates per-trial verdicts: derived now from its stored scores")


def test_errored_trials_are_listed_and_an_unknown_suite_says_why(tmp_path: Path, runs_root: Path) -> None:
    run = errored_run(runs_root)
    found = knowgap.failures(run.run_id, runs_root)
    assert found.by_metric == {"error": 6} and all("connection refused" in f.why for f in found.failures)
    manifest = run.path / "manifest.json"
    data = Manifest.model_validate_json(manifest.read_text(encoding="utf-8"))
    data.config.suite = "gone-suite"
    manifest.write_text(data.model_dump_json(), encoding="utf-8")
    found = knowgap.failures(run.run_id, runs_root, metric="error", limit=1)
    assert found.source == "none" and "suite 'gone-suite' is not installed" in found.note
    assert found.total == 6 and found.trials == 6 and len(found.failures) == 1
