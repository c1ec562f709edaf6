"""GitHub Actions: the markdown summary in the job summary (``$GITHUB_STEP_SUMMARY``) and as one comment on the
pull request, found again by its marker and updated by later runs (REST: list the issue's comments, then PATCH
the one with the marker or POST a new one).

Read from the environment GitHub sets: ``GITHUB_API_URL``, ``GITHUB_REPOSITORY``, ``GITHUB_EVENT_NAME``,
``GITHUB_EVENT_PATH`` (the event's JSON: the pull request's number), ``GITHUB_STEP_SUMMARY``,
``GITHUB_SERVER_URL`` and ``GITHUB_RUN_ID`` (the link to the run), and the token from ``GITHUB_TOKEN``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from knowgap.ci.forge_api import ForgeApi, ForgeApiError
from knowgap.ci.note import Outcome, marker, note_body, upsert_note

COMMENT_LIMIT = 65_536
"""Characters GitHub accepts in a comment body."""
STEP_SUMMARY_LIMIT = 1_000_000
"""GitHub shows a step summary up to 1 MiB; a longer one is cut (the comment's rule)."""

_HINTS = {
    401: "the token was refused: check the action's github-token input",
    403: "the token may not write comments: give the job `permissions: pull-requests: write` (a pull request from "
         "a fork gets a read-only token; the job summary still holds the result)",
    404: "no such repository or pull request for this token: check GITHUB_REPOSITORY and the token's access",
}


def pull_request_number(env: Mapping[str, str]) -> tuple[int | None, str]:
    """The pull request's number from the event's JSON, or None and why there is none."""
    event = env.get("GITHUB_EVENT_NAME", "")
    path = env.get("GITHUB_EVENT_PATH", "")
    if not path:
        return None, "GITHUB_EVENT_PATH is not set (not on GitHub Actions?)"
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return None, f"cannot read the event file {path}: {exc}"
    if not isinstance(payload, dict):
        return None, f"the event file {path} holds no JSON object"
    pr = payload.get("pull_request")
    if isinstance(pr, dict) and isinstance(pr.get("number"), int):
        return pr["number"], ""
    issue = payload.get("issue")  # issue_comment on a pull request
    if isinstance(issue, dict) and issue.get("pull_request") and isinstance(issue.get("number"), int):
        return issue["number"], ""
    return None, f"the event '{event or 'unknown'}' is not a pull request"


def write_step_summary(env: Mapping[str, str], text: str) -> str | None:
    """Append ``text`` to the job summary; the file's path, or None when the step has none."""
    path = env.get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    if len(text) > STEP_SUMMARY_LIMIT:
        text = text[:STEP_SUMMARY_LIMIT - 200].rsplit("\n", 1)[0] + "\n\n… cut to fit the job summary's 1 MiB.\n"
    with open(path, "a", encoding="utf-8") as f:
        f.write(text.rstrip() + "\n\n")
    return path


def run_link(env: Mapping[str, str], artifact: str | None) -> str:
    server, repo, run_id = env.get("GITHUB_SERVER_URL"), env.get("GITHUB_REPOSITORY"), env.get("GITHUB_RUN_ID")
    where = f"[run {run_id}]({server}/{repo}/actions/runs/{run_id})" if server and repo and run_id else "this run"
    return f"HTML report: artifact `{artifact}` of {where}." if artifact else f"Details: {where}."


def publish(summary: str, *, name: str, exit_code: int, env: Mapping[str, str], comment: bool = True,
            artifact: str | None = None) -> Outcome:
    """Write the job summary, then create or update this evaluation's comment on the pull request. A failed
    API call is returned as a warning, never raised: the gate's result (the job's exit code) must not be
    hidden by a comment that could not be written."""
    lines: list[str] = []
    written = write_step_summary(env, summary)
    lines.append(f"job summary: {written}" if written else "no job summary (GITHUB_STEP_SUMMARY is not set)")
    if not comment:
        lines.append("pull request comment: off")
        return Outcome(lines)
    number, why = pull_request_number(env)
    if number is None:
        lines.append(f"no pull request comment: {why}")
        return Outcome(lines)
    token = env.get("GITHUB_TOKEN", "")
    repo = env.get("GITHUB_REPOSITORY", "")
    if not token or not repo:
        missing = " and ".join(n for n, v in (("GITHUB_TOKEN", token), ("GITHUB_REPOSITORY", repo)) if not v)
        warning = f"cannot comment on pull request #{number}: {missing} is not set"
        return Outcome(lines, warning=warning)
    api = ForgeApi(base=env.get("GITHUB_API_URL") or "https://api.github.com", secret=token, what="GitHub API",
                   headers={"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
                            "X-GitHub-Api-Version": "2022-11-28"})
    body = note_body(summary, name=name, exit_code=exit_code, limit=COMMENT_LIMIT, links=run_link(env, artifact))
    try:
        posted = upsert_note(api, list_path=f"/repos/{repo}/issues/{number}/comments?per_page=100",
                             create_path=f"/repos/{repo}/issues/{number}/comments",
                             update_path=lambda cid: f"/repos/{repo}/issues/comments/{cid}",
                             update_method="PATCH", body=body, name=name)
    except ForgeApiError as exc:
        hint = _HINTS.get(exc.status or 0, "")
        return Outcome(lines, warning=f"could not comment on pull request #{number}: {exc}"
                                            f"{' (' + hint + ')' if hint else ''}")
    lines.append(f"pull request #{number}: comment {posted.id} {posted.action} ({marker(name)})"
                 + (f": {posted.url}" if posted.url else ""))
    return Outcome(lines, posted=posted)
