"""Discrimination validity of a rubric judge, measured on pairs built from a suite's own dataset, as a
:class:`~knowgap.judges.cards.ValidityCard` (the machinery; each suite builds its pairs and declares its judge:
``clarify-rubric`` in ``suites/clarify/rubric_card.py``, ``partial-rubric`` in ``suites/partial/rubric_card.py``).

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
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from knowgap.engine.gateway import ModelGateway
from knowgap.engine.records import CallRecord
from knowgap.engine.suite import TrialFailed
from knowgap.judges.cards import Estimate, ValidityCard, binary_card, sha256_files
from knowgap.judges.geval import Ratings
from knowgap.models.registry import DEFAULT_MODEL
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.stats import wilson


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
    own = gateway is None
    gw = gateway or ModelGateway.open(run_id=f"validate-{suite}-rubric")
    try:
        ctx = GatewayContext(gw, {"judge": judge_model})
        start = time.perf_counter()
        results = asyncio.run(measure_pairs(chosen, ctx, progress))
        seconds = time.perf_counter() - start
    finally:
        if own:
            gw.close()
    dataset = " + ".join(f"{suite}/data/{f.name}" for f in files)
    return pairwise_card(suite, version, results, judge_model=judge_model, dataset=dataset,
                         dataset_sha256=sha256_files(files), seconds=seconds, anchor_checks=anchor_checks)
