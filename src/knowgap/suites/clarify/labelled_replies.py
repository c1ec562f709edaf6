"""Real clarify replies labelled for the element-coverage, clarify-correctness-approx, clarify-rubric and
clarify-silent-failure cards (issue 37, the card rule), read into typed items.

``judges/data/labelled/clarify_coverage.jsonl``: replies of local models to the deficient cases (one row per distinct
model, case and reply), each annotated missing element labelled ``covered`` by rule covered-1;
``clarify_final_answers.jsonl``: their replies to the complete controls, labelled ``correct`` by rule
final-correct-1 (both rules: ``judges/data/labelled/clarify_cards_rule.md``). The sheets are written by
``experiments/clarify_card_sheets.py`` from stored runs, without any judge's verdict; provenance in
``judges/data/labelled/SOURCES.md``. A bad line is an :class:`~knowgap.errors.InputError` naming file, line and
field.

The two model judges' labels sit in files of their own keyed by the ``id`` of a reply of ``clarify_replies.jsonl``
(the 146 distinct replies the clarification card is measured on), labelled by the rules of
``judges/data/labelled/clarify_model_judges_rule.md``: ``clarify_rubric_labels.jsonl`` (the deficient cases'
replies rated A-D on the seed's checklist, rule rubric-real-1) and ``clarify_silent_failure_labels.jsonl`` (every
reply, rule silent-failure-1). :func:`rubric_labels` and :func:`silent_failure_labels` join each label to its reply.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, Field

from knowgap.errors import InputError
from knowgap.jsonl import read_models
from knowgap.judges.labelled_sets import (
    ClarifyReplyLabel,
    LabelledItem,
    clarify_reply_items,
    labelled_file,
    labelled_items,
)

COVERAGE_FILE = labelled_file("clarify_coverage.jsonl")
ANSWERS_FILE = labelled_file("clarify_final_answers.jsonl")
RULE_FILE = "src/knowgap/judges/data/labelled/clarify_cards_rule.md"
RUBRIC_LABELS_FILE = labelled_file("clarify_rubric_labels.jsonl")
SILENT_FAILURE_LABELS_FILE = labelled_file("clarify_silent_failure_labels.jsonl")
MODEL_JUDGES_RULE_FILE = "src/knowgap/judges/data/labelled/clarify_model_judges_rule.md"


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


Dimension = Literal["gap_identification", "question_quality", "conditional_caution", "risk_control"]


class RubricLabel(LabelledItem):
    """A deficient case's reply rated 1-5 on each dimension of the seed's rater checklist (rule rubric-real-1)."""

    id: str = Field(description="The reply's id in clarify_replies.jsonl.")
    gap_identification: int = Field(ge=1, le=5)
    question_quality: int = Field(ge=1, le=5)
    conditional_caution: int = Field(ge=1, le=5)
    risk_control: int = Field(ge=1, le=5)
    reason: str = Field(min_length=1, description="One line naming what each score rests on.")
    disputable: list[Dimension] = Field(default_factory=list, description="Dimensions found borderline.")

    def scores(self) -> dict[str, int]:
        return {"gap_identification": self.gap_identification, "question_quality": self.question_quality,
                "conditional_caution": self.conditional_caution, "risk_control": self.risk_control}


class SilentFailureLabel(LabelledItem):
    """A reply labelled a silent failure or not (rule silent-failure-1)."""

    id: str = Field(description="The reply's id in clarify_replies.jsonl.")
    silent_failure: bool = Field(description="Looks complete but dodges the core question.")
    reason: str = Field(min_length=1)
    disputable: bool = False


Label = TypeVar("Label", RubricLabel, SilentFailureLabel)


def _joined(path: Path, model: type[Label], what: str, replies_path: Path | None,
            deficient_only: bool) -> tuple[list[tuple[ClarifyReplyLabel, Label]], list[Path]]:
    """Each label of ``path`` with the reply of ``clarify_replies.jsonl`` (or ``replies_path``) it names, in the
    labels' order, and both files; a label naming no reply, a reply twice, or (``deficient_only``) a complete
    case's reply is an InputError naming the file, line and field."""
    replies, replies_file = clarify_reply_items(replies_path)
    by_id = {r.id: r for r in replies}
    seen: set[str] = set()
    out = []
    for line, label in read_models(path, model, what=what):
        reply = by_id.get(label.id)
        if reply is None:
            raise InputError(str(path), f"record {label.id}: no reply with this id in {replies_file.name}",
                             line=line, field="id")
        if label.id in seen:
            raise InputError(str(path), f"record {label.id}: labelled twice", line=line, field="id")
        if deficient_only and reply.kind != "deficient":
            raise InputError(str(path), f"record {label.id}: a reply to a complete case (the rubric rates the "
                                        "deficient cases' replies only)", line=line, field="id")
        seen.add(label.id)
        out.append((reply, label))
    return out, [replies_file, path]


def rubric_labels(path: Path | None = None, replies_path: Path | None = None,
                  ) -> tuple[list[tuple[ClarifyReplyLabel, RubricLabel]], list[Path]]:
    """The rubric-rated replies (``path``: another file in the format of ``clarify_rubric_labels.jsonl``;
    ``replies_path``: of ``clarify_replies.jsonl``), each with its reply, and the files read (replies, labels)."""
    return _joined(path or RUBRIC_LABELS_FILE, RubricLabel, "rubric labels", replies_path, deficient_only=True)


def silent_failure_labels(path: Path | None = None, replies_path: Path | None = None,
                          ) -> tuple[list[tuple[ClarifyReplyLabel, SilentFailureLabel]], list[Path]]:
    """The replies labelled silent failure or not, each with its reply, and the files read (replies, labels)."""
    return _joined(path or SILENT_FAILURE_LABELS_FILE, SilentFailureLabel, "silent-failure labels", replies_path,
                   deficient_only=False)
