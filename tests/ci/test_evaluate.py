"""knowgap ci run through the real CLI: it exits with knowgap's own exit code (3 when trials errored, 2 on bad
input), always leaves a summary and knowgap-ci.json, and writes the GitHub step outputs."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from knowgap.ci.evaluate import CiResult
from tests.ci.test_action import workspace

FAILING_APP = '''def answer(request):
    raise ConnectionError("the retrieval service is down")
'''


def ci_run(ws: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "knowgap", "ci", "run", *args], cwd=ws, capture_output=True,
                          text=True, timeout=300, check=False, env={**os.environ, **(env or {})})


@pytest.mark.slow
def test_trials_that_errored_exit_3_with_the_evaluation_summary_and_step_outputs(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "abstention_unanswerable >= 0.6", "broken")
    (ws / "app.py").write_text(FAILING_APP, encoding="utf-8")
    outputs = tmp_path / "github_output"
    proc = ci_run(ws, "--eval", "knowgap.yaml", env={"GITHUB_OUTPUT": str(outputs)})
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "the retrieval service is down" in proc.stdout  # knowgap's own causes, in the log
    result = CiResult.load(ws / "knowgap-out")
    assert result.exit_code == 3 and result.name == "broken"
    assert result.summary == "knowgap-out/broken-summary.md" and result.report_html == "knowgap-out/broken-report.html"
    assert "8 of 8 trials errored" in (ws / result.summary).read_text(encoding="utf-8")  # knowgap's own summary
    assert outputs.read_text(encoding="utf-8").splitlines() == [
        "exit-code=3", "name=broken", "summary=knowgap-out/broken-summary.md",
        "report-html=knowgap-out/broken-report.html"]


@pytest.mark.slow
def test_a_thresholds_file_that_names_no_metric_exits_2_and_says_so_in_the_summary(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "errors == 0", "unused")
    (ws / "gate.yaml").write_text("thresholds:\n  - over_abstension <= 0.25\n", encoding="utf-8")
    proc = ci_run(ws, "--suite", "starter", "--model", "python:app.py:answer", "--thresholds", "gate.yaml",
                  "--args", "--sample 4")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    summary = (ws / "knowgap-out" / "summary.md").read_text(encoding="utf-8")
    assert "**`knowgap gate " in summary and "wrote no summary.** knowgap exited 2: bad input" in summary
    assert "over_abstension" in summary and "over_abstention" in summary  # knowgap's did-you-mean
    assert json.loads((ws / "knowgap-out" / "knowgap-ci.json").read_text(encoding="utf-8"))["report_html"] is None


def test_an_evaluation_without_a_markdown_summary_gets_one_saying_why(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "abstention_unanswerable >= 0.6", "quiet")
    with (ws / "knowgap.yaml").open("a", encoding="utf-8") as f:
        f.write("report: {markdown: null}\n")
    proc = ci_run(ws, "--eval", "knowgap.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = (ws / "knowgap-out" / "summary.md").read_text(encoding="utf-8")
    assert "**`knowgap eval knowgap.yaml` wrote no summary (its report.markdown is off).** knowgap exited 0" in summary
    assert "gate passed" in summary  # knowgap's own last lines
    assert CiResult.load(ws / "knowgap-out").report_html == "knowgap-out/quiet-report.html"


SLOW_APP = '''import time


def answer(request):
    time.sleep(60)
    return "I don't know."
'''


@pytest.mark.slow
def test_a_cancelled_job_stops_the_run_and_exits_130_even_where_sigint_is_ignored(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "abstention_unanswerable >= 0.6", "cancelled")
    (ws / "app.py").write_text(SLOW_APP, encoding="utf-8")
    # a job started in the background by a non-interactive shell ignores SIGINT, and so do its children
    proc = subprocess.Popen([sys.executable, "-m", "knowgap", "ci", "run", "--eval", "knowgap.yaml"], cwd=ws,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        deadline = time.monotonic() + 60
        while not list((ws / "runs").glob("*/run.lock")) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert list((ws / "runs").glob("*/run.lock")), "the run never started"
        time.sleep(1.0)  # the calls are in flight (each sleeps 60 s)
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)  # what a runner sends a cancelled job
        output, _ = proc.communicate(timeout=45)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # whatever is left of the job, knowgap eval included
        proc.wait()
    assert proc.returncode == 130, output
    assert time.monotonic() - sent < 45
    result = CiResult.load(ws / "knowgap-out")
    assert result.exit_code == 130 and result.report_html is None
    summary = (ws / result.summary).read_text(encoding="utf-8")
    assert "knowgap exited 130: interrupted: resume the run." in summary
    assert "continue with knowgap resume starter-" in summary  # knowgap's own last words, kept
    [run] = result.runs
    assert json.loads((ws / run / "manifest.json").read_text(encoding="utf-8"))["status"] == "interrupted"


@pytest.mark.parametrize("args", [[], ["--eval", "a.yaml", "--suite", "starter"], ["--eval", "a.yaml", "--model", "m"],
                                  ["--eval", "a.yaml", "--args", "--sample 'unclosed"]])
def test_a_wrong_combination_is_refused_before_anything_runs(tmp_path: Path, args: list[str]) -> None:
    proc = ci_run(tmp_path, *args)
    assert proc.returncode == 2
    assert "error:" in proc.stderr and not (tmp_path / "runs").exists()
