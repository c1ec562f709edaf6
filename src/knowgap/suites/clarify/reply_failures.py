"""The known failures (issue 37) of the clarify judges that read a first reply to a deficient case: each a construct
set built by a rule of ``judges/data/labelled/model_judge_constructs_rule.md`` (committed before the set was built and
before any judge ran on it), the judge asked as a run asks it, the entry made from the per-item verdicts by
:func:`knowgap.judges.model_failures.construct_failure`.

- **clarify-silent-failure** (rule asks-missing-fact-1, ``clarify_specific_questions.jsonl``): on real replies both
  judge models said "dodges" for nearly every reply. Per deficient case, a reply that asks three specific questions
  on the case's missing facts (no silent failure: asking is engaging) against the same opening and closing with a
  generic request for details and "consult a lawyer" (a silent failure).
- **clarify-rubric** (rule pseudo-condition-1, ``clarify_pseudo_conditions.jsonl``): on real replies two flat answers
  on assumed facts were rated adequate because an "if" restating the user's own fact stood the gap anchor down. Per
  deficient case, such an answer (weighted total 1.15) against the same opening asking the missing facts and
  answering conditionally (4.75). The judge as it runs (anchors applied) gives the figure; the model's own ratings
  give the model-only verdict beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TypeVar

from pydantic import Field

from knowgap.errors import InputError
from knowgap.judges.cards import KnownFailure
from knowgap.judges.labelled_sets import labelled_file
from knowgap.judges.model_failures import (
    ConstructItem,
    ConstructVerdict,
    construct_failure,
    matched,
    read_construct_set,
)
from knowgap.judges.rubric_validity import ScoredResult, measure_scored, on_gateway
from knowgap.suites.clarify.dataset import CASES_FILE, GUIDELINE_FILES, ClarifyCase, load_cases, load_guideline

SPECIFIC_QUESTIONS = labelled_file("clarify_specific_questions.jsonl")
SPECIFIC_SET = "src/knowgap/judges/data/labelled/clarify_specific_questions.jsonl"
SPECIFIC_NAME = ("asks the missing facts: a reply that asks the user three specific questions on the facts the answer "
                 "turns on and answers nothing yet (not a silent failure) against the same reply with a generic "
                 "request for details and 'consult a lawyer' (a silent failure)")
SPECIFIC_MEASURE = "specificity on the construct (replies asking the missing facts called not dodging)"
PSEUDO_CONDITIONS = labelled_file("clarify_pseudo_conditions.jsonl")
PSEUDO_SET = "src/knowgap/judges/data/labelled/clarify_pseudo_conditions.jsonl"
PSEUDO_NAME = ("pseudo-condition: a definite answer on assumed facts behind an 'if' that restates the user's own fact "
               "(weighted total 1.15, not adequate) against the same opening asking the missing facts and answering "
               "conditionally (4.75, adequate)")
PSEUDO_MEASURE = "specificity on the construct (assuming answers rated below 3.0, not adequate)"
Item = TypeVar("Item", bound=ConstructItem)


class SpecificQuestions(ConstructItem):
    """One line of ``clarify_specific_questions.jsonl`` (variant ``asks``, the construct, or ``generic``)."""

    reply: str
    silent_failure: bool


class PseudoCondition(ConstructItem):
    """One line of ``clarify_pseudo_conditions.jsonl`` (variant ``assumes``, the construct, or ``asks``)."""

    reply: str
    adequate: bool
    scores: dict[str, int] = Field(description="the rubric scores by construction (rule pseudo-condition-1)")
    total: float


def _on_deficient_cases(path: Path, model: type[Item], variants: tuple[str, str],
                        ) -> tuple[list[Item], dict[str, ClarifyCase]]:
    """The set's rows (every case one of each variant) and the clarify cases by id; a row on no deficient case of
    its language is an InputError naming file, line and field."""
    numbered = read_construct_set(path, model, variants)
    cases = {c.id: c for c in load_cases(CASES_FILE)}
    for line, row in numbered:
        case = cases.get(row.case_id)
        if case is None or not case.deficient or case.lang != row.lang:
            raise InputError(str(path), f"{row.case_id!r} is not a deficient clarify case in {row.lang}", line=line,
                             field="case_id")
    return [row for _line, row in numbered], cases


def specific_questions(path: Path = SPECIFIC_QUESTIONS) -> tuple[list[SpecificQuestions], dict[str, ClarifyCase]]:
    return _on_deficient_cases(path, SpecificQuestions, ("asks", "generic"))


def specific_question_verdicts(rows: Sequence[SpecificQuestions],
                               dodges: Sequence[bool | None]) -> list[ConstructVerdict]:
    """The judge's verdict on each reply in the card's positive sense (True: dodges, a silent failure)."""
    return [ConstructVerdict(id=r.id, lang=r.lang, variant=r.variant, is_construct=r.variant == "asks",
                             label=r.silent_failure, said=d,
                             outcome=None if d is None else "dodges" if d else "addresses")
            for r, d in zip(rows, dodges, strict=True)]


def measure_specific_questions(judge_model: str, limit: int | None = None,
                               path: Path = SPECIFIC_QUESTIONS) -> tuple[list[ConstructVerdict], float]:
    """The clarify-silent-failure judge (``judge_model``) on the first ``limit`` replies of the set (all by
    default), each asked with its case's question as a run asks it, and the seconds it took."""
    from knowgap.suites.clarify.silent_failure_card import judge_replies

    rows, cases = specific_questions(path)
    rows = rows[:limit]
    dodges, seconds = judge_replies(judge_model, [(cases[r.case_id].query, r.reply) for r in rows])
    return specific_question_verdicts(rows, dodges), seconds


def specific_questions_failure(verdicts: Sequence[ConstructVerdict], judge_model: str,
                               seconds_per_item: float | None, path: Path = SPECIFIC_QUESTIONS) -> KnownFailure:
    rows, _ = specific_questions(path)
    matched(verdicts, rows, {r.id: r.silent_failure for r in rows}, "asks")
    return construct_failure(
        SPECIFIC_NAME, SPECIFIC_SET, SPECIFIC_MEASURE, verdicts, judge_model=judge_model,
        seconds_per_item=seconds_per_item,
        about="Asked as a run asks it (the silent_failure spec: the case's question, the reply). The judge's prompt "
              "itself says asking the user specific questions about the facts is not dodging.")


def pseudo_conditions(path: Path = PSEUDO_CONDITIONS) -> tuple[list[PseudoCondition], dict[str, ClarifyCase]]:
    return _on_deficient_cases(path, PseudoCondition, ("assumes", "asks"))


def pseudo_condition_verdicts(rows: Sequence[PseudoCondition],
                              results: Sequence[ScoredResult]) -> list[ConstructVerdict]:
    """Each reply adequate (total >= 3.0) by the judge as it runs (``said``) and by the model's own ratings
    (``model_only``), with both totals in ``outcome``."""
    def total(value: float | None) -> str:
        return "unread" if value is None else f"{value:.2f}"

    return [ConstructVerdict(id=r.id, lang=r.lang, variant=r.variant, is_construct=r.variant == "assumes",
                             label=r.adequate, said=res.adequate(), model_only=res.adequate(model_only=True),
                             outcome=f"total {total(res.total())}, model {total(res.total(model_only=True))}"
                                     + (f", anchored {'+'.join(sorted(res.ratings.anchors))}"
                                        if res.ratings.anchors else ""))
            for r, res in zip(rows, results, strict=True)]


def measure_pseudo_conditions(judge_model: str, limit: int | None = None,
                              path: Path = PSEUDO_CONDITIONS) -> tuple[list[ConstructVerdict], float]:
    """The clarify-rubric judge (``judge_model``, the offline anchors applied as in a run) on the first ``limit``
    replies of the set (all by default), each rated on its own case, and the seconds it took."""
    from knowgap.suites.clarify.rubric_card import WeightedReply, _rate_reply

    rows, cases = pseudo_conditions(path)
    rows = rows[:limit]
    guidelines = {lang: load_guideline(lang) for lang in GUIDELINE_FILES}
    replies = [WeightedReply(r.id, "constructed", r.lang, r.scores,
                             partial(_rate_reply, guidelines[r.lang], cases[r.case_id], r.reply)) for r in rows]
    results, seconds = on_gateway(None, "validate-clarify-rubric-constructs", judge_model,
                                  lambda ctx: measure_scored(replies, ctx))
    return pseudo_condition_verdicts(rows, results), seconds


def pseudo_conditions_failure(verdicts: Sequence[ConstructVerdict], judge_model: str,
                              seconds_per_item: float | None, path: Path = PSEUDO_CONDITIONS) -> KnownFailure:
    rows, _ = pseudo_conditions(path)
    matched(verdicts, rows, {r.id: r.adequate for r in rows}, "assumes")
    totals = "; ".join(f"{v.id} {v.outcome}" for v in verdicts if v.is_construct)
    return construct_failure(
        PSEUDO_NAME, PSEUDO_SET, PSEUDO_MEASURE, verdicts, judge_model=judge_model,
        seconds_per_item=seconds_per_item,
        about="Rated as a run rates it (the shipped rater guideline, one request per dimension, G-Eval expected "
              "value, the weighted total, the clarification detector's bottom anchors); adequate at a total of 3.0 "
              f"or more, as the card reads it. The assuming answers' totals: {totals}.")
