"""knowgap ci github-comment against a fake GitHub API on 127.0.0.1: one comment per evaluation, posted once and
then updated in place (found by its marker across pages), the job summary always, no comment off a pull request,
and an API that refuses gives a clear warning that never shows the token."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from knowgap.ci import github
from knowgap.ci.evaluate import CiResult
from knowgap.ci.note import marker
from tests.fakes.forge_api import PAGE, Forge, fake_forge

pytestmark = pytest.mark.server

TOKEN = "ghs_" + "Q7x" * 12  # the shape of a GitHub Actions token
REPO = "acme/widgets"


def github_env(tmp_path: Path, forge: Forge, event: dict[str, object], name: str = "pull_request") -> dict[str, str]:
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(event), encoding="utf-8")
    summary = tmp_path / "step_summary.md"
    summary.touch()
    return {"GITHUB_API_URL": forge.url, "GITHUB_REPOSITORY": REPO, "GITHUB_EVENT_NAME": name,
            "GITHUB_EVENT_PATH": str(event_path), "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_TOKEN": TOKEN,
            "GITHUB_SERVER_URL": "https://github.example", "GITHUB_RUN_ID": "4242"}


def pr_event(number: int = 7) -> dict[str, object]:
    return {"action": "synchronize", "number": number, "pull_request": {"number": number, "head": {"sha": "abc"}}}


def ours(forge: Forge, name: str, number: int = 7) -> list[dict[str, object]]:
    return [c for c in forge.thread(f"{REPO}#{number}") if str(c["body"]).startswith(marker(name))]


def test_first_run_posts_then_later_runs_update_that_comment(tmp_path: Path) -> None:
    with fake_forge(TOKEN) as forge:
        # a busy pull request: our comment lands on the third page of the list
        forge.seed(f"{REPO}#7", [f"review comment {i}" for i in range(2 * PAGE + 5)])
        env = github_env(tmp_path, forge, pr_event())
        first = github.publish("## knowgap\n\ngate: FAILED\n", name="nightly", exit_code=1, env=env,
                               artifact="knowgap-report")
        assert first.warning is None and first.posted is not None and first.posted.action == "created"
        for round_ in (2, 3):
            later = github.publish(f"## knowgap\n\nround {round_}: passed\n", name="nightly", exit_code=0, env=env)
            assert later.posted is not None and later.posted.action == "updated"
            assert later.posted.id == first.posted.id
        writes = [(r.method, r.path) for r in forge.writes()]
        assert writes == [("POST", f"/repos/{REPO}/issues/7/comments"),
                          ("PATCH", f"/repos/{REPO}/issues/comments/{first.posted.id}"),
                          ("PATCH", f"/repos/{REPO}/issues/comments/{first.posted.id}")]
        [comment] = ours(forge, "nightly")
        assert "round 3: passed" in str(comment["body"]) and "gate: FAILED" not in str(comment["body"])
        assert str(comment["body"]).rstrip().endswith("knowgap exited 0: every trial ok, every threshold holds. "
                                                      "Details: [run 4242](https://github.example/acme/widgets/"
                                                      "actions/runs/4242).")
        assert len(forge.thread(f"{REPO}#7")) == 2 * PAGE + 6
        # every run read all three pages to find it (the Link header's rel="next"); the one that created it read
        # them once more, to catch a run that raced it
        assert sum(1 for r in forge.requests if r.method == "GET") == 3 * 4
        assert all(r.headers["authorization"] == f"Bearer {TOKEN}" for r in forge.requests)
    # the job summary got each run's summary
    text = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert text.count("## knowgap") == 3


def test_a_quote_of_the_comment_is_not_taken_for_it_and_names_keep_apart(tmp_path: Path) -> None:
    with fake_forge(TOKEN) as forge:
        quote = f"> {marker('nightly')}\n> gate: FAILED\n\nwhy did this fail?"
        forge.seed(f"{REPO}#7", [quote])
        env = github_env(tmp_path, forge, pr_event())
        github.publish("nightly one", name="nightly", exit_code=0, env=env)
        github.publish("smoke one", name="smoke", exit_code=0, env=env)
        github.publish("nightly two", name="nightly", exit_code=1, env=env)
        bodies = [str(c["body"]) for c in forge.thread(f"{REPO}#7")]
        assert bodies[0] == quote  # someone's quote is never overwritten
        assert len(bodies) == 3
        assert "nightly two" in bodies[1] and "smoke one" in bodies[2]
        assert [r.method for r in forge.writes()] == ["POST", "POST", "PATCH"]


def test_two_runs_that_race_leave_one_comment(tmp_path: Path) -> None:
    with fake_forge(TOKEN) as forge:
        env = github_env(tmp_path, forge, pr_event())
        # the other run posted its comment after this run listed the comments and before it posted its own
        forge.before_post.append(f"{marker('nightly')}\nthe other run's summary")
        outcome = github.publish("this run's summary", name="nightly", exit_code=0, env=env)
        [comment] = ours(forge, "nightly")
        assert "this run's summary" in str(comment["body"])
        assert outcome.posted is not None and outcome.posted.id == comment["id"]
        assert [r.method for r in forge.writes()] == ["POST", "DELETE", "PATCH"]


def test_the_token_never_follows_a_next_page_link_to_another_host(tmp_path: Path) -> None:
    with fake_forge(TOKEN) as forge, fake_forge(TOKEN) as elsewhere:
        forge.seed(f"{REPO}#7", [f"comment {i}" for i in range(PAGE + 1)])
        forge.next_base = elsewhere.url
        outcome = github.publish("s", name="n", exit_code=0, env=github_env(tmp_path, forge, pr_event()))
        assert elsewhere.requests == [] and forge.writes() == []
    assert outcome.warning is not None and f"is outside {forge.url}: {elsewhere.url}/repos/" in outcome.warning


def test_an_issue_comment_event_on_a_pull_request_comments_there(tmp_path: Path) -> None:
    with fake_forge(TOKEN) as forge:
        env = github_env(tmp_path, forge, {"issue": {"number": 12, "pull_request": {"url": "x"}}}, "issue_comment")
        outcome = github.publish("hello", name="n", exit_code=0, env=env)
        assert outcome.posted is not None and len(ours(forge, "n", 12)) == 1


@pytest.mark.parametrize("event_name", ["push", "schedule"])
def test_off_a_pull_request_only_the_job_summary_is_written(tmp_path: Path, event_name: str) -> None:
    with fake_forge(TOKEN) as forge:
        env = github_env(tmp_path, forge, {"ref": "refs/heads/main", "commits": []}, event_name)
        outcome = github.publish("## knowgap\n\nthe summary\n", name="nightly", exit_code=0, env=env)
        assert forge.requests == []
    assert outcome.warning is None and outcome.posted is None
    assert f"no pull request comment: the event '{event_name}' is not a pull request" in outcome.lines
    assert "the summary" in Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")


def test_comment_off_writes_only_the_job_summary(tmp_path: Path) -> None:
    with fake_forge(TOKEN) as forge:
        env = github_env(tmp_path, forge, pr_event())
        outcome = github.publish("the summary", name="nightly", exit_code=0, env=env, comment=False)
        assert forge.requests == [] and "pull request comment: off" in outcome.lines
    assert "the summary" in Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")


def test_a_long_summary_is_cut_to_fit_a_comment(tmp_path: Path) -> None:
    summary = "## knowgap\n\n" + "".join(f"| row {i} | {'x' * 80} |\n" for i in range(3000))  # ~270,000 chars
    with fake_forge(TOKEN) as forge:
        env = github_env(tmp_path, forge, pr_event())
        github.publish(summary, name="big", exit_code=3, env=env)
        [comment] = ours(forge, "big")
    body = str(comment["body"])
    assert len(body) <= github.COMMENT_LIMIT < len(summary)
    assert "the summary was cut here to fit the 65,536-character limit" in body
    assert "knowgap exited 3: some trials errored" in body.splitlines()[-1]
    assert all(line.endswith("|") for line in body.splitlines() if line.startswith("| row"))  # cut at a line


def test_the_marker_cannot_close_the_html_comment_early() -> None:
    m = marker("x --> <script>alert(1)</script>\nnext")
    assert m.startswith("<!-- knowgap:") and m.endswith(" -->")
    assert "-->" not in m[:-3] and "<" not in m[4:] and "\n" not in m


def run_cli(tmp_path: Path, env: dict[str, str], exit_code: int = 1) -> subprocess.CompletedProcess[str]:
    out = tmp_path / "knowgap-out"
    out.mkdir(exist_ok=True)
    (out / "summary.md").write_text("## knowgap\n\n### gate: FAILED ❌\n", encoding="utf-8")
    CiResult(exit_code=exit_code, name="nightly", summary=str(out / "summary.md"),
             report_html=None, runs=[]).save(out)
    return subprocess.run([sys.executable, "-m", "knowgap", "ci", "github-comment", "--result", str(out)],
                          capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, **env})


@pytest.mark.parametrize(("method", "status", "hint"), [
    ("POST", 403, "permissions: pull-requests: write"),
    ("GET", 500, ""),
])
def test_an_api_that_refuses_is_a_clear_warning_without_the_token(tmp_path: Path, method: str, status: int,
                                                                  hint: str) -> None:
    with fake_forge(TOKEN) as forge:
        # a server that quotes the credential back in its error
        forge.fail[method] = (status, {"message": f"Resource not accessible by integration (token {TOKEN})"})
        proc = run_cli(tmp_path, github_env(tmp_path, forge, pr_event()))
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output  # the job's result stays the gate's (the action's last step)
    assert TOKEN not in output
    [warning] = [line for line in proc.stdout.splitlines() if line.startswith("::warning")]
    assert f"could not comment on pull request #7: GitHub API: {method} {forge.url}/repos/{REPO}/issues/7/" \
           f"comments" in warning
    assert f"answered {status}" in warning and "Resource not accessible by integration (token ***)" in warning
    assert hint in warning
    assert "### gate: FAILED" in Path(tmp_path / "step_summary.md").read_text(encoding="utf-8")


def test_a_missing_token_is_a_warning_and_no_request(tmp_path: Path) -> None:
    with fake_forge(TOKEN) as forge:
        env = github_env(tmp_path, forge, pr_event())
        del env["GITHUB_TOKEN"]
        outcome = github.publish("s", name="n", exit_code=0, env=env)
        assert forge.requests == []
    assert outcome.warning == "cannot comment on pull request #7: GITHUB_TOKEN is not set"


def test_a_wrong_token_is_refused_with_a_hint(tmp_path: Path) -> None:
    with fake_forge(TOKEN) as forge:
        env = {**github_env(tmp_path, forge, pr_event()), "GITHUB_TOKEN": "ghs_wrongwrongwrong"}
        outcome = github.publish("s", name="n", exit_code=0, env=env)
    assert outcome.warning is not None and "answered 401" in outcome.warning and "Bad credentials" in outcome.warning
    assert "ghs_wrongwrongwrong" not in outcome.warning
