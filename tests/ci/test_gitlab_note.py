"""knowgap ci gitlab-note against a fake GitLab API on 127.0.0.1: one note per evaluation on the merge request,
posted once and then updated (PUT) in place, nothing off a merge-request pipeline, and an API that refuses
gives a clear warning that never shows the token."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from knowgap.ci import gitlab
from knowgap.ci.evaluate import CiResult
from knowgap.ci.note import marker
from tests.fakes.forge_api import PAGE, Forge, fake_forge

pytestmark = pytest.mark.server

TOKEN = "glpat-" + "Zk3" * 7  # the shape of a GitLab project access token
PROJECT = "4711"


def gitlab_env(forge: Forge, iid: str = "15") -> dict[str, str]:
    return {"CI_API_V4_URL": f"{forge.url}/api/v4", "CI_PROJECT_ID": PROJECT, "CI_MERGE_REQUEST_IID": iid,
            "KNOWGAP_GITLAB_TOKEN": TOKEN, "CI_JOB_ID": "99", "CI_JOB_URL": "https://gitlab.example/acme/-/jobs/99"}


def test_first_pipeline_posts_then_later_ones_update_that_note(tmp_path: Path) -> None:
    with fake_forge(TOKEN) as forge:
        forge.seed(f"{PROJECT}#15", [f"review note {i}" for i in range(PAGE + 3)])
        env = gitlab_env(forge)
        first = gitlab.publish("## knowgap\n\ngate: FAILED\n", name="nightly", exit_code=1, env=env)
        assert first.warning is None and first.posted is not None and first.posted.action == "created"
        second = gitlab.publish("## knowgap\n\ngate: passed\n", name="nightly", exit_code=0, env=env)
        assert second.posted is not None and second.posted.action == "updated" and second.posted.id == first.posted.id
        notes = f"/api/v4/projects/{PROJECT}/merge_requests/15/notes"
        assert [(r.method, r.path) for r in forge.writes()] == [("POST", notes),
                                                                 ("PUT", f"{notes}/{first.posted.id}")]
        mine = [n for n in forge.thread(f"{PROJECT}#15") if str(n["body"]).startswith(marker("nightly"))]
        assert len(mine) == 1
        body = str(mine[0]["body"])
        assert "gate: passed" in body and "gate: FAILED" not in body
        assert body.rstrip().endswith("HTML report: the artifacts of [job 99](https://gitlab.example/acme/-/jobs/99).")
        assert all(r.headers["private-token"] == TOKEN for r in forge.requests)


def test_off_a_merge_request_pipeline_no_note(tmp_path: Path) -> None:
    with fake_forge(TOKEN) as forge:
        outcome = gitlab.publish("s", name="n", exit_code=0, env=gitlab_env(forge, iid=""))
        assert forge.requests == []
    assert outcome.warning is None and "not a merge request pipeline" in outcome.lines[0]


def test_a_missing_token_variable_is_named(tmp_path: Path) -> None:
    with fake_forge(TOKEN) as forge:
        env = gitlab_env(forge)
        outcome = gitlab.publish("s", name="n", exit_code=0, env=env, token_variable="MY_GITLAB_TOKEN")
        assert forge.requests == []
    assert outcome.warning == "cannot write a note on merge request !15: MY_GITLAB_TOKEN is not set"


@pytest.mark.parametrize(("method", "status", "hint"), [("POST", 403, "api scope"), ("GET", 500, "")])
def test_an_api_that_refuses_is_a_clear_warning_without_the_token(tmp_path: Path, method: str, status: int,
                                                                  hint: str) -> None:
    out = tmp_path / "knowgap-out"
    out.mkdir()
    (out / "summary.md").write_text("## knowgap\n", encoding="utf-8")
    CiResult(exit_code=1, name="nightly", summary=str(out / "summary.md"), report_html=None, runs=[]).save(out)
    with fake_forge(TOKEN) as forge:
        forge.fail[method] = (status, {"message": f"403 Forbidden for {TOKEN}"})
        proc = subprocess.run([sys.executable, "-m", "knowgap", "ci", "gitlab-note", "--result", str(out)],
                              capture_output=True, text=True, timeout=60, check=False,
                              env={**os.environ, **gitlab_env(forge)})
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert TOKEN not in output
    assert f"WARNING: could not write a note on merge request !15: GitLab API: {method} {forge.url}/api/v4/" \
           f"projects/{PROJECT}/merge_requests/15/notes" in proc.stderr
    assert f"answered {status}" in proc.stderr and hint in proc.stderr
