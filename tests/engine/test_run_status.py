"""Honest failure: a run whose trials errored says so (status, exit code, causes) everywhere it is shown,
and bad run settings are refused with one line before any model call."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import knowgap
from knowgap.engine.records import Manifest
from knowgap.engine.store import MANIFEST
from knowgap.models.types import ChatRequest
from knowgap.web.data import RunsView
from tests.helpers import free_port, knowgap_cli, script_file, scripted

DEAD = f"openai-compat:m@http://127.0.0.1:{free_port()}/v1"  # nothing listens there: connection refused


def _manifest(run_dir: Path) -> Manifest:
    return Manifest.model_validate_json((run_dir / MANIFEST).read_text(encoding="utf-8"))


def _only_run(runs: Path) -> Path:
    [run_dir] = [p for p in runs.iterdir() if (p / MANIFEST).exists()]
    return run_dir


def _half_answered(tmp_path: Path, runs: Path) -> str:
    """A by-hash scripted model that answers the grounded prompt's 16 requests and no plain one."""
    first = knowgap.run("starter", models={"target": scripted(tmp_path, "probe")}, runs_root=tmp_path / "probe-runs")
    rows = []
    for record in knowgap.iter_trials(first.run_id, tmp_path / "probe-runs"):
        if record.config_id == "prompt=grounded":
            request: ChatRequest = record.calls[0].request
            rows.append({"request_hash": request.fingerprint(), "response": "I don't know."})
    return scripted(tmp_path, *rows, name="half.jsonl")


def test_every_trial_errored_is_a_failed_run_exit_3_with_the_cause(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    proc = knowgap_cli("run", "starter", "--model", DEAD, "--runs-dir", str(runs), "-q", "--max-retries", "0",
                       cwd=tmp_path, timeout=300)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    # the causes, grouped: one dead server is one cause for all 32 trials
    assert re.search(r"^\s*32 trials: .*127\.0\.0\.1.*", proc.stderr, re.M), proc.stderr
    assert "32 of 32 trials errored" in proc.stderr
    assert "status: failed" in proc.stdout
    run_dir = _only_run(runs)
    manifest = _manifest(run_dir)
    assert manifest.status == "failed"
    assert (manifest.trials_ok, manifest.trials_error) == (0, 32)
    assert len(manifest.error_causes) == 1 and manifest.error_causes[0].trials == 32

    listed = knowgap_cli("runs", "--runs-dir", str(runs), cwd=tmp_path)
    assert listed.returncode == 0 and "failed" in listed.stdout
    shown = knowgap_cli("show", run_dir.name, "--runs-dir", str(runs), cwd=tmp_path)
    assert "status failed (32 of 32 trials errored)" in shown.stdout
    assert "32 trials:" in shown.stdout
    report_md = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "status: failed (32 of 32 trials errored)" in report_md and "32 trials:" in report_md
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    banner = re.search(r'<div class="banner" role="alert" id="run-status">(.*?)</div>', html)
    assert banner and "<b>failed</b>: 32 of 32 trials errored" in banner.group(1)
    assert html.index('id="run-status"') < html.index("<h3>Models</h3>"), "the banner comes first"
    view = RunsView(runs)
    [row] = view.runs()
    assert row["status"] == "failed" and row["trials_error"] == 32
    page = view.run(run_dir.name)
    assert page["status_text"].startswith("failed") and page["error_lines"][1].strip().startswith("32 trials:")


def test_some_trials_errored_is_finished_with_errors(tmp_path: Path, runs_root: Path) -> None:
    half = _half_answered(tmp_path, runs_root)
    result = knowgap.run("starter", models={"target": half}, runs_root=runs_root)  # no raise
    assert result.status == "finished_with_errors" and not result.ok
    assert (result.manifest.trials_ok, result.manifest.trials_error) == (16, 16)
    [cause] = result.error_causes
    assert cause.trials == 16 and "no scripted response for request" in cause.message
    assert _manifest(result.path).status == "finished_with_errors"

    proc = knowgap_cli("run", "starter", "--model", half, "--runs-dir", str(runs_root), "-q",
                       cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert "16 trials: " in proc.stderr and "status: finished_with_errors (16 of 32" in proc.stdout


def test_a_clean_run_is_finished_and_exits_0(tmp_path: Path, runs_root: Path) -> None:
    spec = scripted(tmp_path, "I don't know.")
    result = knowgap.run("starter", models={"target": spec}, runs_root=runs_root)
    assert result.ok and result.status == "finished" and result.error_causes == []
    proc = knowgap_cli("run", "starter", "--model", spec, "--runs-dir", str(runs_root), "-q",
                       cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "errored" not in proc.stderr
    html = (Path(proc.stdout.split("run stored in ")[1].split()[0]) / "report.html").read_text(encoding="utf-8")
    assert 'id="run-status"' not in html


def test_old_manifest_statuses_still_read(tmp_path: Path, runs_root: Path) -> None:
    result = knowgap.run("starter", models={"target": scripted(tmp_path, "x")}, runs_root=runs_root)
    raw = json.loads((result.path / MANIFEST).read_text(encoding="utf-8"))
    for old in ("running", "finished", "interrupted", "failed"):
        raw["status"] = old
        raw.pop("error_causes", None)
        assert Manifest.model_validate(raw).status == old


# item 4: bad settings ---------------------------------------------------------------------------


@pytest.mark.parametrize(("flags", "expected"), [
    (["--timeout", "-1"], "--timeout"),
    (["--timeout", "0"], "--timeout"),
    (["--max-retries", "-3"], "--max-retries"),
])
def test_bad_run_settings_are_one_line_errors(tmp_path: Path, flags: list[str], expected: str) -> None:
    proc = knowgap_cli("run", "starter", "--model", DEAD, "--runs-dir", str(tmp_path / "runs"), "-q", *flags,
                       cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and expected in lines[0], proc.stderr
    assert not (tmp_path / "runs").exists(), "no run is started"


def test_bad_suite_option_is_a_one_line_error(tmp_path: Path) -> None:
    proc = knowgap_cli("run", "partial", "--model", DEAD, "--budget", "-5", "--runs-dir", str(tmp_path / "runs"),
                       "-q", cwd=tmp_path)
    assert proc.returncode == 2 and "budget" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"timeout_s": -1}, "timeout_s"), ({"max_retries": -3}, "max_retries"), ({"repeats": 0}, "repeats"),
    ({"concurrency": 0}, "concurrency"), ({"options": {"sample": 0}}, "sample"),
])
def test_python_api_rejects_bad_settings(runs_root: Path, kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(knowgap.KnowgapError, match=field):
        knowgap.run("starter", models={"target": DEAD}, runs_root=runs_root, **kwargs)  # type: ignore[arg-type]
    assert not runs_root.exists()


def test_sample_larger_than_the_suite_says_it_runs_all(tmp_path: Path) -> None:
    proc = knowgap_cli("run", "starter", "--model", scripted(tmp_path, "x"), "--sample", "1000",
                       "--runs-dir", str(tmp_path / "runs"), "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "--sample 1000 is more than the 16 cases: running all 16" in proc.stderr
    assert "of 32; model calls" in proc.stdout


def test_eval_exits_3_when_a_trial_errored_even_if_a_threshold_also_fails(tmp_path: Path) -> None:
    script_file(tmp_path / "none.jsonl", {"request_hash": "0" * 64, "response": "never"})
    (tmp_path / "eval.yaml").write_text(
        "name: broken\nmodels: {target: \"scripted:none.jsonl\"}\nsuites:\n  - suite: starter\n"
        "    options: {sample: 2}\nthresholds:\n  - errors == 0\n", encoding="utf-8")
    proc = knowgap_cli("eval", str(tmp_path / "eval.yaml"), "--runs-dir", str(tmp_path / "runs"), "-q",
                       cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "4 of 4 trials errored" in proc.stderr and "4 trials: " in proc.stderr
    assert "gate failed" in proc.stdout
