"""The clarify rubric judge as a judge of the catalogue (``clarify-rubric``), with its validators (the machinery:
:mod:`knowgap.judges.rubric_validity`).

The card (issue 37, the card rule): the judge on real replies of two local models to the clarify suite's deficient
cases, each rated A-D on the seed's rater checklist by an annotator
(``judges/data/labelled/clarify_rubric_labels.jsonl``, rule rubric-real-1 of ``clarify_model_judges_rule.md``,
committed before the judge ran on them). Its figure: the
balanced accuracy of "adequate" (weighted total >= 3.0) by the judge's total as it runs (the model's ratings with
the offline bottom anchors: combined) against the annotator's, per language; the model's own ratings (no anchors)
are measured too (``model_only``). ``extra``: the ordinal agreement (mean absolute error and Spearman's rho of the
total, per dimension the mean absolute error, the share within one point and the exact agreement of the rounded
rating), both for the judge as it runs and for the model alone. Each judged reply's verdict is written beside the
cards measured here (``KNOWGAP_HOME/judge_cards/KEY.items.jsonl``).

The constructed pairs the judge was measured on before (per deficient case: its reference reply against a fluent
reply that states the missing facts as known, no question) stay as a discrimination check
(:func:`validate_clarify_rubric_pairs`); they never make the card.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

from knowgap.errors import InputError
from knowgap.judges.cards import Estimate, Labelling, ValidityCard
from knowgap.judges.geval import Ratings
from knowgap.judges.judge import Judge, Progress
from knowgap.judges.labelled_sets import DEFAULT_JUDGE_MODEL
from knowgap.judges.rubric_validity import (
    GatewayContext,
    RubricPair,
    ScoredReply,
    ScoredVerdict,
    validate_pairs,
    validate_scored,
    write_verdicts,
)
from knowgap.stats import wilson
from knowgap.suites.clarify.dataset import CASES_FILE, GUIDELINE_FILES, ClarifyCase, load_cases, load_guideline
from knowgap.suites.clarify.judging import RUBRIC_WEIGHTS, assuming_reply, judge_rubric, reference_reply
from knowgap.suites.clarify.labelled_replies import MODEL_JUDGES_RULE_FILE, rubric_labels
from knowgap.suites.clarify.prompts import RUBRIC_VERSION

JUDGE = "clarify-rubric"
RUBRIC_CAP = 48
"""Replies the card is measured on unless a limit says otherwise (the lead's cap of model time: ~4 requests each)."""
CLAIM = ("clarify.rubric_* (rubric_total: the weighted rubric total, 1-5, of a reply to a deficient case by the seed's "
         "rater checklist): measured as: is the reply adequate (weighted total >= 3.0) by the judge as by the "
         "annotator, and how close are the judge's total and dimension ratings to the annotator's")
LABELLING = Labelling(
    rule=f"{MODEL_JUDGES_RULE_FILE} (rule rubric-real-1), committed in 00a34d0 before any label; labels committed in "
         "8a5c640, before the judge ran on them",
    by="one annotator: a Claude-based helper agent (a language model) working for the lead engineer, blind to the "
       "judge's verdicts, by rule rubric-real-1; no second annotator",
    before_judge=True)
REPLIES_HOW = ("local models' first replies to the clarify deficient cases (knowgap run clarify --seed 0 --sample 40: "
               "the 1.5B with prompt plain and, for 26 zh trials, cautious; the 0.5B with plain and cautious), one "
               "item per distinct reply (experiments/clarify_real_replies.py; judges/data/labelled/"
               "clarify_replies.jsonl)")
NOTES = ("Real replies of local:qwen2.5-0.5b and local:qwen2.5-1.5b to the clarify deficient cases, rated A-D by one "
         "annotator on the seed's checklist (rule rubric-real-1) before the judge ran. The local models almost never "
         "ask and rarely condition their answer, so B is 1 for nearly every reply and few replies reach a weighted "
         "total of 3.0: the labelled pool of 112 holds 1 adequate reply (zh, local:qwen2.5-1.5b) and none in en, so "
         "the binary figure has no balanced accuracy in en (one class) and rests on one positive in zh; the ordinal "
         "agreement in extra (mean absolute error, Spearman's rho, per dimension) is what this card measures of the "
         "rubric on such replies. Measured 2026-12-05 with local:qwen2.5-1.5b (42 replies, 4 requests each, 11.5 s a "
         "reply): the model's own ratings do not tell the replies apart: every dimension 2.85-4.16 and every total "
         "3.13-4.00 (median 3.72), so the model alone calls all 42 adequate (model_only 0.50), including a reply "
         "naming the flower pot's maker as liable and degenerate repetitions; its totals rank the replies like the "
         "annotator's barely (Spearman 0.09 [-0.23, 0.39], mean absolute error 1.90). As the judge runs, the offline "
         "anchors (B set to 1 on the 39 of 42 replies where the clarification detector finds no question, A too on "
         "11 of them that state no condition either) pull the totals to 1.88-3.13, around the bar: 7 inadequate zh "
         "replies still land at 3.01-3.13, and 2 whose self-posed questions the detector takes for asking keep the "
         "model's 3.75 and 3.78 (9 false adequate of 23 zh, specificity 0.78; none of 18 en); the one adequate reply "
         "(which asks) keeps the model's 3.82; combined 0.89 [0.45, 0.92] on that one positive is the anchors' and "
         "the bar's doing, not the model's (Spearman 0.15 [-0.17, 0.44], mean absolute error 1.06). The constructed "
         "pairs measured before (reference reply vs an assuming reply: 0.98 with the anchors, 0.21 by the model "
         "alone; superseded/) stay a discrimination check (validate_clarify_rubric_pairs), never part of this card.")


async def _rate(guideline: str, case: ClarifyCase, ctx: GatewayContext, reply: str) -> Ratings:
    return await judge_rubric(ctx, guideline, case, reply)


async def _rate_reply(guideline: str, case: ClarifyCase, reply: str, ctx: GatewayContext) -> Ratings:
    return await judge_rubric(ctx, guideline, case, reply)


@dataclass(frozen=True)
class WeightedReply(ScoredReply):
    """A scored reply whose total is the rubric's weighted total (A 0.3, B 0.3, C 0.25, D 0.15), as the judge's."""

    @property
    def label_total(self) -> float:
        weights = {name: RUBRIC_WEIGHTS[name] for name in self.labels}
        return sum(weights[name] * score for name, score in self.labels.items()) / sum(weights.values())


def clarify_pairs() -> tuple[list[RubricPair], list[Path]]:
    """A pair per deficient case of the shipped cases, and the files they come from."""
    guidelines = {lang: load_guideline(lang) for lang in GUIDELINE_FILES}
    pairs = []
    for case in load_cases(CASES_FILE):
        if case.deficient:
            rate = partial(_rate, guidelines[case.lang], case)
            pairs.append(RubricPair(case.id, case.lang, reference_reply(case), assuming_reply(case), rate))
    return pairs, [CASES_FILE, *GUIDELINE_FILES.values()]


def scored_replies(labels_path: Path | None = None, replies_path: Path | None = None,
                   ) -> tuple[list[WeightedReply], list[Path]]:
    """The labelled real replies, each with the judge call that rates it on its own case, and the files the
    measurement rests on (replies, labels, cases, guidelines)."""
    rows, files = rubric_labels(labels_path, replies_path)
    cases = {case.id: case for case in load_cases(CASES_FILE)}
    guidelines = {lang: load_guideline(lang) for lang in GUIDELINE_FILES}
    replies = []
    for item, label in rows:
        case = cases.get(item.case_id)
        if case is None:
            raise InputError(str(files[0]), f"record {item.id}: no case {item.case_id} in {CASES_FILE.name}",
                             field="case_id")
        replies.append(WeightedReply(item.id, item.model, item.lang, label.scores(),
                                     partial(_rate_reply, guidelines[item.lang], case, item.reply)))
    return replies, [*files, CASES_FILE, *GUIDELINE_FILES.values()]


def _rounded_agreement(verdicts: list[ScoredVerdict]) -> dict[str, Estimate | float]:
    """Per dimension, the share of replies whose rating rounds to the annotator's score (``DIM_exact``, and
    ``DIM_exact_model_only`` for the model's own), and per language the mean absolute error of the total."""
    out: dict[str, Estimate | float] = {}
    for name in RUBRIC_WEIGHTS:
        for tag, source in (("", "ratings"), ("_model_only", "model_ratings")):
            hits = [abs(value - v.labels[name]) < 0.5 for v in verdicts
                    if (value := getattr(v, source).get(name)) is not None]
            if hits:
                lo, hi = wilson(sum(hits), len(hits))
                out[f"{name}_exact{tag}"] = Estimate(value=sum(hits) / len(hits), ci_low=lo, ci_high=hi)
    for lang in sorted({v.lang for v in verdicts}):
        for tag, field in (("", "total"), ("_model_only", "model_total")):
            errors = [abs(total - v.label_total) for v in verdicts
                      if v.lang == lang and (total := getattr(v, field)) is not None]
            if errors:
                out[f"total_mae{tag}_{lang}"] = sum(errors) / len(errors)
    return out


def measure_clarify_rubric(limit: int | None, judge_model: str, progress: Progress | None = None, *,
                           labels_path: Path | None = None, replies_path: Path | None = None,
                           ) -> tuple[ValidityCard, list[ScoredVerdict]]:
    """The card of the rubric judge (``judge_model``) on the labelled real replies (all, or ``limit`` of them by
    the seeded sample stratified by language and label) and each judged reply's verdict."""
    replies, files = scored_replies(labels_path, replies_path)
    card, verdicts = validate_scored(JUDGE, RUBRIC_VERSION, replies, files, judge_model=judge_model, limit=limit,
                                     progress=progress, what="labelled real replies to the deficient cases",
                                     notes=NOTES, claim=CLAIM, replies_how=REPLIES_HOW, labelling=LABELLING)
    card.extra |= _rounded_agreement(verdicts)
    card.method += ("; clarify's total is the weighted mean (A 0.3, B 0.3, C 0.25, D 0.15, as rubric_total), for the "
                    "judge and the annotator alike; extra also: per dimension the share of ratings that round to the "
                    "annotator's score (DIM_exact) and per language the mean absolute error of the total")
    return card, verdicts


def validate_clarify_rubric(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                            progress: Progress | None = None) -> ValidityCard:
    """The catalogue's validator: the card on the labelled real replies (default :data:`RUBRIC_CAP` of them), the
    per-reply verdicts written beside the cards measured here; ``data_dir`` is not read (the set ships)."""
    card, verdicts = measure_clarify_rubric(RUBRIC_CAP if limit is None else limit,
                                            judge_model or DEFAULT_JUDGE_MODEL, progress)
    write_verdicts(card, verdicts)
    return card


def validate_clarify_rubric_pairs(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                                  progress: Progress | None = None) -> ValidityCard:
    """The discrimination check on the constructed pairs (all, or ``limit`` drawn at random, seeded): is the
    reference reply rated above the assuming reply? The pairs ship with knowgap, ``data_dir`` is not read."""
    pairs, files = clarify_pairs()
    return validate_pairs("clarify", RUBRIC_VERSION, pairs, files, judge_model=judge_model, limit=limit,
                          progress=progress, anchor_checks="the clarification detector")


CLARIFY_RUBRIC = Judge(
    name=JUDGE, kind="model", decides="1-5 rubric scores of a clarify reply", current=RUBRIC_VERSION,
    positive="adequate reply: weighted rubric total >= 3.0",
    labelled_set="judges/data/labelled/clarify_rubric_labels.jsonl (real replies of local:qwen2.5-0.5b and "
                 "local:qwen2.5-1.5b to the deficient cases, zh and en; rule rubric-real-1)",
    validator=validate_clarify_rubric, needs_data=False)
