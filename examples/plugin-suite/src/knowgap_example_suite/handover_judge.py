"""``refund-handover``: the suite's judge of whether a reply hands the customer over to a person, declared as a
knowgap judge (one entry point in pyproject.toml), with the labelled set it is measured on.

The rule is the suite's own: a reply hands over when it holds the handover phrase (NFKC, case and runs of spaces
ignored). ``knowgap judge validate refund-handover`` measures it on ``data/handover_labels.jsonl``: 16 replies to
the shop's questions, each labelled by reading it (does it pass the customer to a person?), including ones the
phrase rule gets wrong (a handover in other words, a broken phrase, the phrase quoted while answering). The card
it writes is found by ``knowgap judges`` and by the reports of runs whose metrics this judge decides.

Written only against ``knowgap``'s public API.
"""

from __future__ import annotations

import hashlib
import json
import time
import unicodedata
from importlib.resources import files
from pathlib import Path

import knowgap

VERSION = "refund-handover-1"
"""Change it whenever the rule changes: a card is for one version."""
LABELS = Path(str(files("knowgap_example_suite") / "data" / "handover_labels.jsonl"))


def contains(text: str, part: str) -> bool:
    """``part`` is in ``text``, NFKC, case and runs of spaces ignored."""
    def norm(value: str) -> str:
        return " ".join(unicodedata.normalize("NFKC", value).lower().split())

    return norm(part) in norm(text)


def handed_over(response: str, phrase: str = "[HANDOVER]") -> bool:
    """The reply holds the handover phrase."""
    return contains(response, phrase)


def validate_handover(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                      progress: object = None) -> knowgap.ValidityCard:
    """The rule against the labels (all 16, or the first ``limit``); the labels ship with the package, so
    ``data_dir`` is not read, and the judge runs no model."""
    rows = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = rows[:limit] if limit else rows
    start = time.perf_counter()
    verdicts: list[bool | None] = [handed_over(row["reply"]) for row in rows]
    return knowgap.binary_card(
        "refund-handover", VERSION, verdicts, [bool(row["handed_over"]) for row in rows],
        positive="hands the customer over", dataset=LABELS.name,
        dataset_sha256=hashlib.sha256(LABELS.read_bytes()).hexdigest(), seconds=time.perf_counter() - start,
        method=f"{len(rows)} replies to the shop's questions, each labelled by reading it",
        notes="written for this example by its author: handovers in the phrase and in other words, answers")


HANDOVER = knowgap.Judge(
    name="refund-handover", kind="offline", decides="does the reply hand the customer over to a person?",
    current=VERSION, positive="hands the customer over",
    labelled_set="data/handover_labels.jsonl (16 replies written for the example, labelled by reading them)",
    validator=validate_handover, fields=("handed_over",), needs_data=False)
