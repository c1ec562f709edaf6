"""The partial suite's gap matcher as a judge of the catalogue (``gap-matcher``: does a gap the agent named refer
to a given hidden field?), declared here where it lives, with its validator and its labelled sets: the card's set is
``judges/data/labelled/partial_gaps_real.jsonl`` (the ``missing`` items of real replies of two models to the suite's
role views, each paired with each expected missing field of the role's oracle as the judge decides them, labelled by
rule gap-match-1 of ``partial_cards_rule.md`` before the matcher ran on them; issue 37, the card rule), and
``partial_gaps.jsonl`` (named gaps written against the scenarios, labelled by their author) an extra discrimination
check in the card's ``extra``, never its figure."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import Field

from knowgap.judges.cards import KnownFailure, Labelling, ValidityCard, binary_measures, confusion_of, sha256_files
from knowgap.judges.judge import Judge, Progress
from knowgap.judges.known_failures import construct_entry
from knowgap.judges.labelled_sets import labelled_file, stratified
from knowgap.judges.offline_cards import offline_card, sample_method
from knowgap.suites.partial.labelled_rows import RealReplyRow, ScenarioRow, rows_with_scenarios
from knowgap.suites.partial.scoring import GAP_MATCH_VERSION, gap_matches


class GapLabel(ScenarioRow):
    path: str = Field(description="the hidden field")
    named: str = Field(description="a gap as an agent names it")
    match: bool


class GapPair(RealReplyRow):
    """A (named gap, expected missing field) pair of a real reply, labelled by rule gap-match-1
    (``partial_cards_rule.md``)."""

    path: str = Field(description="an expected missing field (the role oracle's hidden_relevant in the run)")
    named: str = Field(description="an item of the reply's missing list, as the suite's parser reads it")
    match: bool = Field(description="rule gap-match-1: the named gap is about the field")
    reason: str = Field(min_length=1)


Pair = TypeVar("Pair", GapLabel, GapPair)


def _with_aliases(path: Path, model: type[Pair], what: str) -> list[tuple[Pair, list[str]]]:
    """Each labelled pair of ``path`` with its field's labels from its scenario (``field_labels``); a pair naming no
    scenario is an InputError naming the file, line and field."""
    return [(pair, scenario.field_labels.get(pair.path, []))
            for _, pair, scenario in rows_with_scenarios(path, model, what)]


@dataclass(frozen=True)
class GapItem:
    id: str
    named: str
    path: str
    aliases: list[str]
    match: bool


def gap_items() -> tuple[list[GapItem], Path]:
    """The labelled (named gap, field) pairs with the field's labels from its scenario (``field_labels``)."""
    path = labelled_file("partial_gaps.jsonl")
    return [GapItem(id=label.id, named=label.named, path=label.path, aliases=aliases, match=label.match)
            for label, aliases in _with_aliases(path, GapLabel, "labelled gaps")], path


@dataclass(frozen=True)
class RealGapItem:
    id: str
    model: str
    lang: str
    named: str
    path: str
    aliases: list[str]
    match: bool


REAL_FILE = "partial_gaps_real.jsonl"


def real_gap_items() -> tuple[list[RealGapItem], Path]:
    """The labelled real (named gap, field) pairs with the field's labels from its scenario."""
    path = labelled_file(REAL_FILE)
    return [RealGapItem(id=label.id, model=label.model, lang=label.lang, named=label.named, path=label.path,
                        aliases=aliases, match=label.match)
            for label, aliases in _with_aliases(path, GapPair, "labelled gap pairs")], path


CLAIM = ("partial.gap_precision, gap_recall, priority_ndcg, evidence_precision, evidence_recall, invented_evidence: "
         "does a named gap match an expected missing field?")
LABELLING = Labelling(
    rule="src/knowgap/judges/data/labelled/partial_cards_rule.md, rule gap-match-1, committed in 1a27c37 before any "
         "pair was labelled",
    by="one annotator: a Claude-based helper agent (a language model) working for the lead engineer, blind to the "
       "judge's verdicts (the sheet of experiments/partial_real_replies.py holds no trial output or score), by rule "
       "gap-match-1; no second annotator",
    before_judge=True)
REAL_NOTES = ("Real replies of the partial suite's role views (view=authorized, no budget): each item of a reply's "
              "missing list (as the suite parses it) against each expected missing field of the role's oracle in "
              "the run (hidden_relevant), one item per distinct (model, case, named gap, field), labelled by rule "
              "gap-match-1 before the matcher ran on them. The pairs hold named gaps only: the cited evidence that "
              "evidence_precision, evidence_recall and invented_evidence match with the same matcher is not "
              "among them. extra: sensitivity/specificity per model, and the constructed set (partial_gaps.jsonl, "
              "64 pairs written for knowgap, labelled by their author) as a discrimination check only.")


def validate_gap_matcher(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                         progress: Progress | None = None) -> ValidityCard:
    """The partial suite's gap matcher on real named gaps: does a gap the agent named refer to a given hidden
    field? ``limit``: a seeded sample balanced between the labels; the constructed pairs go to ``extra`` whole."""
    items, path = real_gap_items()
    chosen = stratified([it.match for it in items], limit)
    rows = [items[i] for i in chosen]
    built, built_path = gap_items()
    c, _ = confusion_of([gap_matches(r.named, r.path, r.aliases) for r in built], [r.match for r in built])
    extra = {f"constructed_{k}": v for k, v in binary_measures(c).items()
             if k in ("balanced_accuracy", "sensitivity", "specificity") and v.value is not None}
    card = offline_card("gap-matcher", GAP_MATCH_VERSION, "the named gap refers to the field", path.name,
                        sha256_files([path, built_path]), [r.match for r in rows],
                        lambda i: gap_matches(rows[i].named, rows[i].path, rows[i].aliases), progress,
                        method=sample_method(len(items), chosen, limit, "labelled real (named gap, field) pairs"),
                        notes=REAL_NOTES, groups=[r.model for r in rows], claim=CLAIM,
                        item_languages=[r.lang for r in rows], writers=[r.model for r in rows],
                        replies_how="missing items of replies to the partial suite's role views (knowgap run partial "
                                    "--views authorized), paired with the oracle's expected missing fields",
                        labelling=LABELLING)
    card.extra.update(extra)
    return card


class GapConstruct(ScenarioRow):
    """One line of ``gap_paraphrase.jsonl`` (rule gap-paraphrase-1): a named gap against a hidden field."""

    lang: str
    path: str
    named: str
    kind: str = Field(description="paraphrase (the field in other words) or near_miss (the record and another field)")
    match: bool
    reason: str = Field(min_length=1)


GAP_PARAPHRASE_NAME = ("paraphrase vs near miss: a gap naming the field in other words (\"how much the customer paid\" "
                       "for orders.amount: a match) against one naming the field's record and another of its fields "
                       "(\"the orders delivery date\": no match)")


def measure_gap_paraphrase(path: Path | None = None) -> KnownFailure:
    """The known-failure entry of ``gap-matcher`` on paraphrases and near misses (rule gap-paraphrase-1): the share
    of pairs decided as labelled, the matcher called as ``gap_scores`` calls it (a record's name counts)."""
    path = path or labelled_file("gap_paraphrase.jsonl")
    rows = [(row, gap_matches(row.named, row.path, scenario.field_labels.get(row.path, [])))
            for _, row, scenario in rows_with_scenarios(path, GapConstruct, "named gaps")]
    right = [called == row.match for row, called in rows]
    by_kind = {kind: (sum(ok for ok, (r, _) in zip(right, rows, strict=True) if r.kind == kind),
                      sum(r.kind == kind for r, _ in rows)) for kind in sorted({r.kind for r, _ in rows})}
    return construct_entry(GAP_PARAPHRASE_NAME, path, "gap-paraphrase-1",
                           "accuracy (pairs decided as labelled; half paraphrases, half near misses)",
                           [r.id for r, _ in rows], [r.lang for r, _ in rows], right, wrong_means="pairs decided wrong",
                           labels=[r.match for r, _ in rows],
                           notes="Right per kind: " + ", ".join(f"{k} {a} of {n}" for k, (a, n) in by_kind.items())
                                 + ".")


GAP_MATCHER = Judge(
    name="gap-matcher", kind="offline", decides="does a named gap match an expected missing field?",
    current=GAP_MATCH_VERSION, positive="matches",
    labelled_set="judges/data/labelled/partial_gaps_real.jsonl (real named gaps of the 1.5B and 0.5B, rule "
                 "gap-match-1) + partial_gaps.jsonl (constructed, extra)",
    validator=validate_gap_matcher)
