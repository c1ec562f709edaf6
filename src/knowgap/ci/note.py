"""One comment per evaluation on a pull (merge) request: its hidden marker, its body, and creating it once then
updating it in place (GitHub issue comments and GitLab merge-request notes alike)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from knowgap.ci.forge_api import ForgeApi
from knowgap.engine.outcome import (
    EXIT_BAD_INPUT,
    EXIT_GATE_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TRIAL_ERRORS,
)

EXIT_MEANINGS = {
    EXIT_OK: "every trial ok, every threshold holds",
    EXIT_GATE_FAILED: "a threshold failed",
    EXIT_BAD_INPUT: "bad input (an option, file or model spec): no numbers to judge",
    EXIT_TRIAL_ERRORS: "some trials errored: the numbers leave them out",
    EXIT_INTERRUPTED: "interrupted: resume the run",
}
"""What knowgap's exit codes mean (docs/reports.md#exit-codes-and-run-statuses), for the line under a comment."""

_UNSAFE = re.compile(r"[^\w.:/@+ -]+")


def marker(name: str) -> str:
    """The hidden first line that finds this evaluation's comment again: ``<!-- knowgap:NAME -->``. Characters
    that could end an HTML comment early (``>``, ``--``) or break the line are replaced."""
    safe = _UNSAFE.sub("-", name.strip()).replace("--", "-").strip("- ") or "default"
    return f"<!-- knowgap:{safe} -->"


def exit_line(exit_code: int) -> str:
    meaning = EXIT_MEANINGS.get(exit_code, "knowgap failed")
    return f"knowgap exited {exit_code}: {meaning}."


def note_body(summary: str, *, name: str, exit_code: int, limit: int, links: str = "") -> str:
    """The comment: the marker, the markdown summary (cut at a line to fit the forge's ``limit``), and a last
    line with the exit code's meaning and where the full report is."""
    head = marker(name) + "\n"
    tail = "\n\n---\n" + exit_line(exit_code) + (f" {links}" if links else "") + "\n"
    room = limit - len(head) - len(tail)
    text = summary.rstrip()
    if len(text) > room:
        cut_note = f"\n\n… the summary was cut here to fit the {limit:,}-character limit of a comment; the full " \
                   "summary is in the job's log and the HTML report."
        keep = text[:max(0, room - len(cut_note))]
        keep = keep[:keep.rfind("\n")] if "\n" in keep else keep
        text = keep + cut_note
    return head + text + tail


@dataclass(frozen=True)
class Posted:
    action: str
    """``created`` or ``updated``."""
    id: Any
    url: str | None


@dataclass(frozen=True)
class Outcome:
    """What publishing the summary on a forge did, as lines for the log; ``posted``: the comment or note written;
    ``warning``: set when it could not be written."""

    lines: list[str]
    posted: Posted | None = None
    warning: str | None = None


def upsert_note(api: ForgeApi, *, list_path: str, create_path: str, update_path: Callable[[Any], str],
                update_method: str, body: str, name: str) -> Posted:
    """Update the comment whose body starts with this evaluation's marker, or create it when there is none:
    one comment per evaluation, however many times the job runs (a quote of it starts with ``>``, not the
    marker, and is never taken for it)."""
    mark = marker(name)

    def ours() -> list[dict[str, Any]]:
        return [c for c in api.pages(list_path) if isinstance(c, dict) and str(c.get("body") or "").startswith(mark)]

    existing = ours()
    if existing:
        target = existing[0]
        answer, _ = api.request(update_method, update_path(target["id"]), {"body": body})
        return Posted("updated", target["id"], _url(answer))
    answer, _ = api.request("POST", create_path, {"body": body})
    created = answer.get("id") if isinstance(answer, dict) else None
    # Another run of the same job may have created one between our list and our POST: the oldest stays, so the
    # later of two racing runs removes its own and writes into the oldest (both forges list oldest first).
    again = ours()
    if len(again) > 1 and created is not None and again[0]["id"] != created:
        api.request("DELETE", update_path(created))
        answer, _ = api.request(update_method, update_path(again[0]["id"]), {"body": body})
        return Posted("updated", again[0]["id"], _url(answer))
    return Posted("created", created, _url(answer))


def _url(answer: Any) -> str | None:
    if isinstance(answer, dict):
        url = answer.get("html_url") or answer.get("web_url")
        return str(url) if url else None
    return None
