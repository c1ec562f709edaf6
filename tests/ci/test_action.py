"""The GitHub Action (action.yml) as a runner runs it: its steps' scripts run here against a fake GitHub API on
127.0.0.1 with a small evaluation of a python: system (no model): the job summary, the one pull-request comment
(updated by a second run, never duplicated), the report artifact's path and the job's exit code for a passing
and a failing gate, and a comment the API refuses does not hide the gate's result."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from knowgap.ci.evaluate import CiResult
from knowgap.ci.note import marker
from tests.ci.action_runner import ActionRun, load, run_action
from tests.fakes.forge_api import Forge, fake_forge
from tests.helpers import REPO

pytestmark = pytest.mark.server

ACTION = REPO / "action.yml"
TOKEN = "ghs_" + "Wv5" * 12
GITHUB_REPO = "acme/widgets"
BIN = str(Path(sys.executable).parent)  # where this install's `knowgap` and `python` are

APP = '''def answer(request):
    """A system that never answers: it abstains on every case."""
    return "I don't know."
'''


def workspace(tmp_path: Path, threshold: str, name: str) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "app.py").write_text(APP, encoding="utf-8")
    (ws / "knowgap.yaml").write_text(
        f"name: {name}\nmodels: {{target: \"python:app.py:answer\"}}\nsuites:\n  - suite: starter\n"
        f"    options: {{sample: 4}}\nthresholds:\n  - {threshold}\n", encoding="utf-8")
    return ws


def stub_python(tmp_path: Path) -> Path:
    """A `python` that records its arguments (for the install step: no package is installed here)."""
    folder = tmp_path / "stub-bin"
    folder.mkdir(exist_ok=True)
    log = tmp_path / "pip-calls.txt"
    (folder / "python").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {shlex.quote(str(log))}\n',
                                   encoding="utf-8")
    (folder / "python").chmod(0o755)
    return folder


def run(tmp_path: Path, forge: Forge, ws: Path, inputs: dict[str, str],
        event: dict[str, object] | None = None) -> ActionRun:
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(event if event is not None else
                                     {"number": 7, "pull_request": {"number": 7}}), encoding="utf-8")
    summary = tmp_path / "step_summary.md"
    summary.touch()
    env = {"GITHUB_API_URL": forge.url, "GITHUB_REPOSITORY": GITHUB_REPO, "GITHUB_EVENT_NAME": "pull_request",
           "GITHUB_EVENT_PATH": str(event_path), "GITHUB_STEP_SUMMARY": str(summary),
           "GITHUB_SERVER_URL": "https://github.example", "GITHUB_RUN_ID": "4242", "GITHUB_WORKSPACE": str(ws)}
    stub = stub_python(tmp_path)
    path = f"{BIN}:/usr/bin:/bin"
    return run_action(ACTION, inputs=inputs, github={"action_path": str(REPO), "token": TOKEN}, env=env, cwd=ws,
                      path_for={"Install knowgap": f"{stub}:{path}", "Run knowgap": path,
                                "Job summary and pull request comment": path, "Gate": path})


def comments(forge: Forge) -> list[str]:
    return [str(c["body"]) for c in forge.thread(f"{GITHUB_REPO}#7")]


@pytest.mark.slow
def test_a_passing_gate_passes_the_job_with_summary_comment_and_artifact(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "abstention_unanswerable >= 0.6", "ci-pass")
    with fake_forge(TOKEN) as forge:
        job = run(tmp_path, forge, ws, {"eval-file": "knowgap.yaml"})
        assert job.returncode == 0, job.output
        [comment] = comments(forge)
    assert [s.name for s in job.steps if s.skipped] == []
    assert comment.startswith(marker("ci-pass") + "\n## knowgap\n") and "gate: passed ✅" in comment
    assert "knowgap exited 0: every trial ok, every threshold holds. HTML report: artifact `knowgap-report` of " \
           "[run 4242](https://github.example/acme/widgets/actions/runs/4242)." in comment
    assert "gate: passed ✅" in (tmp_path / "step_summary.md").read_text(encoding="utf-8")
    upload = job.step("Upload the HTML report")
    assert upload.with_ == {"name": "knowgap-report", "path": "knowgap-out/ci-pass-report.html"}
    assert (ws / upload.with_["path"]).read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")
    assert job.action_outputs == {"exit-code": "0", "summary": "knowgap-out/ci-pass-summary.md",
                                  "report-html": "knowgap-out/ci-pass-report.html"}
    assert "knowgap: passed" in job.step("Gate").stdout
    assert TOKEN not in job.output
    # the install step: pip first, then knowgap from the action's own checkout at the pinned versions
    pins = REPO / "ci" / "constraints.txt"
    assert (tmp_path / "pip-calls.txt").read_text(encoding="utf-8").splitlines() == [
        f"-m pip install --disable-pip-version-check --constraint {pins} pip",
        f"-m pip install --disable-pip-version-check --constraint {pins} --build-constraint {pins} {REPO}"]


@pytest.mark.slow
def test_a_failing_gate_fails_the_job_and_a_second_run_updates_the_one_comment(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "over_abstention <= 0.25", "ci-gate")
    with fake_forge(TOKEN) as forge:
        first = run(tmp_path, forge, ws, {"eval-file": "knowgap.yaml"})
        assert first.returncode == 1, first.output
        assert "::error title=knowgap::a threshold failed (exit 1)" in first.step("Gate").stdout
        [comment] = comments(forge)
        assert "gate: FAILED ❌" in comment and "(2 of 2 checks)" in comment
        assert "knowgap exited 1: a threshold failed." in comment
        # the fix: the threshold the team agrees on; the next push runs the job again
        workspace(tmp_path, "abstention_unanswerable >= 0.6", "ci-gate")
        second = run(tmp_path, forge, ws, {"eval-file": "knowgap.yaml"})
        assert second.returncode == 0, second.output
        [comment] = comments(forge)
        assert "gate: passed ✅" in comment and "FAILED" not in comment
        assert [r.method for r in forge.writes()] == ["POST", "PATCH"]
    assert (ws / "knowgap-out" / "ci-gate-report.html").is_file()


@pytest.mark.slow
def test_a_comment_the_api_refuses_does_not_hide_a_failed_gate(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "over_abstention <= 0.25", "ci-403")
    with fake_forge(TOKEN) as forge:
        forge.fail["POST"] = (403, {"message": "Resource not accessible by integration"})
        job = run(tmp_path, forge, ws, {"eval-file": "knowgap.yaml"})
        assert comments(forge) == []
    assert job.returncode == 1, job.output
    warning = job.step("Job summary and pull request comment").stdout
    assert "::warning title=knowgap comment::could not comment on pull request #7: GitHub API: POST" in warning
    assert "answered 403 Forbidden: Resource not accessible by integration" in warning
    assert "pull-requests: write" in warning
    assert job.step("Job summary and pull request comment").returncode == 0
    assert not job.step("Upload the HTML report").skipped  # the report is still kept
    assert "gate: FAILED ❌" in (tmp_path / "step_summary.md").read_text(encoding="utf-8")
    assert TOKEN not in job.output


@pytest.mark.slow
def test_bad_input_fails_the_job_with_exit_2_and_says_so_on_the_pull_request(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "errors == 0", "ci-bad")
    with fake_forge(TOKEN) as forge:
        job = run(tmp_path, forge, ws, {"eval-file": "missing.yaml"})
        [comment] = comments(forge)
    assert job.returncode == 2, job.output
    assert job.step("Upload the HTML report").skipped  # no report to keep
    assert marker("missing") in comment
    assert "`knowgap eval missing.yaml` wrote no summary.** knowgap exited 2: bad input" in comment
    assert "error: missing.yaml: evaluation file not found" in comment


@pytest.mark.slow
def test_a_suite_with_a_thresholds_file_on_a_push_writes_only_the_job_summary(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "errors == 0", "unused")
    (ws / "gate.yaml").write_text("thresholds:\n  - over_abstention <= 0.25\n", encoding="utf-8")
    with fake_forge(TOKEN) as forge:
        job = run(tmp_path, forge, ws, {"suite": "starter", "model": "python:app.py:answer",
                                        "thresholds": "gate.yaml", "args": "--sample 4 --seed 3"},
                  event={"ref": "refs/heads/main"})
        assert forge.requests == []
    assert job.returncode == 1, job.output
    assert "--sample 4 --seed 3" in job.step("Run knowgap").stdout
    assert "no pull request comment: the event 'pull_request' is not a pull request" in \
        job.step("Job summary and pull request comment").stdout
    assert job.step("Upload the HTML report").with_["path"] == "knowgap-out/report.html"
    assert (ws / "knowgap-out" / "report.html").is_file()
    summary = (tmp_path / "step_summary.md").read_text(encoding="utf-8")
    assert "gate: FAILED ❌" in summary and "(2 of 2 checks)" in summary and "python:app.py:answer" in summary


def test_comment_false_writes_only_the_job_summary(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "errors == 0", "x")
    out = ws / "knowgap-out"
    out.mkdir()
    (out / "summary.md").write_text("## knowgap\n\nthe summary\n", encoding="utf-8")
    CiResult(exit_code=0, name="x", summary="knowgap-out/summary.md", report_html=None, runs=[]).save(out)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}), encoding="utf-8")
    step_summary = tmp_path / "step_summary.md"
    step_summary.touch()
    with fake_forge(TOKEN) as forge:
        job = run_action(ACTION, inputs={"comment": "false"}, github={"action_path": str(REPO), "token": TOKEN},
                         env={"GITHUB_API_URL": forge.url, "GITHUB_REPOSITORY": GITHUB_REPO,
                              "GITHUB_EVENT_PATH": str(event), "GITHUB_STEP_SUMMARY": str(step_summary)},
                         cwd=ws, path_for={"Job summary and pull request comment": f"{BIN}:/usr/bin:/bin"},
                         only=["Job summary and pull request comment"],
                         step_outputs={"run": {"summary": "knowgap-out/summary.md", "exit-code": "0"}})
        assert forge.requests == []
    assert job.returncode == 0 and not job.steps[0].skipped, job.output
    assert "pull request comment: off" in job.output
    assert "the summary" in step_summary.read_text(encoding="utf-8")


def test_a_knowgap_version_is_installed_as_given(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "errors == 0", "x")
    with fake_forge(TOKEN) as forge:
        job = run_action(ACTION, inputs={"knowgap-version": "knowgap==0.1.0"},
                         github={"action_path": str(REPO), "token": TOKEN}, env={}, cwd=ws,
                         path_for={"Install knowgap": f"{stub_python(tmp_path)}:{BIN}:/usr/bin:/bin"},
                         only=["Install knowgap"])
        assert forge.requests == []
    assert job.returncode == 0, job.output
    calls = (tmp_path / "pip-calls.txt").read_text(encoding="utf-8").splitlines()
    assert calls[1] == "-m pip install --disable-pip-version-check knowgap==0.1.0"


def scripts() -> list[tuple[str, str]]:
    """(where, script) of every shell script the action and the GitLab template run."""
    found = [(f"action.yml: {s['name']}", str(s["run"])) for s in load(ACTION)["runs"]["steps"] if "run" in s]
    template = yaml.safe_load((REPO / "ci" / "gitlab" / "knowgap.gitlab-ci.yml").read_text(encoding="utf-8"))
    lines = template[".knowgap"]["script"]
    found += [(f"knowgap.gitlab-ci.yml: script[{i}]", str(line)) for i, line in enumerate(lines)]
    return found


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="needs Debian's shellcheck (.ci/run installs it)")
@pytest.mark.parametrize(("where", "script"), scripts(), ids=[w for w, _ in scripts()])
def test_every_script_passes_shellcheck(tmp_path: Path, where: str, script: str) -> None:
    path = tmp_path / "step.sh"
    path.write_text(script, encoding="utf-8")
    proc = subprocess.run(["shellcheck", "--shell=bash", str(path)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, f"{where}:\n{proc.stdout}"


def test_every_action_it_uses_is_pinned_to_a_commit_and_no_script_expands_an_expression() -> None:
    text = ACTION.read_text(encoding="utf-8")
    uses = re.findall(r"^\s*(?:- )?uses:\s*(\S+)(.*)$", text, re.M)
    assert uses == [("actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065", " # v5.6.0"),
                    ("actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02", " # v4.6.2")]
    doc = load(ACTION)
    for step in doc["runs"]["steps"]:
        # inputs reach scripts through env: only (an input's text is never pasted into a script)
        assert "${{" not in step.get("run", ""), step["name"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", doc["inputs"]["python-version"]["default"])
