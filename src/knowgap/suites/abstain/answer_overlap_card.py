"""The abstain scenarios' answer check as a judge of the catalogue (``answer-overlap``: does a reply's answer match
a reference, containing it or most of a long one's content tokens?), declared here where it lives, with its
validator and its labelled set (``judges/data/labelled/scenario_answers.jsonl``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from knowgap.jsonl import read_models
from knowgap.judges.cards import KnownFailure, ValidityCard
from knowgap.judges.judge import Judge, Progress
from knowgap.judges.known_failures import construct_entry
from knowgap.judges.labelled_sets import LabelledItem, labelled_file, labelled_items
from knowgap.judges.offline_cards import labelled_set_card
from knowgap.suites.abstain.scenario_answers import ANSWER_OVERLAP_VERSION, answer_match


class ScenarioAnswerLabel(LabelledItem):
    """A real reply of a model to an answerable abstain scenario question, labelled right or wrong against the
    question's reference answers by reading it (rule ``answer-correct-1``, docs/judges.md)."""

    id: str
    scenario: str = Field(description="false-premise / unknowable / unanswerable-context")
    question: str
    answers: list[str] = Field(min_length=1, description="the question's reference answers, as its scenario lists them")
    response: str
    correct: bool = Field(description="the reply's answer is a reference answer, in any form or wording that means it")
    disputable: bool = Field(description="the annotator found the label borderline")
    reason: str
    source: str = Field(description="the model and run the reply comes from")


def scenario_answer_items() -> tuple[list[ScenarioAnswerLabel], Path]:
    return labelled_items(labelled_file("scenario_answers.jsonl"), ScenarioAnswerLabel, "labelled answers")


_NOTES = ("Real replies of local:qwen2.5-1.5b and local:qwen2.5-0.5b to the answerable questions of the false-premise "
          "controls, unknowable (SelfAware) and unanswerable-context scenarios (replies that declined are left out: "
          "answer_accuracy counts them wrong without this judge), labelled right or wrong against the references by "
          "reading them, before the judge ran (rule answer-correct-1, docs/judges.md). One annotator. The references "
          "are mostly short (a name, a number, a phrase), so the containment half of the rule decides most rows.")


def validate_answer_overlap(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                            progress: Progress | None = None) -> ValidityCard:
    """The abstain scenarios' answer check (containment, or token overlap with a long reference) on real replies to
    the scenarios' answerable questions, labelled right or wrong by reading them; ``extra`` holds sensitivity and
    specificity per scenario."""
    items, path = scenario_answer_items()
    return labelled_set_card("answer-overlap", ANSWER_OVERLAP_VERSION, "gives the right answer", items, path,
                             label=lambda r: r.correct, decide=lambda r: answer_match(r.response, r.answers)[0],
                             limit=limit, progress=progress, what="labelled scenario answers",
                             group=lambda r: r.scenario, notes=_NOTES)


class NumberFormAnswer(BaseModel):
    """One line of ``number_forms.jsonl`` (rule number-form-1): a reply giving the reference answer with its number
    in the other form."""

    id: str
    lang: str
    question_id: str
    question: str
    answers: list[str] = Field(min_length=1)
    response: str
    correct: bool
    reason: str = Field(min_length=1)


NUMBER_FORMS_NAME = ("number in the other form: the right answer with its number written in words for digits or digits "
                     "for words (\"fourteen\" for \"14\", \"一九八七年\" for \"1987\", \"1天\" for \"一天\")")


def measure_number_forms(path: Path | None = None) -> KnownFailure:
    """The known-failure entry of ``answer-overlap`` on right answers whose number is in the other form (rule
    number-form-1): the share the answer check matches to a reference."""
    path = path or labelled_file("number_forms.jsonl")
    rows = [r for _line, r in read_models(path, NumberFormAnswer, what="replies")]
    return construct_entry(NUMBER_FORMS_NAME, path, "number-form-1",
                           "sensitivity (right answers matched to a reference)", [r.id for r in rows],
                           [r.lang for r in rows],
                           [answer_match(r.response, r.answers)[0] == r.correct for r in rows],
                           wrong_means="right answers not matched", labels=[r.correct for r in rows])


ANSWER_OVERLAP = Judge(
    name="answer-overlap", kind="offline",
    decides="does an answer match a reference answer (contains it, or most of a long one's content tokens)?",
    current=ANSWER_OVERLAP_VERSION, positive="matches",
    labelled_set="judges/data/labelled/scenario_answers.jsonl (real 1.5B and 0.5B answers to the abstain "
                 "scenarios' answerable questions, hand-labelled)",
    validator=validate_answer_overlap, needs_data=False)
