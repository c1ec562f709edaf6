"""clarify-correctness's known failure (issue 37): a final answer stating the OPPOSITE of the reference outcome.
On real final answers the judge called 10 of 17 wrong zh answers correct, most of them the opposite outcome; the
construct set ``judges/data/labelled/clarify_opposite_outcomes.jsonl`` (rule opposite-outcome-1) holds, per complete
clarify case, the reference outcome restated (correct) and its opposite in the same style (incorrect). The judge is
asked as a run asks it (:func:`~knowgap.suites.clarify.correctness_card.judge_final_answers`); the entry is made from
the per-item verdicts by :func:`knowgap.judges.model_failures.construct_failure`.

Its offline approximation, clarify-correctness-approx, matches the reference's conclusion terms and does not read
negation: its construct set ``judges/data/labelled/clarify_negated_terms.jsonl`` (rule negated-terms-1, beside it)
holds, per complete case, an answer with every conclusion term and the outcome negated (incorrect) and the reference
outcome in the same terms (correct); :func:`measure_negated_terms` decides each as a run does, offline."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

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
from knowgap.suites.clarify.dataset import CASES_FILE, ClarifyCase, load_cases

OPPOSITE_OUTCOMES = labelled_file("clarify_opposite_outcomes.jsonl")
OPPOSITE_SET = "src/knowgap/judges/data/labelled/clarify_opposite_outcomes.jsonl"
OPPOSITE_NAME = ("opposite outcome: a final answer that reaches the opposite of the reference outcome with a "
                 "plausible reason (incorrect) against the reference outcome restated in the same style (correct)")
OPPOSITE_MEASURE = "specificity on the construct (opposite-outcome answers called not correct)"


class OppositeOutcome(ConstructItem):
    """One line of ``clarify_opposite_outcomes.jsonl`` (variant ``opposite``, the construct, or ``restated``)."""

    answer: str
    correct: bool


def opposite_outcomes(path: Path = OPPOSITE_OUTCOMES, variants: tuple[str, str] = ("opposite", "restated"),
                      ) -> tuple[list[OppositeOutcome], dict[str, ClarifyCase]]:
    """The set's answers (``variants``: the construct's, then the control's) and the clarify cases by id; an answer
    to no complete case is an InputError naming file, line and field."""
    numbered = read_construct_set(path, OppositeOutcome, variants)
    cases = {c.id: c for c in load_cases(CASES_FILE)}
    for line, row in numbered:
        if row.case_id not in cases or cases[row.case_id].deficient or cases[row.case_id].lang != row.lang:
            raise InputError(str(path), f"{row.case_id!r} is not a complete clarify case in {row.lang}", line=line,
                             field="case_id")
    return [row for _line, row in numbered], cases


def opposite_outcome_verdicts(rows: Sequence[OppositeOutcome],
                              verdicts: Sequence[str | None]) -> list[ConstructVerdict]:
    """The judge's verdict on each answer as ``final_correct`` reads it: only ``correct`` counts as correct."""
    return [ConstructVerdict(id=r.id, lang=r.lang, variant=r.variant, is_construct=r.variant == "opposite",
                             label=r.correct, said=None if v is None else v == "correct", outcome=v)
            for r, v in zip(rows, verdicts, strict=True)]


def measure_opposite_outcomes(judge_model: str, limit: int | None = None,
                              path: Path = OPPOSITE_OUTCOMES) -> tuple[list[ConstructVerdict], float]:
    """The clarify-correctness judge (``judge_model``) on the first ``limit`` answers of the set (all by default),
    and the seconds it took."""
    from knowgap.suites.clarify.correctness_card import judge_final_answers

    rows, cases = opposite_outcomes(path)
    rows = rows[:limit]
    verdicts, seconds = judge_final_answers(judge_model, [(cases[r.case_id], r.answer) for r in rows])
    return opposite_outcome_verdicts(rows, verdicts), seconds


def opposite_outcomes_failure(verdicts: Sequence[ConstructVerdict], judge_model: str,
                              seconds_per_item: float | None, path: Path = OPPOSITE_OUTCOMES) -> KnownFailure:
    """The card's entry from the recorded verdicts and the labelled set."""
    rows, _ = opposite_outcomes(path)
    matched(verdicts, rows, {r.id: r.correct for r in rows}, "opposite")
    return construct_failure(
        OPPOSITE_NAME, OPPOSITE_SET, OPPOSITE_MEASURE, verdicts, judge_model=judge_model,
        seconds_per_item=seconds_per_item,
        about="Asked as a run asks it (question, facts, reference conclusion, the user's question as the "
              "conversation, the answer); 'partially_correct' counts as not correct, as final_correct does.")


# clarify-correctness-approx: the reference's own terms with the outcome negated (rule negated-terms-1)

NEGATED_TERMS = labelled_file("clarify_negated_terms.jsonl")
NEGATED_NAME = ("negated terms: a final answer holding every conclusion term of the reference with the outcome "
                "negated (\"不属于违法解除\", \"the dismissal is not unlawful\"; incorrect) against the reference "
                "outcome in the same terms (correct)")
NEGATED_MEASURE = "specificity on the construct (negated answers not called correct)"


def measure_negated_terms(path: Path = NEGATED_TERMS) -> KnownFailure:
    """The clarify-correctness-approx card's entry: the offline approximation on each answer of the set, decided as a
    run decides a final answer (every conclusion term group found, no further question)."""
    from knowgap.judges.known_failures import labelled_path, rule_path
    from knowgap.suites.clarify.correctness_card import approx_verdict
    from knowgap.suites.clarify.judging import APPROX_VERSION

    rows, cases = opposite_outcomes(path, ("negated", "affirmed"))
    verdicts = []
    for r in rows:
        said = approx_verdict(r.answer, cases[r.case_id])
        verdicts.append(ConstructVerdict(id=r.id, lang=r.lang, variant=r.variant, is_construct=r.variant == "negated",
                                         label=r.correct, said=said, outcome="correct" if said else "not correct"))
    return construct_failure(
        NEGATED_NAME, labelled_path(path), NEGATED_MEASURE, verdicts,
        judge_model=f"no model: the offline approximation {APPROX_VERSION}", seconds_per_item=None,
        rule_file=rule_path(path),
        about="Decided as a run decides a final answer (final_correct_approx: every conclusion term group found and "
              "no further question); each negated answer holds one alternative of every conclusion term group.")
