"""The review queue: responses the automatic screen marks failing or uncertain, for a human to check.

``build_queue`` reads a run's trials and screens each one again with the current rules (``scoring.screen``
works on the stored scores alone); ``write_queue`` writes ``review_queue.jsonl`` into the run folder (one
:class:`ReviewItem` per line, fails first); ``knowgap clarify review RUN`` does both and lists the items.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from knowgap.engine.records import TrialRecord
from knowgap.engine.store import RunStore, write_atomic
from knowgap.paths import runs_dir
from knowgap.redaction import redact
from knowgap.suites.clarify.scoring import screen

QUEUE_FILE = "review_queue.jsonl"


class ReviewItem(BaseModel):
    trial_id: str
    case_id: str
    config_id: str
    screen: str
    reasons: list[str] = Field(default_factory=list)
    kind: str | None = None
    lang: str | None = None
    query: str = ""
    response: str = ""
    scores: dict[str, Any] = Field(default_factory=dict)


def build_queue(records: Iterable[TrialRecord], include_pass: bool = False) -> list[ReviewItem]:
    items = []
    for r in records:
        if r.status != "ok":
            continue
        verdict, reasons = screen(r.scores)  # the current rules, so a re-screen of an old run uses them too
        if verdict == "pass" and not include_pass:
            continue
        query = ""
        for call in r.calls:
            if call.role == "target":
                users = [m.content for m in call.request.messages if m.role == "user"]
                query = users[0] if users else ""
                break
        items.append(ReviewItem(trial_id=r.trial_id, case_id=r.case_id, config_id=r.config_id, screen=verdict,
                                reasons=reasons,
                                kind=str(r.scores.get("kind")), lang=str(r.scores.get("lang")), query=query,
                                response=redact(str(r.output.get("response", ""))), scores=dict(r.scores)))
    order = {"fail": 0, "uncertain": 1, "pass": 2}
    return sorted(items, key=lambda i: (order.get(i.screen, 3), i.config_id, i.case_id))


def write_queue(run: str, runs_root: str | Path | None = None, include_pass: bool = False) -> tuple[Path,
                                                                                                    list[ReviewItem]]:
    """Build the queue of run ``run`` and write it to ``RUN/review_queue.jsonl``; returns (path, items)."""
    store = RunStore.open(runs_dir(runs_root), run)
    items = build_queue(store.iter_records(), include_pass=include_pass)
    path = store.path / QUEUE_FILE
    write_atomic(path, "".join(i.model_dump_json() + "\n" for i in items))
    return path, items
