"""Real clarify replies labelled for the element-coverage and clarify-correctness-approx cards (issue 37, the card
rule), read into typed items.

``judges/data/labelled/clarify_coverage.jsonl``: replies of local models to the deficient cases (one row per distinct
model, case and reply), each annotated missing element labelled ``covered`` by rule covered-1;
``clarify_final_answers.jsonl``: their replies to the complete controls, labelled ``correct`` by rule
final-correct-1 (both rules: ``judges/data/labelled/clarify_cards_rule.md``). The sheets are written by
``experiments/clarify_card_sheets.py`` from stored runs, without any judge's verdict; provenance in
``judges/data/labelled/SOURCES.md``. A bad line is an :class:`~knowgap.errors.InputError` naming file, line and
field.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from knowgap.judges.labelled_sets import LabelledItem, labelled_file, labelled_items

COVERAGE_FILE = labelled_file("clarify_coverage.jsonl")
ANSWERS_FILE = labelled_file("clarify_final_answers.jsonl")
RULE_FILE = "src/knowgap/judges/data/labelled/clarify_cards_rule.md"


class Origin(BaseModel):
    """A trial that gave the reply: its run, trial id and prompt."""

    run: str
    trial: str
    prompt: str


class _RealReply(LabelledItem):
    id: str = Field(description="MODEL/CASE/sha256(reply)[:8]")
    case_id: str
    lang: str
    model: str = Field(description="The model that wrote the reply (the run manifest's target).")
    origins: list[Origin] = Field(min_length=1)
    finish_reason: str | None = None
    query: str
    reply: str


class ElementLabel(BaseModel):
    """One annotated missing element of the case, labelled for the reply (rule covered-1)."""

    text: str
    category: str
    covered: bool
    reason: str = Field(min_length=1)


class CoverageReply(_RealReply):
    """A reply to a deficient case with each missing element labelled covered or not."""

    elements: list[ElementLabel] = Field(min_length=1)


class FinalAnswer(_RealReply):
    """A reply to a complete control (its final answer), labelled correct against the reference conclusion."""

    conclusion: str
    correct: bool
    reason: str = Field(min_length=1)


def coverage_replies(path: Path | None = None) -> tuple[list[CoverageReply], Path]:
    """The labelled deficient-case replies (``path``: another file in the same format) and the file read."""
    return labelled_items(path or COVERAGE_FILE, CoverageReply, "labelled clarify replies")


def final_answers(path: Path | None = None) -> tuple[list[FinalAnswer], Path]:
    """The labelled control replies (``path``: another file in the same format) and the file read."""
    return labelled_items(path or ANSWERS_FILE, FinalAnswer, "labelled clarify final answers")
