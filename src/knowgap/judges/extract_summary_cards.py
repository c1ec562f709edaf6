"""The labelled real summaries of the extract suite's normal reviews (``judges/data/labelled/extract_summaries.jsonl``,
rule claims-1) and the offline faithfulness checker's card on them (issue 37, the card rule).

The set: summaries written by local:qwen2.5-0.5b and local:qwen2.5-1.5b of the suite's normal reviews (zh and en),
one item per distinct summary, each labelled ``unfaithful`` (at least one claim the review neither states nor directly
implies) by one annotator by rule claims-1 (``extract_summaries_rule.md``, committed before any label), blind to
every judge: the runs were made with ``--faithfulness-runs 0``, which skips the claims judge and the offline checker
alike, and the sheet copies no trial output. Two cards are measured on it: ``extract-claims`` (the suite's model
judge, :mod:`knowgap.suites.extract.claims_card`) and ``faithfulness``, the offline checker (here).

:func:`faithfulness_offline_card`: the SHIPPED checker (weights fitted on SummEdits + AggreFact, so every verdict
here is held out) on every item, as an extract run scores a summary (``OfflineFaithfulness().check(review,
summary)``; faithful at score >= 0.5), its positive the card's, ``faithful``. A run leaves a refusal or a summary in
another language than its review unscored: it is in neither ``faithfulness_offline`` nor ``offline_unfaithful_rate``
(it is counted in ``offline_outcome``), so the card's figure is on the summaries the checker scores, the population
those metrics count; the unscored ones are counted in ``extra`` (``unscored_*``) with the figure the earlier card's
convention (unscored counted as wrong verdicts) would give. The figures of the card measured before on SummEdits +
AggreFact (``summedits_aggrefact_*``) are kept apart in ``extra``, never pooled, and the judge's known failures are
measured again (:mod:`knowgap.judges.known_failures`).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from difflib import SequenceMatcher
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from knowgap.errors import InputError
from knowgap.jsonl import read_models
from knowgap.judges.cards import (
    Estimate,
    Labelling,
    ValidityCard,
    binary_card,
    binary_measures,
    confusion_of,
    earlier_card_extra,
    group_measures,
    sha256_files,
)
from knowgap.judges.labelled_sets import LabelledItem, labelled_file
from knowgap.judges.validation import stratified_sample

REAL_SET = "extract_summaries.jsonl"
RULE_FILE = "src/knowgap/judges/data/labelled/extract_summaries_rule.md"
LABELLED_BY = ("one annotator: a Claude-based helper agent (a language model) working for the lead engineer, blind to "
               "the judge's verdicts, by rule claims-1; no second annotator")
REPLIES_HOW = ("summaries of the extract suite's normal reviews by local:qwen2.5-1.5b (two runs of 16 normal cases, 3 "
               "summarizer runs each at temperature 0, prompt default) and local:qwen2.5-0.5b (the 40 normal cases, "
               "one run at temperature 0 with prompt default and one with prompt guarded), one item per distinct "
               "summary (experiments/extract_real_summaries.py)")


class SummaryLabel(LabelledItem):
    """A real summary of a normal review, labelled by rule claims-1 (``extract_summaries_rule.md``)."""

    id: str = Field(description="MODEL/CASE/sha256(summary)[:8] (experiments/extract_real_summaries.py)")
    model: str = Field(description="the model that wrote the summary (the run's target)")
    source: str = Field(description="the runs, trials and summarizer calls it comes from, 'RUN#TRIAL#CALL; ...'")
    case_id: str
    lang: Literal["zh", "en"] = Field(description="the review's language")
    review: str
    summary: str
    finish_reason: str | None = None
    unfaithful: bool = Field(description="at least one claim the review neither states nor directly implies")
    reason: str = Field(min_length=1)
    disputable: bool = False


def summary_labels(path: Path | None = None) -> tuple[list[SummaryLabel], Path]:
    """Every labelled summary of ``extract_summaries.jsonl`` (or ``path``); a bad row, or an id twice, is an
    InputError naming file, line and field."""
    path = path or labelled_file(REAL_SET)
    items: list[SummaryLabel] = []
    seen: set[str] = set()
    for line, item in read_models(path, SummaryLabel, what="labelled summaries"):
        if item.id in seen:
            raise InputError(str(path), f"summary {item.id} is labelled twice", line=line, field="id")
        seen.add(item.id)
        items.append(item)
    return items, path


# --- the offline faithfulness checker's card on the real summaries --------------------------------------------

Check = tuple[str, float | None]
"""The checker's verdict of one summary (faithful, unfaithful, empty, refusal, other_language) and its score (None
for the last three: the summary is not scored)."""
Checks = Callable[[Sequence[tuple[str, str]]], Sequence[Check]]
"""The checker on each (review, summary), in order."""

EARLIER = ("faithfulness/summedits+aggrefact", "SummEdits + AggreFact (news, dialogues and sales calls summarised by "
           "other models or edited by an LLM, labelled by the benchmarks' annotators; en), 5-fold cross-validated "
           "by source document")
"""The card the checker was measured on before (its dataset, and who wrote and labelled it): its figures are kept
apart in ``extra`` (``summedits_aggrefact_*``)."""
CLAIM = ("extract.faithfulness_offline (offline checker score, 0..1, higher = more faithful) and "
         "offline_unfaithful_rate (summaries below the checker's threshold, 0.5): is a summary faithful to its review? "
         "Both count the summaries the checker scores; a refusal or a summary in another language than its review is "
         "counted in offline_outcome instead")
LABELLING = Labelling(
    rule=f"{RULE_FILE} (rule claims-1: unfaithful = at least one claim the review neither states nor directly "
         "implies; the card's positive, faithful, is its negation), committed in 2f91459 before any label; labels "
         "committed in 1768cbf, blind to every judge (the runs had --faithfulness-runs 0, which skips the offline "
         "checker too) and before any judge was measured on them",
    by=LABELLED_BY, before_judge=True)


class SummaryCheck(BaseModel):
    """The checker's verdict of one labelled summary, as a run gives it (the per-item record of the card)."""

    id: str
    model: str
    lang: str
    faithful: bool = Field(description="the label: not unfaithful by rule claims-1 (the card's positive)")
    outcome: str = Field(description="the checker's verdict: faithful, unfaithful, empty, refusal, other_language")
    score: float | None = Field(description="the checker's score; None when it leaves the summary unscored")

    @property
    def verdict(self) -> bool | None:
        """The card's verdict: faithful (True) or unfaithful (False); None for a summary the checker leaves
        unscored (in no figure of the metrics the card stands beside)."""
        return None if self.score is None else self.outcome == "faithful"


def checker_results(pairs: Sequence[tuple[str, str]]) -> list[Check]:
    """The shipped offline checker on each (review, summary) as an extract run scores a summary (one checker for the
    whole run, :meth:`knowgap.judges.faithfulness.OfflineFaithfulness.check`)."""
    from knowgap.judges.faithfulness import OfflineFaithfulness

    checker = OfflineFaithfulness()
    out: list[Check] = []
    for review, summary in pairs:
        result = checker.check(review, summary)
        out.append((result.verdict, result.score))
    return out


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


NEAR_COPY = 0.9
"""A summary whose text matches its review this much (difflib's ratio) is a copy of the review, not a summary."""


def near_copy(item: SummaryLabel) -> bool:
    """Whether the summary is its review copied (word for word, or with a few words dropped or changed)."""
    return SequenceMatcher(None, item.review, item.summary).ratio() >= NEAR_COPY


def copied(item: SummaryLabel) -> str:
    """``copy`` for a summary that is its review copied (:func:`near_copy`), else ``rewritten``: the groups the card's
    ``extra`` splits the figures by."""
    return "copy" if near_copy(item) else "rewritten"


def faithfulness_offline_card(checks: Checks = checker_results, *, limit: int | None = None, path: Path | None = None,
                              earlier: tuple[str, str] | None = EARLIER) -> tuple[ValidityCard, list[SummaryCheck]]:
    """The offline faithfulness checker's card on every labelled real summary (the module's docstring), or on a seeded
    sample of ``limit`` stratified by language and label, and each summary's verdict; ``checks`` gives the checker's
    (verdict, score) of each (review, summary)."""
    from knowgap.judges.faithfulness import DEFAULT_THRESHOLD, JUDGE_NAME, VERSION
    from knowgap.judges.known_failures import (
        DID_NOT_MENTION,
        NOT_MENTIONED_LEAD,
        measure_did_not_mention,
        measure_verbatim_extracts,
    )

    every, path = summary_labels(path)
    items = [every[i] for i in stratified_sample(every, [(it.lang, it.unfaithful) for it in every], limit)]
    start = time.perf_counter()
    found = list(checks([(it.review, it.summary) for it in items]))
    seconds = time.perf_counter() - start
    if len(found) != len(items):
        raise ValueError(f"{len(found)} checks for {len(items)} summaries")
    per_item = [SummaryCheck(id=it.id, model=it.model, lang=it.lang, faithful=not it.unfaithful, outcome=outcome,
                             score=score) for it, (outcome, score) in zip(items, found, strict=True)]
    scored = [(it, p) for it, p in zip(items, per_item, strict=True) if p.verdict is not None]
    verdicts = [p.verdict for _, p in scored]
    labels = [p.faithful for _, p in scored]
    extra: dict[str, Estimate | float | str] = {}
    extra.update(group_measures([it.model for it, _ in scored], verdicts, labels))
    extra.update(group_measures([f"{it.model}_{it.lang}" for it, _ in scored], verdicts, labels))
    unscored = [p for p in per_item if p.verdict is None]
    extra["unscored"] = float(len(unscored))
    for outcome in sorted({p.outcome for p in unscored}):
        extra[f"unscored_{outcome}"] = float(sum(p.outcome == outcome for p in unscored))
        extra[f"unscored_{outcome}_unfaithful"] = float(sum(p.outcome == outcome and not p.faithful
                                                            for p in unscored))
    counted_wrong = binary_measures(confusion_of([p.verdict for p in per_item], [p.faithful for p in per_item])[0])
    extra["balanced_accuracy_unscored_counted_wrong"] = counted_wrong["balanced_accuracy"]
    extra.update(group_measures([copied(it) for it, _ in scored], verdicts, labels))
    extra.update(group_measures([f"{it.lang}_{copied(it)}" for it, _ in scored], verdicts, labels))
    for label, name in ((True, "faithful"), (False, "unfaithful")):
        extra[f"mean_score_{name}"] = _mean([p.score for _, p in scored if p.faithful == label and p.score is not None])
    if earlier is not None:
        extra.update(earlier_card_extra(JUDGE_NAME, VERSION, None, earlier[0], earlier[1],
                                        prefix="summedits_aggrefact"))
    outcomes = ", ".join(f"{o} {n}" for o, n in sorted(
        (o, sum(p.outcome == o for p in unscored)) for o in {p.outcome for p in unscored}))
    scored_zh = {it.model for it, _ in scored if it.lang == "zh"}
    notes = (f"Real summaries of the extract suite's normal reviews, labelled by rule claims-1 blind to every judge. "
             f"The checker scores {len(scored)} of the {len(items)}; it leaves {len(unscored)} unscored ({outcomes}), "
             "which a run counts in offline_outcome, not in faithfulness_offline nor offline_unfaithful_rate, so they "
             "are not in the figure (extra: unscored_*, and balanced_accuracy_unscored_counted_wrong, the figure with "
             "them counted as wrong verdicts, the earlier card's convention). The embedded models write English "
             "summaries of many Chinese reviews (other_language): the zh items the checker scores are "
             f"{sum(it.lang == 'zh' for it, _ in scored)}, written by {', '.join(sorted(scored_zh)) or 'no model'}, "
             f"{sum(near_copy(it) for it, _ in scored if it.lang == 'zh')} of them the review copied. A copy (difflib "
             f"ratio >= {NEAR_COPY:g} with its review: {sum(near_copy(it) for it, _ in scored)} of the "
             f"{len(scored)}) is the easy case for a checker that rewards copied words; *_copy / *_rewritten (and "
             "LANG_copy / LANG_rewritten) split the figures, the rewritten summaries being what it is for. "
             "extra: each model's and model_language's figures, mean_score_faithful / mean_score_unfaithful (the "
             "score faithfulness_offline averages, by label), summedits_aggrefact_* (the earlier card: other "
             "models' English news, dialogue and sales-call summaries, cross-validated on the pairs the shipped "
             "weights were fitted on; kept apart, not pooled). The checker was written and fitted before this set "
             "existed and was not changed for it: every verdict is held out.")
    card = binary_card(JUDGE_NAME, VERSION, verdicts, labels, positive="faithful", dataset=path.name,
                       dataset_sha256=sha256_files([path]), seconds=seconds * len(scored) / len(items),  # per item
                       method=(f"all {len(items)}" if len(items) == len(every) else
                               f"a seeded sample (seed 0) of {len(items)} of {len(every)}, stratified by language and "
                               "label,") + " labelled real summaries, each checked against its review as an "
                              f"extract run checks it (faithful at score >= {DEFAULT_THRESHOLD:g}); the figure on the "
                              f"{len(scored)} the checker scores",
                       notes=notes, extra=extra, claim=CLAIM, item_languages=[it.lang for it, _ in scored],
                       writers=[it.model for it, _ in scored], replies_how=REPLIES_HOW, labelling=LABELLING,
                       known_failures=[measure_verbatim_extracts(), measure_did_not_mention(DID_NOT_MENTION),
                                       measure_did_not_mention(NOT_MENTIONED_LEAD)])
    return card, per_item
