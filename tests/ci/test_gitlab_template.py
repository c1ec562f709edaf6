"""The GitLab CI template (ci/gitlab/knowgap.gitlab-ci.yml) as a runner runs it: its script lines run here under
``bash -eo pipefail`` (GitLab's shell) against a fake GitLab API on 127.0.0.1 with a small evaluation of a
python: system: one merge-request note, updated by the next pipeline, the report in the artifact folder, and the
job's exit code for a failing and a passing gate."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from knowgap.ci.note import marker
from tests.ci.test_action import stub_python, workspace
from tests.fakes.forge_api import Forge, fake_forge
from tests.helpers import REPO

pytestmark = pytest.mark.server

TEMPLATE = REPO / "ci" / "gitlab" / "knowgap.gitlab-ci.yml"
TOKEN = "glpat-" + "Hn4" * 7
PROJECT = "4711"
BIN = str(Path(sys.executable).parent)


def job() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(TEMPLATE.read_text(encoding="utf-8"))
    job: dict[str, Any] = doc[".knowgap"]
    return job


def run_script(ws: Path, lines: list[str], variables: dict[str, str], path: str,
               forge: Forge | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **{k: str(v) for k, v in job()["variables"].items()}, **variables, "PATH": path}
    if forge is not None:
        env.update({"CI_API_V4_URL": f"{forge.url}/api/v4", "CI_PROJECT_ID": PROJECT, "CI_MERGE_REQUEST_IID": "15",
                    "CI_JOB_ID": "99", "CI_JOB_URL": "https://gitlab.example/acme/-/jobs/99",
                    "KNOWGAP_GITLAB_TOKEN": TOKEN})
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", "\n".join(lines)], cwd=ws,
                          env=env, capture_output=True, text=True, timeout=300, check=False)


def notes(forge: Forge) -> list[str]:
    return [str(n["body"]) for n in forge.thread(f"{PROJECT}#15")]


@pytest.mark.slow
def test_a_failing_then_passing_gate_keeps_one_note_and_the_exit_codes(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "over_abstention <= 0.25", "mr-gate")
    run_lines = job()["script"][1:]
    with fake_forge(TOKEN) as forge:
        first = run_script(ws, run_lines, {"KNOWGAP_EVAL_FILE": "knowgap.yaml"}, f"{BIN}:/usr/bin:/bin", forge)
        assert first.returncode == 1, first.stdout + first.stderr
        [note] = notes(forge)
        assert note.startswith(marker("mr-gate")) and "gate: FAILED ❌" in note
        assert "HTML report: the artifacts of [job 99](https://gitlab.example/acme/-/jobs/99)." in note
        workspace(tmp_path, "abstention_unanswerable >= 0.6", "mr-gate")
        second = run_script(ws, run_lines, {"KNOWGAP_EVAL_FILE": "knowgap.yaml"}, f"{BIN}:/usr/bin:/bin", forge)
        assert second.returncode == 0, second.stdout + second.stderr
        [note] = notes(forge)
        assert "gate: passed ✅" in note and "FAILED" not in note
        assert [r.method for r in forge.writes()] == ["POST", "PUT"]
    assert TOKEN not in first.stdout + first.stderr + second.stdout + second.stderr
    [folder] = job()["artifacts"]["paths"]
    assert (ws / folder / "mr-gate-report.html").is_file()
    assert "knowgap: exit 1" in first.stdout and "knowgap: exit 0" in second.stdout


@pytest.mark.slow
def test_a_note_the_api_refuses_does_not_hide_a_failed_gate(tmp_path: Path) -> None:
    ws = workspace(tmp_path, "over_abstention <= 0.25", "mr-403")
    with fake_forge(TOKEN) as forge:
        forge.fail["POST"] = (403, {"message": "403 Forbidden"})
        proc = run_script(ws, job()["script"][1:], {"KNOWGAP_EVAL_FILE": "knowgap.yaml"}, f"{BIN}:/usr/bin:/bin",
                          forge)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "WARNING: could not write a note on merge request !15: GitLab API: POST" in proc.stderr
    assert "answered 403" in proc.stderr and TOKEN not in proc.stdout + proc.stderr


def test_the_install_line_needs_a_pinned_requirement_and_passes_the_constraints(tmp_path: Path) -> None:
    install = job()["script"][:1]
    path = f"{stub_python(tmp_path)}:{BIN}:/usr/bin:/bin"
    missing = run_script(tmp_path, install, {}, path)
    assert missing.returncode == 2
    assert "set KNOWGAP_REQUIREMENT to a pinned knowgap" in missing.stderr
    assert not (tmp_path / "pip-calls.txt").exists()
    ok = run_script(tmp_path, install, {"KNOWGAP_REQUIREMENT": "knowgap==0.1.0",
                                        "KNOWGAP_CONSTRAINTS": "ci/constraints.txt"}, path)
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "pip-calls.txt").read_text(encoding="utf-8").splitlines() == [
        "-m pip install --disable-pip-version-check --root-user-action=ignore --constraint ci/constraints.txt "
        "knowgap==0.1.0"]


def test_the_image_is_an_exact_python_release() -> None:
    assert re.fullmatch(r"python:\d+\.\d+\.\d+-slim-\w+", job()["image"])
    assert job()["artifacts"]["when"] == "always"  # the report is kept when the gate fails
