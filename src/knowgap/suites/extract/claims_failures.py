"""extract-claims's known failure (issue 37): a summary with ONE fact changed. On real summaries the 1.5B judge passed
changed facts (undercooked rice as "too dry") and invented details; the construct set
``judges/data/labelled/extract_changed_facts.jsonl`` (rule changed-fact-1) holds, per normal review of the suite, a
faithful summary and the same summary with one number or entity changed. The judge is asked as a run asks it
(:func:`~knowgap.suites.extract.claims_card.judge_summaries`: decompose, verify, seed 0, the refusal rule first); the
entry is made from the per-item verdicts by :func:`knowgap.judges.model_failures.construct_failure`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

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

CHANGED_FACTS = labelled_file("extract_changed_facts.jsonl")
CHANGED_SET = "src/knowgap/judges/data/labelled/extract_changed_facts.jsonl"
CHANGED_NAME = ("changed fact: a summary identical to a faithful one but for one number, time span, place, object or "
                "person changed (unfaithful) against the faithful summary (faithful)")
CHANGED_MEASURE = "sensitivity on the construct (changed-fact summaries found unfaithful: score < 1)"


class ChangedFact(ConstructItem):
    """One line of ``extract_changed_facts.jsonl`` (variant ``changed``, the construct, or ``faithful``)."""

    review: str
    summary: str
    unfaithful: bool
    change: Literal["", "number", "entity"]


def changed_facts(path: Path = CHANGED_FACTS) -> list[ChangedFact]:
    """The set's summaries; a changed summary that does not say what kind of fact changed is an InputError naming
    file, line and field."""
    numbered = read_construct_set(path, ChangedFact, ("changed", "faithful"))
    for line, row in numbered:
        if (row.variant == "changed") != bool(row.change):
            raise InputError(str(path), f"record {row.id}: a changed summary names its change, a faithful one none",
                             line=line, field="change")
    return [row for _line, row in numbered]


def changed_fact_verdicts(rows: Sequence[ChangedFact], results: Sequence[object]) -> list[ConstructVerdict]:
    """The claims judge's result on each summary as the card reads it: unfaithful when scored below 1."""
    from knowgap.suites.extract.claims_card import unfaithful_verdict
    from knowgap.suites.extract.claims_judge import JudgeFaithfulness

    out = []
    for row, result in zip(rows, results, strict=True):
        judged = result if isinstance(result, JudgeFaithfulness) else None
        outcome = None if judged is None else (
            f"{judged.outcome} {judged.score:.2f}" if judged.score is not None else judged.outcome)
        out.append(ConstructVerdict(id=row.id, lang=row.lang, variant=row.variant,
                                    is_construct=row.variant == "changed", label=row.unfaithful,
                                    said=unfaithful_verdict(judged), outcome=outcome))
    return out


def measure_changed_facts(judge_model: str, limit: int | None = None,
                          path: Path = CHANGED_FACTS) -> tuple[list[ConstructVerdict], float]:
    """The extract-claims judge (``judge_model``) on the first ``limit`` summaries of the set (all by default), and
    the seconds it took."""
    from knowgap.suites.extract.claims_card import judge_summaries

    rows = changed_facts(path)[:limit]
    results, seconds = judge_summaries(judge_model, [(r.review, r.summary) for r in rows])
    return changed_fact_verdicts(rows, results), seconds


def changed_facts_failure(verdicts: Sequence[ConstructVerdict], judge_model: str,
                          seconds_per_item: float | None, path: Path = CHANGED_FACTS) -> KnownFailure:
    """The card's entry from the recorded verdicts and the labelled set."""
    rows = changed_facts(path)
    matched(verdicts, rows, {r.id: r.unfaithful for r in rows}, "changed")
    kinds = {r.id: r.change for r in rows}
    by_kind = "; ".join(
        f"{kind} {sum(v.said is True for v in verdicts if v.is_construct and kinds[v.id] == kind)} of "
        f"{sum(v.is_construct and kinds[v.id] == kind for v in verdicts)}" for kind in ("number", "entity"))
    return construct_failure(
        CHANGED_NAME, CHANGED_SET, CHANGED_MEASURE, verdicts, judge_model=judge_model,
        seconds_per_item=seconds_per_item,
        about=f"Changed summaries found unfaithful per kind of change: {by_kind}. Asked as a run asks it (decompose, "
              "then verify each claim, seed 0; the refusal rule first); the zh summaries are in Chinese.")
