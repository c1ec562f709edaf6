"""Records of human labelling that cross file boundaries: label events, samples and judge verdicts (the judge
spec itself is :class:`knowgap.judges.spec.JudgeSpec`)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from knowgap.engine.records import ScoreValue, utcnow
from knowgap.errors import KnowgapError
from knowgap.models.types import Message


def verdict_key(value: ScoreValue) -> str:
    """A canonical string for a label or verdict value (``true``, ``false``, ``"refuse"``, ``2``)."""
    return json.dumps(value, ensure_ascii=False)


FieldKind = Literal["bool", "number", "text"]
KIND_TEXT = {"bool": "a true/false field: a label is true or false", "number": "a number field: a label is a number",
             "text": "a text field: a label is a string"}


def field_kind(values: Iterable[ScoreValue]) -> FieldKind | None:
    """The type of a judge field from its verdicts (None: no verdict, or verdicts of several types)."""
    kinds: set[FieldKind] = set()
    for v in values:
        if v is not None:
            kinds.add("bool" if isinstance(v, bool) else "number" if isinstance(v, int | float) else "text")
    return kinds.pop() if len(kinds) == 1 else None


def check_label_value(field: str, value: ScoreValue, kind: FieldKind | None) -> None:
    """Refuse a label whose type is not the judge field's (None withdraws a label and is always accepted)."""
    if value is None or kind is None:
        return
    fits = {"bool": isinstance(value, bool), "text": isinstance(value, str),
            "number": isinstance(value, int | float) and not isinstance(value, bool)}[kind]
    if not fits:
        shown = json.dumps(value, ensure_ascii=False)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise KnowgapError(f"label for '{field}': '{field}' is {KIND_TEXT[kind]}, not {shown}")


def verdict_text(key: str) -> str:
    """How a verdict key is shown: strings without their quotes."""
    value = json.loads(key)
    return value if isinstance(value, str) else key


class SampleContext(BaseModel):
    """The sample's context at labelling time: the trial's prompt, the response and the reference the annotator
    saw, and the judges' verdicts (which the annotator did not see before labelling)."""

    case_id: str
    config_id: str
    config: dict[str, Any] = Field(default_factory=dict)
    repeat: int = 0
    messages: list[Message] = Field(default_factory=list)
    """The messages of the trial's last target call (system prompt, context, question)."""
    response: str = ""
    judge_verdicts: dict[str, ScoreValue] = Field(default_factory=dict)
    """Every score the trial stored (kept with the label, never shown before it is given)."""
    reference: dict[str, str] = Field(default_factory=dict)
    """What the judges compared the response with (expected answer, missing information...), as shown."""


class LabelEvent(BaseModel):
    """One label given (or changed) by one person. The store is append-only: an edit is a new event whose
    ``supersedes`` names the event it replaces, so the whole history stays."""

    event_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    run_id: str
    trial_id: str
    field: str
    """The judge field the label is about (a key of the trial's scores, e.g. ``abstained``)."""
    annotator: str
    value: ScoreValue
    created_at: str = Field(default_factory=utcnow)
    revision: int = 1
    supersedes: str | None = None
    source: Literal["terminal", "web", "api"] = "api"
    sample: str | None = None
    note: str = ""
    context: SampleContext


class Stratum(BaseModel):
    config_id: str
    verdict: str
    """The judge verdict key of this stratum (see verdict_key)."""
    population: int
    drawn: int


class Sample(BaseModel):
    """A seeded stratified sample of a run's trials for labelling one judge field."""

    name: str
    run_id: str
    field: str
    seed: int
    allocation: Literal["equal", "proportional"]
    requested: int
    strata: list[Stratum]
    trial_ids: list[str]
    """In labelling order (a seeded shuffle, so strata are interleaved)."""
    created_at: str = Field(default_factory=utcnow)


class JudgeVerdict(BaseModel):
    """One verdict of one judge spec version on one trial (stored per spec under labels/judges/)."""

    spec: str
    """name@version"""
    spec_sha256: str
    field: str
    trial_id: str
    value: ScoreValue
    raw: str = ""
    model: str = ""
    created_at: str = Field(default_factory=utcnow)
