"""The cards of the abstain suite's four judges measured on real replies (issue 37, the card rule): the embedded
models' answers to the leave-one-out questions of the shipped PolicyBench knowledge bases, one item per distinct
answer, labelled by rules abstained-1 and tier-1 (``judges/data/labelled/abstain_replies_rule.md``) blind to every
judge, before any judge was measured on them (``judges/data/labelled/abstain_replies.jsonl``, read by
:func:`abstain_reply_items`).

- ``abstention-llm`` (model) and ``abstention`` (the offline detector, what a run uses by default): the judge's
  abstained against the label ``abstained``, on every item.
- ``factuality-llm`` (model) and ``factuality`` (the offline tiers, the default): the judge's tier 1 or 2
  (acceptable, what ``factuality_answered`` counts) against the labelled tier 1 or 2, on the items labelled answered
  (in a run the judge is asked only of answers the abstention judge calls answered); the exact tier agreement goes
  in ``extra``.

A model judge's sample is drawn after labelling, seeded and stratified by the label and by model
(:func:`stratified_by_group`): equal classes, each split evenly between the models as far as a model's class allows.
Stratifying on the gold label leaves balanced accuracy unbiased. An offline judge costs nothing: its cards take every
item (``limit`` None). The card's ``extra`` holds each model's figures and, kept apart (another annotator, another
rule text, another writer), the figures of the card measured earlier on PolicyBench's GPT-4o rows labelled by
KnowOrNot's gpt-4.1 judge, read from that card as shipped or superseded (``policybench_gpt4o_*``), never pooled into
the figure.

This module runs no model itself: the validators in :mod:`knowgap.judges.validation` pass the judge spec's
outcomes (``outcomes(records)``), so the card is built the same way for a scripted model in tests; the offline
judges' outcomes are :func:`detector_outcomes` and :func:`offline_tiers`.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from knowgap.errors import InputError
from knowgap.jsonl import read_models
from knowgap.judges.cards import (
    Estimate,
    KnownFailure,
    Labelling,
    ValidityCard,
    binary_card,
    earlier_card_extra,
    group_measures,
    sha256_files,
)
from knowgap.judges.labelled_sets import SAMPLE_SEED, LabelledItem, labelled_file
from knowgap.models.structured import ParseFailure

Tier = Literal["tier_1", "tier_2", "tier_3"]
Outcomes = Callable[[list[dict[str, str]]], Sequence[str | ParseFailure]]
"""The judge spec's outcome for each record (``{field: value}`` of the spec's fields), in order."""

LABELLED_SET = "abstain_replies.jsonl"
ABSTENTION_CAP = 40
"""Items the abstention-llm card is measured on unless a limit says otherwise (10 per model and class)."""
FACTUALITY_CAP = 30
"""Answered items the factuality-llm card is measured on unless a limit says otherwise."""

RULE = ("src/knowgap/judges/data/labelled/abstain_replies_rule.md (rules abstained-1 and tier-1, KnowOrNot's "
        "definitions), committed in b993df1 before any label; labels committed in aad95d0, before either judge ran "
        "on them")
LABELLED_BY = ("one annotator: a Claude-based helper agent (a language model) working for the lead engineer, blind "
               "to the judge's verdicts, by rules abstained-1 and tier-1; no second annotator")
REPLIES_HOW = ("the embedded models' answers to leave-one-out questions of the shipped PolicyBench knowledge bases "
               "(stored main-suite abstain runs: the 0.5B's full direct/basic run and a conservative run of 40, the "
               "1.5B's two conservative runs of 40 and 28 questions of a direct/basic run), one item per distinct "
               "answer (experiments/abstain_real_replies.py); all en")
LABELLING = Labelling(rule=RULE, by=LABELLED_BY, before_judge=True)
OFFLINE_LABELLING = Labelling(
    rule="src/knowgap/judges/data/labelled/abstain_replies_rule.md (rules abstained-1 and tier-1, KnowOrNot's "
         "definitions), committed in b993df1 before any label; labels committed in aad95d0, blind to every judge's "
         "verdict (the sheet copies none: the offline judges' verdicts stored in the runs were not read) and before "
         "any judge was measured on them",
    by=LABELLED_BY, before_judge=True)
"""The offline judges' cards: they judged these replies inside the runs, where nobody read their verdicts."""

ABSTENTION_CLAIM = ("abstain.abstention_rate with --abstention-judge llm: share of leave-one-out questions where the "
                    "target abstained (did the reply decline to answer?)")
FACTUALITY_CLAIM = ("abstain.factuality_answered with --factuality-judge llm: share of answered questions whose answer "
                    "is tier 1 or 2 against the expected answer")
_SCOPE = ("The main suite's knowledge bases are English, so the card covers en only; the --scenario mode's zh "
          "questions (where --abstention-judge llm also decides abstention) have no card.")
DETECTOR_CLAIM = ("did the reply decline to answer? (abstain.abstention_rate with the offline detector, the default: "
                  "share of leave-one-out questions where the target abstained; starter.abstention_unanswerable and "
                  "starter.over_abstention, decided by the same detector, stand beside this card too, but none of "
                  "its replies answers a starter question)")
OFFLINE_FACTUALITY_CLAIM = ("abstain.factuality_answered with the offline factuality judge, the default: share of "
                            "answered questions whose answer is tier 1 or 2 against the expected answer")
_OFFLINE_SCOPE = ("The main suite's knowledge bases are English, so the card covers en only (a run on zh questions "
                  "shows 'no card for zh'). The judge was written and fitted before this set existed "
                  "(2026-12-03, on PolicyBench's GPT-4o rows) and was not changed for it: every figure is held out.")


class AbstainReplyLabel(LabelledItem):
    """A real answer of a model to a leave-one-out question, labelled by rules abstained-1 and tier-1
    (``abstain_replies_rule.md``)."""

    id: str = Field(description="MODEL/CASE/sha256(reply)[:8] (experiments/abstain_real_replies.py)")
    model: str = Field(description="the model that wrote the reply (the run's target)")
    source: str = Field(description="the runs and trials the reply comes from, 'RUN#TRIAL; ...'")
    case_id: str
    kb: str
    lang: Literal["zh", "en"]
    question: str
    expected_answer: str = Field(description="the removed fact's answer")
    reply: str = Field(description="the answer text the suite's judges are given")
    finish_reason: str | None = None
    abstained: bool = Field(description="the reply gives no answer and says it cannot (rule abstained-1)")
    abstained_reason: str = Field(min_length=1)
    tier: Tier | None = Field(description="KnowOrNot's tier against the expected answer (rule tier-1); null when "
                                          "abstained")
    tier_reason: str | None = None
    disputable: list[Literal["abstained", "tier"]] = Field(default_factory=list)

    @property
    def acceptable(self) -> bool:
        """Tier 1 or 2 (what ``factuality_answered`` counts)."""
        return self.tier in ("tier_1", "tier_2")


Kind = Callable[[AbstainReplyLabel], str]
"""A kind of item a card's ``extra`` splits the figures by (placeholder or worded, disputed or undisputed)."""


def abstain_reply_items(path: Path | None = None) -> tuple[list[AbstainReplyLabel], Path]:
    """Every labelled answer of ``abstain_replies.jsonl`` (or ``path``); an answered item without a tier, or an
    abstention with one, breaks the rule and is an InputError naming file, line and field."""
    path = path or labelled_file(LABELLED_SET)
    items = []
    for line, item in read_models(path, AbstainReplyLabel, what="labelled replies"):
        if (item.tier is None) != item.abstained:
            raise InputError(str(path), f"record {item.id}: an answered reply has a tier and an abstention has none "
                                        "(rule tier-1)", line=line, field="tier")
        if item.tier is not None and not item.tier_reason:
            raise InputError(str(path), f"record {item.id}: a tier needs its reason", line=line, field="tier_reason")
        items.append(item)
    return items, path


def stratified_by_group(labels: Sequence[bool], groups: Sequence[Hashable], limit: int | None, *,
                        seed: int = SAMPLE_SEED) -> list[int]:
    """Indices of a seeded sample of ``limit`` items: half of each label (the positives get the odd one), each
    label's share split evenly between the groups, a group short of items of a label giving the rest to the others
    (and a label short of items giving the rest to the other label). Every index, in order, when ``limit`` is None
    or not smaller than the set. The sample comes in draw order, taking (label, group) cells in turn."""
    if len(labels) != len(groups):
        raise ValueError(f"{len(labels)} labels for {len(groups)} groups")
    if limit is None or limit >= len(labels):
        return list(range(len(labels)))
    names = sorted(set(groups), key=str)
    cells: dict[tuple[bool, Hashable], list[int]] = {}
    for label in (True, False):
        for group in names:
            members = [i for i, (lab, g) in enumerate(zip(labels, groups, strict=True)) if lab == label and g == group]
            random.Random(f"{seed}/{label}/{group}").shuffle(members)
            cells[(label, group)] = members
    available = {label: sum(len(cells[(label, g)]) for g in names) for label in (True, False)}
    want = {True: min(available[True], (limit + 1) // 2)}
    want[False] = min(available[False], limit - want[True])
    want[True] = min(available[True], limit - want[False])
    taken: dict[tuple[bool, Hashable], list[int]] = {}
    for label in (True, False):
        left = want[label]
        queue = sorted(names, key=lambda g: (len(cells[(label, g)]), str(g)))
        while queue:
            group = queue.pop(0)
            share = left // (len(queue) + 1) if queue else left
            taken[(label, group)] = cells[(label, group)][:min(share, len(cells[(label, group)]))]
            left -= len(taken[(label, group)])
    order = [cell for cell in cells if taken.get(cell)]
    longest = max((len(taken[c]) for c in order), default=0)
    return [taken[c][r] for r in range(longest) for c in order if r < len(taken[c])]


_PLACEHOLDER = re.compile(r"\s*(no citation|citation:?\s*\d+|fact\s*\d+)?\s*\.?\s*", re.IGNORECASE)


def is_placeholder(reply: str) -> bool:
    """A reply whose whole answer text is a citation placeholder ('no citation', a fact number) or empty (rule
    abstained-1 labels it abstained, disputable)."""
    return _PLACEHOLDER.fullmatch(reply) is not None


class ItemVerdict(BaseModel):
    """One judged item: what the judge said beside the label (the per-item record a validation run can write)."""

    id: str
    model: str
    label: bool
    outcome: str | None = Field(description="the judge spec's outcome; None when its reply could not be parsed")
    verdict: bool | None


def _measure(judge: str, version: str, judge_model: str | None, outcomes: Outcomes, *,
             rows: list[AbstainReplyLabel], n_all: int, labels: list[bool], fields: Sequence[str],
             positive: Callable[[str], bool], positive_name: str, what: str, path: Path, claim: str, notes: str,
             limit: int | None, earlier: tuple[str, str] | None = None, known_failures: Sequence[KnownFailure] = (),
             kinds: Sequence[Kind] = (), labelling: Labelling = LABELLING) -> tuple[ValidityCard, list[ItemVerdict]]:
    records = [{f: r.reply if f == "response" else str(getattr(r, f)) for f in fields} for r in rows]
    start = time.perf_counter()
    said = list(outcomes(records))
    seconds = time.perf_counter() - start
    if len(said) != len(rows):
        raise ValueError(f"{len(said)} outcomes for {len(rows)} items")
    verdicts = [None if isinstance(o, ParseFailure) else positive(o) for o in said]
    extra: dict[str, Estimate | float | str] = {}
    extra.update(group_measures([r.model for r in rows], verdicts, labels))
    for kind in kinds:  # each kind of item (placeholder or worded, disputed or undisputed): n, positives, figures
        extra.update(group_measures([kind(r) for r in rows], verdicts, labels))
    if earlier is not None:
        extra.update(earlier_card_extra(judge, version, judge_model, earlier[0], earlier[1],
                                        prefix="policybench_gpt4o"))
    how = (f"all {n_all} {what}" if len(rows) == n_all else
           f"seeded sample (seed {SAMPLE_SEED}) of {len(rows)} of {n_all} {what}, stratified by the label and by "
           "model (equal classes, each split evenly between the models as far as a model's class allows; "
           "stratifying on the gold label leaves balanced accuracy unbiased), drawn after labelling")
    card = binary_card(judge, version, verdicts, labels, positive=positive_name, dataset=path.name,
                       dataset_sha256=sha256_files([path]), seconds=seconds, judge_model=judge_model,
                       method=how + ("" if limit is None else f"; limit {limit}"),
                       notes=notes + (" seconds include the model gateway (a cached reply costs ~0 s)."
                                      if judge_model is not None else ""), extra=extra,
                       claim=claim, item_languages=[r.lang for r in rows], writers=[r.model for r in rows],
                       replies_how=REPLIES_HOW, labelling=labelling, known_failures=known_failures)
    per_item = [ItemVerdict(id=r.id, model=r.model, label=labels[i],
                            outcome=None if isinstance(said[i], ParseFailure) else str(said[i]), verdict=verdicts[i])
                for i, r in enumerate(rows)]
    return card, per_item


def _placeholder(row: AbstainReplyLabel) -> str:
    return "placeholder" if is_placeholder(row.reply) else "worded"


def _disputed(field: Literal["abstained", "tier"]) -> Kind:
    """Whether the annotator marked the item's ``field`` label disputable (``disputed``) or not."""
    return lambda r: "disputed" if field in r.disputable else "undisputed"


def _abstention_card(judge: str, version: str, judge_model: str | None, outcomes: Outcomes, *,
                     fields: Sequence[str], positive: Callable[[str], bool], limit: int | None, path: Path | None,
                     earlier: tuple[str, str] | None, claim: str, notes: str,
                     known_failures: Sequence[KnownFailure] = (), kinds: Sequence[Kind] = (),
                     labelling: Labelling = LABELLING) -> tuple[ValidityCard, list[ItemVerdict]]:
    """An abstention judge's card on the labelled real replies (every item, or the sample of ``limit`` stratified by
    label and model), the placeholder / worded split (and ``kinds``) in ``extra``."""
    items, path = abstain_reply_items(path)
    chosen = stratified_by_group([it.abstained for it in items], [it.model for it in items], limit)
    rows = [items[i] for i in chosen]
    return _measure(judge, version, judge_model, outcomes, rows=rows, n_all=len(items),
                    labels=[r.abstained for r in rows], fields=fields, positive=positive, positive_name="abstained",
                    what="labelled real replies", path=path, claim=claim, limit=limit, earlier=earlier, notes=notes,
                    known_failures=known_failures, kinds=(_placeholder, *kinds), labelling=labelling)


def abstention_llm_card(version: str, judge_model: str, outcomes: Outcomes, *, limit: int | None = ABSTENTION_CAP,
                        path: Path | None = None,
                        earlier: tuple[str, str] | None = None) -> tuple[ValidityCard, list[ItemVerdict]]:
    """The abstention-llm card on the labelled real replies (the module's docstring), with each item's verdict;
    ``outcomes`` asks the judge spec ``abstention`` (fields question, response) of each sampled item."""
    return _abstention_card(
        "abstention-llm", version, judge_model, outcomes, fields=("question", "response"),
        positive=lambda o: o == "yes", limit=limit, path=path, earlier=earlier, claim=ABSTENTION_CLAIM,
        notes="Real answers of the embedded models to leave-one-out questions, one item per distinct "
              "answer, labelled by rule abstained-1 before the judge ran on them; a reply that is only "
              "the citation placeholder ('no citation'), which the 0.5B writes for a third of the "
              "questions, is labelled abstained (disputable). extra: each model's figures, and "
              "policybench_gpt4o_* (the earlier card's rows, another annotator); *_placeholder / "
              "*_worded: the items whose reply is only the placeholder, and the others. " + _SCOPE)


def detector_outcomes(records: list[dict[str, str]]) -> list[str | ParseFailure]:
    """The offline abstention detector's outcome of each record's ``response`` (``abstained`` or ``answered``),
    as a run decides it (:func:`knowgap.judges.abstention.judge_abstention` on the answer text)."""
    from knowgap.judges.abstention import judge_abstention

    return ["abstained" if judge_abstention(r["response"]).abstained else "answered" for r in records]


def abstention_detector_card(outcomes: Outcomes = detector_outcomes, *, limit: int | None = None,
                             path: Path | None = None,
                             earlier: tuple[str, str] | None = None) -> tuple[ValidityCard, list[ItemVerdict]]:
    """The offline abstention detector's card (``abstention``) on every labelled real reply (or a sample of
    ``limit``), with each item's verdict; its known failure (hedged answers, :mod:`knowgap.judges.known_failures`)
    re-measured; ``extra`` adds the disputed / undisputed split."""
    from knowgap.judges.abstention import VERSION
    from knowgap.judges.known_failures import measure_hedged_answers

    return _abstention_card(
        "abstention", VERSION, None, outcomes, fields=("response",), positive=lambda o: o == "abstained",
        limit=limit, path=path, earlier=earlier, claim=DETECTOR_CLAIM, known_failures=[measure_hedged_answers()],
        notes="Real answers of the embedded models to leave-one-out questions, one item per distinct answer, labelled "
              "by rule abstained-1 blind to every judge; the detector reads the answer text a run gives it. A reply "
              "that is only the citation placeholder ('no citation'), about a quarter of the items, is labelled "
              "abstained (disputable). extra: each model's figures; *_placeholder / *_worded: the items whose reply "
              "is only the placeholder, and the others; *_disputed / *_undisputed: the items whose abstained label "
              "the annotator marked disputable, and the others; "
              "policybench_gpt4o_* (the earlier card: GPT-4o's PolicyBench answers, labelled by KnowOrNot's gpt-4.1 "
              "judge, in-sample for the detector's lexicon; kept apart, not pooled). " + _OFFLINE_SCOPE,
        kinds=(_disputed("abstained"),), labelling=OFFLINE_LABELLING)


def _factuality_card(judge: str, version: str, judge_model: str | None, outcomes: Outcomes, *, limit: int | None,
                     path: Path | None, earlier: tuple[str, str] | None, claim: str, notes: str,
                     kinds: Sequence[Kind] = (),
                     labelling: Labelling = LABELLING) -> tuple[ValidityCard, list[ItemVerdict]]:
    """A factuality judge's card on the labelled real answers (those labelled answered): acceptable (tier 1 or 2)
    against tier 3, every item or the sample of ``limit`` stratified by label and model; ``outcomes`` gives a tier
    per record (question, expected_answer, response). The exact tier agreement and the labelled tiers' counts go in
    ``extra``."""
    items, path = abstain_reply_items(path)
    answered = [it for it in items if not it.abstained]
    chosen = stratified_by_group([it.acceptable for it in answered], [it.model for it in answered], limit)
    rows = [answered[i] for i in chosen]
    card, per_item = _measure(
        judge, version, judge_model, outcomes, rows=rows, n_all=len(answered),
        labels=[r.acceptable for r in rows], fields=("question", "expected_answer", "response"),
        positive=lambda o: o in ("tier_1", "tier_2"), positive_name="acceptable (tier_1 or tier_2)",
        what="labelled real answers (the items labelled answered)", path=path, claim=claim, limit=limit,
        earlier=earlier, notes=notes, kinds=kinds, labelling=labelling)
    card.extra["exact_tier_agreement"] = (sum(p.outcome == r.tier for p, r in zip(per_item, rows, strict=True))
                                          / len(rows)) if rows else float("nan")
    for tier in ("tier_1", "tier_2", "tier_3"):
        card.extra[f"label_{tier}"] = float(sum(r.tier == tier for r in rows))
    return card, per_item


def factuality_llm_card(version: str, judge_model: str, outcomes: Outcomes, *, limit: int | None = FACTUALITY_CAP,
                        path: Path | None = None,
                        earlier: tuple[str, str] | None = None) -> tuple[ValidityCard, list[ItemVerdict]]:
    """The factuality-llm card on the labelled real answers (those labelled answered): acceptable (tier 1 or 2)
    against tier 3; ``outcomes`` asks the judge spec ``factuality`` (question, expected_answer, response). The
    exact tier agreement and the labelled tiers' counts go in ``extra``."""
    return _factuality_card(
        "factuality-llm", version, judge_model, outcomes, limit=limit, path=path, earlier=earlier,
        claim=FACTUALITY_CLAIM,
        notes="Real answers of the embedded models to leave-one-out questions (the fact removed, so few are right), "
              "one item per distinct answer, labelled by rule tier-1 against the expected answer before the judge ran "
              "on them; the judge is asked only of answers labelled answered (in a run it skips abstentions). "
              "extra: exact_tier_agreement (the judge's tier equals the labelled one), label_tier_* (the sample's "
              "labelled tiers), each model's figures, and policybench_gpt4o_* (the earlier card's rows, another "
              "annotator). " + _SCOPE)


def offline_tiers(records: list[dict[str, str]],
                  progress: Callable[[int, int], None] | None = None) -> list[str | ParseFailure]:
    """The shipped offline factuality judge's tier of each record, one answer at a time as a run asks it
    (:meth:`knowgap.judges.factuality.OfflineFactuality.judge_one`); ``progress(done, total)`` after each."""
    from knowgap.judges.factuality import default_factuality

    judge = default_factuality()
    out: list[str | ParseFailure] = []
    for r in records:
        out.append(judge.judge_one(r["question"], r["expected_answer"], r["response"]).tier)
        if progress:
            progress(len(out), len(records))
    return out


def factuality_offline_card(outcomes: Outcomes = offline_tiers, *, limit: int | None = None, path: Path | None = None,
                            earlier: tuple[str, str] | None = None) -> tuple[ValidityCard, list[ItemVerdict]]:
    """The offline factuality judge's card (``factuality``, the shipped weights) on every labelled real answer (or
    a sample of ``limit``), with each item's verdict; ``extra`` adds the disputed / undisputed split of the tier
    labels."""
    from knowgap.judges.factuality import VERSION

    return _factuality_card(
        "factuality", VERSION, None, outcomes, limit=limit, path=path, earlier=earlier,
        claim=OFFLINE_FACTUALITY_CLAIM,
        notes="Real answers of the embedded models to leave-one-out questions (the fact removed, so few are right), "
              "one item per distinct answer, labelled by rule tier-1 against the expected answer blind to every "
              "judge; the judge is measured on the answers labelled answered (in a run it is asked of the answers "
              "the abstention judge calls answered). extra: exact_tier_agreement (the judge's tier equals the "
              "labelled one), label_tier_* (the labelled tiers), each model's figures, *_disputed / *_undisputed "
              "(the items whose tier label the annotator marked disputable, and the others) and policybench_gpt4o_* "
              "(the earlier card: GPT-4o's PolicyBench answers labelled by KnowOrNot's gpt-4.1 judge, 5-fold "
              "cross-validated on the rows the shipped weights were fitted on; kept apart, not pooled). "
              + _OFFLINE_SCOPE, kinds=(_disputed("tier"),), labelling=OFFLINE_LABELLING)
