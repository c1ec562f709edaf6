"""GitLab CI: the markdown summary as one note on the merge request, found again by its marker and updated by
later pipelines (REST v4: list the merge request's notes, then PUT the one with the marker or POST a new one).

Read from the environment GitLab sets in a merge-request pipeline: ``CI_API_V4_URL``, ``CI_PROJECT_ID``,
``CI_MERGE_REQUEST_IID``, ``CI_JOB_URL`` (the link to the job's artifacts); the token from a CI/CD variable
(``KNOWGAP_GITLAB_TOKEN`` by default: a project access token with the ``api`` scope; the job token
``CI_JOB_TOKEN`` may not write notes).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping

from knowgap.ci.forge_api import ForgeApi, ForgeApiError
from knowgap.ci.note import Outcome, marker, note_body, upsert_note

NOTE_LIMIT = 1_000_000
"""Characters GitLab accepts in a note."""
TOKEN_VARIABLE = "KNOWGAP_GITLAB_TOKEN"

_HINTS = {
    401: "the token was refused: check the CI/CD variable that holds it (masked, with the api scope)",
    403: "the token may not write notes on this merge request: give it the api scope and at least the Reporter "
         "role",
    404: "no such project or merge request for this token: check CI_PROJECT_ID and the token's access",
}


def publish(summary: str, *, name: str, exit_code: int, env: Mapping[str, str], comment: bool = True,
            token_variable: str = TOKEN_VARIABLE) -> Outcome:
    """Create or update this evaluation's note on the merge request. A failed API call is returned as a
    warning, never raised: the job's exit code stays the gate's."""
    if not comment:
        return Outcome(["merge request note: off"])
    iid = env.get("CI_MERGE_REQUEST_IID", "")
    if not iid:
        return Outcome(["no merge request note: not a merge request pipeline (CI_MERGE_REQUEST_IID is not "
                              "set; run the job with rules: - if: $CI_PIPELINE_SOURCE == \"merge_request_event\")"])
    token = env.get(token_variable, "")
    project = env.get("CI_PROJECT_ID", "")
    api_url = env.get("CI_API_V4_URL", "")
    missing = [n for n, v in ((token_variable, token), ("CI_PROJECT_ID", project), ("CI_API_V4_URL", api_url))
               if not v]
    if missing:
        return Outcome([], warning=f"cannot write a note on merge request !{iid}: {' and '.join(missing)} "
                                         f"{'is' if len(missing) == 1 else 'are'} not set")
    api = ForgeApi(base=api_url, secret=token, what="GitLab API", headers={"PRIVATE-TOKEN": token})
    links = f"HTML report: the artifacts of [job {env['CI_JOB_ID']}]({env['CI_JOB_URL']})." \
        if env.get("CI_JOB_URL") and env.get("CI_JOB_ID") else ""
    body = note_body(summary, name=name, exit_code=exit_code, limit=NOTE_LIMIT, links=links)
    notes = f"/projects/{urllib.parse.quote(project, safe='')}/merge_requests/{urllib.parse.quote(iid, safe='')}/notes"
    try:
        posted = upsert_note(api, list_path=f"{notes}?per_page=100&sort=asc&order_by=created_at", create_path=notes,
                             update_path=lambda nid: f"{notes}/{nid}", update_method="PUT", body=body, name=name)
    except ForgeApiError as exc:
        hint = _HINTS.get(exc.status or 0, "")
        return Outcome([], warning=f"could not write a note on merge request !{iid}: {exc}"
                                         f"{' (' + hint + ')' if hint else ''}")
    return Outcome([f"merge request !{iid}: note {posted.id} {posted.action} ({marker(name)})"], posted=posted)
