"""The extract suite's summary coverage as a judge of the catalogue (``summary-coverage``: does the summary mention
each aspect clause of the review?), declared here where it lives, with its validator and its labelled set
(``judges/data/labelled/summary_coverage.jsonl``: clauses of the clean reviews against real summaries,
hand-labelled)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from knowgap.errors import InputError
from knowgap.jsonl import read_models
from knowgap.judges.cards import KnownFailure, Labelling, ValidityCard, sha256_files
from knowgap.judges.judge import Judge, Progress
from knowgap.judges.known_failures import construct_entry
from knowgap.judges.labelled_sets import LabelledItem, labelled_file, labelled_items, stratified
from knowgap.judges.offline_cards import offline_card, sample_method
from knowgap.suites.extract.coverage import VERSION, Coverage, review_aspects, summary_coverage
from knowgap.text.languages import different_languages


class ClauseCoverageLabel(LabelledItem):
    """One aspect clause of a review (as the coverage judge cuts it) against a real summary of that review,
    labelled by reading them (rule ``coverage-1``, docs/judges.md)."""

    id: str
    case: str = Field(description="the extract case the review comes from")
    lang: str
    review: str
    clause: str = Field(description="one of review_aspects(review)")
    summary: str
    covered: bool = Field(description="the summary mentions what the clause is about (its thing and what it says of "
                                      "it), in any wording or language; true or not")
    disputable: bool
    source: str = Field(description="the model and run the summary comes from")


def clause_coverage_items() -> tuple[list[ClauseCoverageLabel], Path]:
    return labelled_items(labelled_file("summary_coverage.jsonl"), ClauseCoverageLabel, "labelled clauses")


def same_language_clause_items() -> tuple[list[ClauseCoverageLabel], Path, int]:
    """The labelled (clause, summary) pairs whose summary is in its review's language (the pairs the coverage
    judge scores), the file, and how many were left out."""
    items, path = clause_coverage_items()
    kept = [it for it in items if not different_languages(it.review, it.summary)]
    return kept, path, len(items) - len(kept)


_NOTES = ("Aspect clauses of the extract suite's clean reviews (MAMS-ACSA and the suite's own Chinese "
                   "reviews), cut as the judge cuts them, each against a real summary of its review by "
                   "local:qwen2.5-0.5b or local:qwen2.5-1.5b; labelled covered or not by reading them (rule "
                   "coverage-1, docs/judges.md) before the judge ran on them. One annotator; many summaries copy "
                   "the review, which makes covered pairs easy.")

CLAIM = "extract.summary_coverage: share of the review's aspect clauses that some summary clause covers"
"""What the card validates, in the metric's words (the card rule, issue 37)."""
LABELLING = Labelling(rule="src/knowgap/judges/data/labelled/SOURCES.md (rule coverage-1), committed with the labels "
                           "in f572e21",
                      by="unknown: one annotator, not named (f572e21, 2026-12-05; not said to be a person or a "
                         "model), no second annotator")
"""Who labelled the set, as its history shows it (docs/judges.md, who made every shipped label set)."""


def writer(item: ClauseCoverageLabel) -> str:
    """The model that wrote the item's summary: its source up to the first comma (``local:qwen2.5-0.5b, ...``)."""
    return item.source.split(",", 1)[0].strip()


def validate_summary_coverage(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                              progress: Progress | None = None) -> ValidityCard:
    """The extract suite's summary coverage, one verdict per (review clause, summary) pair: is the clause's best
    e5 similarity to the summary's units at the threshold? On real summaries, hand-labelled; ``extra`` holds
    sensitivity and specificity per language."""
    from knowgap.text.embed import default_embedder

    items, path, left_out = same_language_clause_items()
    chosen = stratified([it.covered for it in items], limit)
    rows = [items[i] for i in chosen]
    embedder = default_embedder()
    verdicts: dict[tuple[str, str], Coverage] = {}

    def decide(i: int) -> bool:
        row = rows[i]
        key = (row.review, row.summary)
        if key not in verdicts:  # one judge call per (review, summary), as the suite makes it
            verdicts[key] = summary_coverage(row.review, row.summary, embedder)
        coverage = verdicts[key]
        return coverage.covered[coverage.clauses.index(row.clause)]

    return offline_card("summary-coverage", VERSION, "the summary covers the clause", path.name, sha256_files([path]),
                    [r.covered for r in rows], decide, progress,
                    method=sample_method(len(items), chosen, limit, "labelled (clause, summary) pairs in one language")
                    + f"; {left_out} pairs whose summary is in another language than its review left out (the "
                      "judge does not score them)",
                    groups=[r.lang for r in rows], notes=_NOTES, claim=CLAIM,
                    item_languages=[r.lang for r in rows], writers=[writer(r) for r in rows],
                    replies_how="(clause, summary) pairs: the clean reviews' aspect clauses against real summaries",
                    labelling=LABELLING)


class ClauseParaphrase(BaseModel):
    """One line of ``clause_paraphrase.jsonl`` (rule clause-paraphrase-1): a summary stating the review's first aspect
    clause in other words."""

    id: str
    lang: str
    case_id: str
    review: str
    clause: str
    summary: str
    covered: bool
    reason: str = Field(min_length=1)


CLAUSE_PARAPHRASE_NAME = ("paraphrase: a summary stating an aspect of the review in other words (\"They got a table "
                          "right away.\" for \"seated promptly\"; \"布料手感挺好。\" for "
                          "\"衣服面料摸起来还不错\"), which covers it")


def measure_clause_paraphrase(path: Path | None = None) -> KnownFailure:
    """The known-failure entry of ``summary-coverage`` on paraphrased clauses (rule clause-paraphrase-1): the share
    of summaries whose clause (the review's first, as the judge cuts it) the judge counts covered."""
    path = path or labelled_file("clause_paraphrase.jsonl")
    rows = read_models(path, ClauseParaphrase, what="summaries")
    verdicts = []
    for line, row in rows:
        if review_aspects(row.review)[:1] != [row.clause]:
            raise InputError(str(path), "not the review's first aspect clause", line=line, field="clause")
        result = summary_coverage(row.review, row.summary)
        verdicts.append(bool(result.covered[:1]) and result.covered[0])
    return construct_entry(CLAUSE_PARAPHRASE_NAME, path, "clause-paraphrase-1",
                           "sensitivity (paraphrased clauses counted covered)", [r.id for _, r in rows],
                           [r.lang for _, r in rows],
                           [v == r.covered for v, (_, r) in zip(verdicts, rows, strict=True)],
                           wrong_means="paraphrased clauses not counted covered",
                           labels=[r.covered for _, r in rows])


SUMMARY_COVERAGE = Judge(
    name="summary-coverage", kind="offline", decides="does the summary mention each aspect clause of the review?",
    current=VERSION, positive="the summary covers the clause",
    labelled_set="judges/data/labelled/summary_coverage.jsonl (clauses of the clean reviews against real 0.5B "
                 "and 1.5B summaries, hand-labelled)",
    validator=validate_summary_coverage, needs_data=False)
