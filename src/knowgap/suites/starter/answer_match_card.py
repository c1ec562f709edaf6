"""The starter suite's answer matcher as a judge of the catalogue (``answer-match``: does a response give one of
the case's accepted answers?), declared here where it lives, with its validator and its labelled set
(``judges/data/labelled/answer_match.jsonl``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from knowgap.judges.cards import ValidityCard
from knowgap.judges.judge import Judge, Progress
from knowgap.judges.labelled_sets import LabelledItem, labelled_file, labelled_items
from knowgap.judges.offline_cards import labelled_set_card
from knowgap.suites.starter.scoring import ANSWER_MATCH_VERSION, contains_answer


class AnswerLabel(LabelledItem):
    id: str
    question: str
    answers: list[str] = Field(min_length=1, description="the accepted answers, as a starter case lists them")
    response: str
    correct: bool = Field(description="the response gives the right answer (and does not abstain)")


def answer_match_items() -> tuple[list[AnswerLabel], Path]:
    return labelled_items(labelled_file("answer_match.jsonl"), AnswerLabel, "labelled responses")


_NOTES = ("Responses to the 8 answerable starter questions (zh + en) written for this project the ways a model "
          "answers: the accepted string, other number or word forms, paraphrases; wrong values, near-misses that "
          "contain the accepted string (145 for 45, 1600 for 160), other facts of the context. Labelled by the "
          "author. Synthetic, and near-misses are over-represented.")


def validate_answer_match(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                          progress: Progress | None = None) -> ValidityCard:
    """The starter suite's answer matcher (an accepted answer appears in the response)."""
    items, path = answer_match_items()
    return labelled_set_card("answer-match", ANSWER_MATCH_VERSION, "gives the right answer", items, path,
                             label=lambda r: r.correct, decide=lambda r: contains_answer(r.response, r.answers),
                             limit=limit, progress=progress, what="labelled responses", notes=_NOTES)


ANSWER_MATCH = Judge(
    name="answer-match", kind="offline", decides="does the answer match the reference answer?",
    current=ANSWER_MATCH_VERSION, positive="matches", labelled_set="labelled answers (i15-cards2)",
    validator=validate_answer_match)
