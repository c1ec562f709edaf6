"""Validity of a rubric judge as a :class:`~knowgap.judges.cards.ValidityCard` (the machinery; each suite builds its
items and declares its judge: ``clarify-rubric`` in ``suites/clarify/rubric_card.py``, ``partial-rubric`` in
``suites/partial/rubric_card.py``): discrimination on pairs built from a suite's own dataset (below), and agreement
with an annotator's scores on real replies (:func:`validate_scored`, the section at the end: the card rule of
issue 37).

A pair is one good and one bad reply to the same case, each rated on its own by the judge model (clarify: the
case's reference reply against a fluent reply that states the missing facts as known; partial: a reply that names
what the view cannot show against a confident decision citing the hidden evidence as if seen).

The judge is right on a pair when the reference reply's total is strictly above the assuming reply's (a tie is
wrong; a reply with a rating that could not be read is a parse failure, counted as wrong). Each pair is presented
in a seeded random order (first/second), the label being whether the first is the better one, so the card's
balanced accuracy and agreement are both the pairwise accuracy. The single-integer scoring (the sampled digits
of the same requests) is measured on the same pairs and stored in the card's ``extra``.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from knowgap.engine.gateway import ModelGateway
from knowgap.engine.records import CallRecord
from knowgap.engine.suite import TrialFailed
from knowgap.judges.cards import (
    Estimate,
    Labelling,
    ValidityCard,
    binary_card,
    binary_measures,
    confusion_of,
    language_figures,
    measured_dir,
    sha256_files,
)
from knowgap.judges.geval import Ratings
from knowgap.judges.labelled_sets import stratified
from knowgap.models.registry import DEFAULT_MODEL
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.stats import fisher_z_interval, spearman, wilson


class GatewayContext:
    """A trial context over a gateway, for judging outside a run: each role names a model spec."""

    def __init__(self, gateway: ModelGateway, roles: dict[str, str], seed: int = 0) -> None:
        self.gateway, self.roles, self.seed, self.repeat = gateway, roles, seed, 0
        self.calls: list[CallRecord] = []

    async def generate(self, role: str, request: ChatRequest) -> ChatResponse:
        record = await self.gateway.call(self.roles[role], role, request)
        self.calls.append(record)
        if record.response is None:
            raise TrialFailed(record.error or "model call failed")
        return record.response

    def supports_tools(self, role: str) -> bool:
        return self.gateway.client(self.roles[role]).model.supports_tools

    def supports_logprobs(self, role: str) -> bool:
        return self.gateway.client(self.roles[role]).model.supports_logprobs

T = TypeVar("T")


def on_gateway(gateway: ModelGateway | None, run_id: str, judge_model: str,
               measure: Callable[[GatewayContext], Coroutine[Any, Any, T]]) -> tuple[T, float]:
    """``measure`` run with ``judge_model`` as the judge role, on ``gateway`` (or one opened, and closed, for
    ``run_id``); its value and the seconds it took."""
    gw = gateway or ModelGateway.open(run_id=run_id)
    try:
        start = time.perf_counter()
        value: T = asyncio.run(measure(GatewayContext(gw, {"judge": judge_model})))
        return value, time.perf_counter() - start
    finally:
        if gateway is None:
            gw.close()


RateReply = Callable[[GatewayContext, str], Awaitable[Ratings]]
"""The judge model rating one reply of a pair (on the pair's own case)."""
POSITIVE = "reference reply ranked above the assuming reply"


@dataclass(frozen=True)
class RubricPair:
    id: str
    lang: str
    reference: str
    assuming: str
    judge: RateReply


@dataclass(frozen=True)
class PairResult:
    pair: RubricPair
    reference: Ratings
    assuming: Ratings

    def ranked(self, sampled: bool = False, model_only: bool = False) -> bool | None:
        """Reference strictly above the assuming reply (None: a rating could not be read); ``model_only``: by the
        judge model's own ratings, before any rubric anchor."""
        pick = ((lambda r: r.sampled_total) if sampled else (lambda r: r.model_total) if model_only
                else (lambda r: r.total))
        good, bad = pick(self.reference), pick(self.assuming)
        return None if good is None or bad is None else good > bad


def sample_pairs(pairs: Sequence[RubricPair], limit: int | None, seed: int = 0) -> list[RubricPair]:
    """All pairs, or ``limit`` of them drawn at random (seeded), in dataset order."""
    if limit is None or limit >= len(pairs):
        return list(pairs)
    keep = set(random.Random(seed).sample(range(len(pairs)), limit))
    return [p for i, p in enumerate(pairs) if i in keep]


async def measure_pairs(pairs: Sequence[RubricPair], ctx: GatewayContext,
                        progress: Callable[[int, int], None] | None = None) -> list[PairResult]:
    """Each pair's two replies rated by the judge model (one at a time: a local model runs one call anyway);
    ``progress(done, total)`` after each pair."""
    results = []
    for pair in pairs:
        results.append(PairResult(pair, await pair.judge(ctx, pair.reference), await pair.judge(ctx, pair.assuming)))
        if progress is not None:
            progress(len(results), len(pairs))
    return results


def _rate(k: int, n: int) -> Estimate:
    lo, hi = wilson(k, n) if n else (None, None)
    return Estimate(value=k / n if n else None, ci_low=lo, ci_high=hi)


def pairwise_card(suite: str, version: str, results: Sequence[PairResult], *, judge_model: str, dataset: str,
                  dataset_sha256: str, seconds: float | None, seed: int = 0, anchor_checks: str = "") -> ValidityCard:
    """The card of the rubric judge of ``suite`` (``SUITE-rubric``) from rated pairs (see the module docstring for
    the method); ``anchor_checks``: the suite's offline checks whose rubric anchors apply, named in the method."""
    rng = random.Random(seed)
    verdicts: list[bool | None] = []
    labels: list[bool] = []
    for result in results:
        ranked = result.ranked()
        reference_first = rng.random() < 0.5
        labels.append(reference_first)
        verdicts.append(None if ranked is None else ranked == reference_first)
    n = len(results)
    geval = sum(r.ranked() is True for r in results)
    sampled = [r.ranked(sampled=True) for r in results]
    ties = sum(r.reference.sampled_total == r.assuming.sampled_total is not None for r in results)
    extra: dict[str, Estimate | float | str] = {
        "pairwise_accuracy_geval": _rate(geval, n),
        "pairwise_accuracy_single_integer": _rate(sum(s is True for s in sampled), n),
        "single_integer_ties": float(ties),
        "fallbacks_to_sampled_digit": float(sum(r.reference.fallbacks + r.assuming.fallbacks for r in results)),
    }
    if any(r.reference.anchors or r.assuming.anchors for r in results):
        extra["pairwise_accuracy_model_only"] = _rate(sum(r.ranked(model_only=True) is True for r in results), n)
        extra["anchored_reference_replies"] = float(sum(bool(r.reference.anchors) for r in results))
        extra["anchored_assuming_replies"] = float(sum(bool(r.assuming.anchors) for r in results))
    for lang in sorted({r.pair.lang for r in results}):
        subset = [r for r in results if r.pair.lang == lang]
        extra[f"pairwise_accuracy_geval_{lang}"] = _rate(sum(r.ranked() is True for r in subset), len(subset))
    method = (f"{n} pairs built from the {suite} dataset (reference reply vs a reply that assumes the missing "
              "facts), each reply rated on its own (G-Eval expected value from token probabilities); correct when "
              "the reference total is strictly higher (ties and unreadable ratings count as wrong); presentation "
              f"order randomised (seed {seed}), so balanced accuracy and agreement are the pairwise accuracy"
              + ("; rubric bottom anchors applied where the suite's offline checks (" + anchor_checks
                 + ") find a reply meets them (extra: pairwise_accuracy_model_only, the model's own ratings alone)"
                 if "pairwise_accuracy_model_only" in extra else ""))
    return binary_card(f"{suite}-rubric", version, verdicts, labels, positive=POSITIVE, dataset=dataset,
                       dataset_sha256=dataset_sha256, seconds=seconds, judge_model=judge_model, method=method,
                       extra=extra)


def validate_pairs(suite: str, version: str, pairs: Sequence[RubricPair], files: Sequence[Path], *,
                   judge_model: str | None = None, limit: int | None = None, gateway: ModelGateway | None = None,
                   progress: Callable[[int, int], None] | None = None, anchor_checks: str = "") -> ValidityCard:
    """Measure the rubric judge of ``suite`` at ``version`` with ``judge_model`` (default: the embedded default
    model) on ``pairs`` built from the dataset ``files`` (all, or ``limit`` drawn at random, seeded); returns its
    card. ``progress(done, total)`` is called after each pair."""
    judge_model = judge_model or DEFAULT_MODEL
    chosen = sample_pairs(pairs, limit)
    results, seconds = on_gateway(gateway, f"validate-{suite}-rubric", judge_model,
                                  lambda ctx: measure_pairs(chosen, ctx, progress))
    dataset = " + ".join(f"{suite}/data/{f.name}" for f in files)
    return pairwise_card(suite, version, results, judge_model=judge_model, dataset=dataset,
                         dataset_sha256=sha256_files(files), seconds=seconds, anchor_checks=anchor_checks)


# --- real replies scored on the rubric's own scale (issue 37, the card rule) ------------------------------------
#
# A suite's rubric judge measured on real replies of its runs, each scored by an annotator on the rubric's own
# criteria and 1-5 scale (a written rule committed before the judge ran). The card's figure is binary: an "adequate"
# reply, whose mean score is at least the scale's midpoint, by the annotator and by the judge (its total); the
# judge's total as it runs (with any rubric anchors: combined) and the judge model's own ratings (model-only) are
# both measured. Its extra holds the ordinal agreement: mean absolute error of the total, Spearman's rho, and per
# criterion the mean absolute error and the share within one point.

MIDPOINT = 3.0
"""The middle of the 1-5 scale: a reply rated at least this (its mean over the criteria) is adequate."""
ADEQUATE = f"adequate reply: mean rubric score >= {MIDPOINT:g} (the scale's midpoint)"
RateOne = Callable[[GatewayContext], Awaitable[Ratings]]
"""The judge model rating one real reply on its own case."""


@dataclass(frozen=True)
class ScoredReply:
    """A real reply with the annotator's score per rubric criterion (1-5) and the judge call that rates it."""

    id: str
    model: str
    lang: str
    labels: Mapping[str, int]
    judge: RateOne

    @property
    def label_total(self) -> float:
        return sum(self.labels.values()) / len(self.labels)

    @property
    def adequate(self) -> bool:
        return self.label_total >= MIDPOINT


@dataclass(frozen=True)
class ScoredResult:
    reply: ScoredReply
    ratings: Ratings

    def total(self, model_only: bool = False) -> float | None:
        """The judge's total as the suite scores it (with anchors), or the model's own (``model_only``)."""
        return self.ratings.model_total if model_only else self.ratings.total

    def adequate(self, model_only: bool = False) -> bool | None:
        total = self.total(model_only)
        return None if total is None else total >= MIDPOINT

    def criterion(self, name: str, model_only: bool = False) -> float | None:
        source = (self.ratings.model if model_only and self.ratings.model is not None else self.ratings.dimensions)
        score = source.get(name)
        return None if score is None else score.expected


class ScoredVerdict(BaseModel):
    """One judged reply of a real-reply rubric card (the per-item record written beside the card)."""

    id: str
    model: str
    lang: str
    labels: dict[str, int]
    label_total: float
    label_adequate: bool
    ratings: dict[str, float | None] = Field(description="the judge's rating per criterion as the suite scores it")
    model_ratings: dict[str, float | None] = Field(description="the judge model's own rating per criterion")
    total: float | None
    model_total: float | None
    adequate: bool | None
    model_adequate: bool | None
    anchors: dict[str, str]


def verdict_of(result: ScoredResult) -> ScoredVerdict:
    reply = result.reply
    return ScoredVerdict(
        id=reply.id, model=reply.model, lang=reply.lang, labels=dict(reply.labels), label_total=reply.label_total,
        label_adequate=reply.adequate, ratings={c: result.criterion(c) for c in reply.labels},
        model_ratings={c: result.criterion(c, model_only=True) for c in reply.labels}, total=result.total(),
        model_total=result.total(model_only=True), adequate=result.adequate(),
        model_adequate=result.adequate(model_only=True), anchors=dict(result.ratings.anchors))


def sample_scored(replies: Sequence[ScoredReply], limit: int | None, seed: int = 0) -> list[ScoredReply]:
    """All replies, or a seeded sample of ``limit`` stratified by language and by the annotator's adequate label:
    an equal share of ``limit`` per language, each share alternating the two labels while both last
    (:func:`~knowgap.judges.labelled_sets.stratified`), in the set's order. Stratifying on the label leaves balanced
    accuracy unbiased (it is a mean of the two class recalls)."""
    if limit is None or limit >= len(replies):
        return list(replies)
    langs = sorted({r.lang for r in replies})
    keep: set[int] = set()
    for k, lang in enumerate(langs):
        share = limit // len(langs) + (k < limit % len(langs))
        members = [i for i, r in enumerate(replies) if r.lang == lang]
        keep |= {members[j] for j in stratified([replies[i].adequate for i in members], share, seed=seed)}
    return [r for i, r in enumerate(replies) if i in keep]


async def measure_scored(replies: Sequence[ScoredReply], ctx: GatewayContext,
                         progress: Callable[[int, int], None] | None = None) -> list[ScoredResult]:
    """Each reply rated by the judge model, one at a time; ``progress(done, total)`` after each."""
    results = []
    for reply in replies:
        results.append(ScoredResult(reply, await reply.judge(ctx)))
        if progress is not None:
            progress(len(results), len(replies))
    return results


def ordinal_extras(results: Sequence[ScoredResult], model_only: bool = False) -> dict[str, Estimate | float]:
    """Agreement of the judge's ratings with the annotator's on the 1-5 scale: the mean absolute error of the total
    and Spearman's rho (Fisher z interval) over the replies the judge rated, and per criterion the mean absolute
    error and the share within one point (Wilson interval); keys end in ``_model_only`` for the model's own."""
    tag = "_model_only" if model_only else ""
    pairs = [(r.reply.label_total, t) for r in results if (t := r.total(model_only)) is not None]
    out: dict[str, Estimate | float] = {}
    if pairs:
        out[f"total_mae{tag}"] = sum(abs(a - b) for a, b in pairs) / len(pairs)
        rho = spearman([a for a, _ in pairs], [b for _, b in pairs])
        if not math.isnan(rho):
            lo, hi = fisher_z_interval(rho, len(pairs))
            out[f"total_spearman{tag}"] = Estimate(value=rho, ci_low=None if math.isnan(lo) else lo,
                                                   ci_high=None if math.isnan(hi) else hi)
    for name in sorted({c for r in results for c in r.reply.labels}):
        diffs = [abs(r.reply.labels[name] - v) for r in results if (v := r.criterion(name, model_only)) is not None]
        if diffs:
            out[f"{name}_mae{tag}"] = sum(diffs) / len(diffs)
            out[f"{name}_within_1{tag}"] = _rate(sum(d <= 1 for d in diffs), len(diffs))
    return out


def scored_card(judge: str, version: str, results: Sequence[ScoredResult], *, judge_model: str, dataset: str,
                dataset_sha256: str, seconds: float | None, method: str, notes: str = "", claim: str | None = None,
                replies_how: str = "", labelling: Labelling | None = None) -> ValidityCard:
    """The card of a rubric judge on real replies scored by an annotator (see the section's comment): its figure
    the balanced accuracy of the judge's adequate verdict (total >= :data:`MIDPOINT`, as the suite scores it, with
    any anchors) against the annotator's, per language; ``model_only`` and ``combined`` when any reply met a rubric
    anchor (the judge model's own ratings alone, and as it runs); extra: the model-only figure per language, the
    figure per model that wrote the replies, and :func:`ordinal_extras` for both."""
    labels = [r.reply.adequate for r in results]
    verdicts = [r.adequate() for r in results]
    own = [r.adequate(model_only=True) for r in results]
    langs = [r.reply.lang for r in results]
    extra: dict[str, Estimate | float | str] = {}
    for lang, figure in language_figures(langs, own, labels).items():
        if figure.figure is not None and figure.figure.value is not None:
            extra[f"balanced_accuracy_model_only_{lang}"] = figure.figure
    for writer in sorted({r.reply.model for r in results}):
        members = [i for i, r in enumerate(results) if r.reply.model == writer]
        c, _ = confusion_of([verdicts[i] for i in members], [labels[i] for i in members])
        for key, value in binary_measures(c).items():
            if key in ("balanced_accuracy", "sensitivity", "specificity") and value.value is not None:
                extra[f"{key}_{writer}"] = value
    extra |= ordinal_extras(results) | ordinal_extras(results, model_only=True)
    anchored = sum(bool(r.ratings.anchors) for r in results)
    extra["anchored_replies"] = float(anchored)
    extra["fallbacks_to_sampled_digit"] = float(sum(r.ratings.fallbacks for r in results))
    card = binary_card(judge, version, verdicts, labels, positive=ADEQUATE, dataset=dataset,
                       dataset_sha256=dataset_sha256, seconds=seconds, judge_model=judge_model, method=method,
                       notes=notes, extra=extra, claim=claim, item_languages=langs,
                       writers=[r.reply.model for r in results], replies_how=replies_how, labelling=labelling)
    if anchored:
        c, _ = confusion_of(own, labels)
        card.model_only = binary_measures(c)["balanced_accuracy"]
        card.combined = card.balanced_accuracy
    return card


def validate_scored(judge: str, version: str, replies: Sequence[ScoredReply], files: Sequence[Path], *,
                    judge_model: str | None = None, limit: int | None = None, gateway: ModelGateway | None = None,
                    progress: Callable[[int, int], None] | None = None, what: str = "labelled real replies",
                    notes: str = "", claim: str | None = None, replies_how: str = "",
                    labelling: Labelling | None = None) -> tuple[ValidityCard, list[ScoredVerdict]]:
    """Measure the rubric judge ``judge`` at ``version`` with ``judge_model`` (default: the embedded default model)
    on real ``replies`` read from the labelled ``files`` (all, or the seeded stratified sample of
    :func:`sample_scored`); returns its card (:func:`scored_card`) and the per-reply verdicts."""
    judge_model = judge_model or DEFAULT_MODEL
    chosen = sample_scored(replies, limit)
    results, seconds = on_gateway(gateway, f"validate-{judge}", judge_model,
                                  lambda ctx: measure_scored(chosen, ctx, progress))
    by_lang = ", ".join(f"{lang} {sum(r.lang == lang for r in chosen)}" for lang in sorted({r.lang for r in chosen}))
    sample = (f"all {len(replies)} {what}" if len(chosen) == len(replies) else
              f"a seeded sample (seed 0) of {len(chosen)} of {len(replies)} {what}, an equal share per language "
              "stratified by the annotator's adequate label (up to half of each share per class; stratifying on the "
              "label leaves balanced accuracy unbiased)")
    method = (f"{sample} ({by_lang}); each reply rated by the judge model as the suite rates it (G-Eval expected "
              f"value per criterion, their mean 1-5); adequate when that mean is >= {MIDPOINT:g}, by the judge and by "
              "the annotator's 1-5 scores on the same criteria; a rating that could not be read counts as a wrong "
              "verdict; model_only: the judge model's own ratings before any rubric anchor; extra: the ordinal "
              "agreement (mean absolute error and Spearman of the total, per criterion mean absolute error and the "
              "share within one point)")
    card = scored_card(judge, version, results, judge_model=judge_model,
                       dataset=" + ".join(f.name for f in files), dataset_sha256=sha256_files(files),
                       seconds=seconds, method=method, notes=notes, claim=claim, replies_how=replies_how,
                       labelling=labelling)
    return card, [verdict_of(r) for r in results]


def write_verdicts(card: ValidityCard, verdicts: Sequence[ScoredVerdict], folder: Path | None = None) -> Path:
    """The per-reply verdicts of ``card``'s measurement as JSONL beside the cards measured here
    (KNOWGAP_HOME/judge_cards/KEY.items.jsonl, or ``folder``), replacing those of an earlier measurement."""
    folder = folder or measured_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{card.key}.items.jsonl"
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(v.model_dump_json() + "\n" for v in verdicts), encoding="utf-8")
    tmp.replace(path)
    return path
