"""The normal cases' labels, built from two independent annotation passes (docs/extract.md, "Labelling rule").

Each pass (``data/labels-a.jsonl``, ``data/labels-b.jsonl``) labels every normal case by the same written rule,
without seeing the other pass or the earlier labels: ``sentiment`` and ``conflicting``, each with a
``*_disputable`` flag and a one-sentence ``reason``. :func:`merge_passes` turns them into the case labels:

- a field is **scored** when both passes give the same value and neither marks it disputable;
- otherwise it is **analysis-only**: both values are kept in the case (``analysis_labels``), reported apart
  and never scored.

``generate.py`` calls it when it rebuilds ``cases.jsonl``; nothing is labelled by hand in that file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, StrictBool

from knowgap.errors import InputError
from knowgap.jsonl import read_models
from knowgap.suites.extract.summarizer import Sentiment

HERE = Path(__file__).resolve().parent / "data"
PASS_FILES = {"a": HERE / "labels-a.jsonl", "b": HERE / "labels-b.jsonl"}
Field = Literal["sentiment", "conflicting"]
FIELDS: tuple[Field, ...] = ("sentiment", "conflicting")


class PassLabel(BaseModel):
    """One annotator's labels of one case (one line of a pass file)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    sentiment: Sentiment
    sentiment_disputable: StrictBool
    conflicting: StrictBool
    conflicting_disputable: StrictBool
    reason: str


class AnalysisLabel(BaseModel):
    """A field the two passes did not settle: both values, and why it is not scored."""

    model_config = ConfigDict(extra="forbid")

    a: Sentiment | bool
    b: Sentiment | bool
    why: str
    """``the passes disagree``, ``disputable (a)``, ``disputable (a, b)`` or both kinds, joined by ``; ``."""


class MergedLabels(BaseModel):
    id: str
    expected_sentiment: Sentiment | None
    expected_conflicting: bool | None
    analysis_labels: dict[str, AnalysisLabel]
    """Field name -> the unsettled field (empty when both fields are scored)."""


def load_pass(path: Path) -> list[PassLabel]:
    """One pass file; a bad line or a repeated id is one error naming the file, the line and the field."""
    rows = read_models(path, PassLabel, what="labels")
    seen: set[str] = set()
    for line, row in rows:
        if row.id in seen:
            raise InputError(str(path), f"id '{row.id}' appears twice", line=line, field="id")
        seen.add(row.id)
    return [row for _, row in rows]


def _merge_field(field: Field, a: PassLabel, b: PassLabel) -> tuple[Sentiment | bool | None, AnalysisLabel | None]:
    value_a, value_b = getattr(a, field), getattr(b, field)
    disputed = [name for name, row in (("a", a), ("b", b)) if getattr(row, f"{field}_disputable")]
    why = ([] if value_a == value_b else ["the passes disagree"]) + \
        ([f"disputable ({', '.join(disputed)})"] if disputed else [])
    if why:
        return None, AnalysisLabel(a=value_a, b=value_b, why="; ".join(why))
    return value_a, None


def merge_passes(a: Sequence[PassLabel], b: Sequence[PassLabel]) -> dict[str, MergedLabels]:
    """Case id -> its labels. Both passes must label the same ids (a :class:`ValueError` names the difference)."""
    by_a, by_b = {r.id: r for r in a}, {r.id: r for r in b}
    if set(by_a) != set(by_b):
        raise ValueError(f"the passes label different cases: only in a {sorted(set(by_a) - set(by_b))}, "
                         f"only in b {sorted(set(by_b) - set(by_a))}")
    out = {}
    for case_id, row_a in by_a.items():
        sentiment, sentiment_note = _merge_field("sentiment", row_a, by_b[case_id])
        conflicting, conflicting_note = _merge_field("conflicting", row_a, by_b[case_id])
        notes = {"sentiment": sentiment_note, "conflicting": conflicting_note}
        assert not isinstance(sentiment, bool) and (conflicting is None or isinstance(conflicting, bool))
        out[case_id] = MergedLabels(id=case_id, expected_sentiment=sentiment, expected_conflicting=conflicting,
                                    analysis_labels={k: v for k, v in notes.items() if v is not None})
    return out


def load_merged(files: dict[str, Path] | None = None) -> dict[str, MergedLabels]:
    """The shipped passes, merged."""
    files = files or PASS_FILES
    return merge_passes(load_pass(files["a"]), load_pass(files["b"]))
