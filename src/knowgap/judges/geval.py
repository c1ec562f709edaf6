"""G-Eval scoring of a 1-5 rating from token probabilities, shared by the rubric judges (clarify, partial).

The judge is asked for one rating per request and replies with a single digit, so the rating sits at a known
place: the first generated token that is a digit 1-5. Its score is the probability-weighted mean over the
scale, the probabilities read from the token log-probabilities at that position and normalised over the
tokens "1".."5" (a token and its space-prefixed form count together). One sampled integer cannot tell a
confident 4 from a 4 that was nearly a 2; the expected value can, so two answers of different quality stop
tying.

When the response has no log-probabilities (the provider has none, or the digit is not among the top
tokens), the score falls back to the sampled digit and says so (``from_logprobs`` False), so a run can count
its fallbacks. A reply with no digit 1-5 at all is a parse failure (None), never a default.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from knowgap.engine.records import ScoreValue
from knowgap.engine.suite import TrialContext
from knowgap.models.types import ChatRequest, ChatResponse, TokenLogprob

SCALE = (1, 2, 3, 4, 5)
TOP_LOGPROBS = 10
"""Alternatives asked for at each position: the five digits are nearly always among them."""
MAX_TOKENS = 4
_DIGIT = re.compile(r"(?<![0-9])([1-5])(?![0-9])")


class ScaleScore(BaseModel):
    """One rating on the 1-5 scale."""

    expected: float = Field(ge=1, le=5, description="Probability-weighted mean over 1..5 (the sampled digit "
                                                    "when there are no probabilities).")
    distribution: list[float] | None = Field(default=None, description="P(1)..P(5), normalised over the scale.")
    sampled: int = Field(ge=1, le=5, description="The digit the judge wrote.")

    @property
    def from_logprobs(self) -> bool:
        return self.distribution is not None

    def scores(self, prefix: str) -> dict[str, ScoreValue]:
        """Flat trial scores: ``prefix`` (the expected value; the sampled digit, an int, without probabilities),
        ``prefix_sampled``, ``prefix_p1``..``prefix_p5``."""
        expected: ScoreValue = round(self.expected, 4) if self.from_logprobs else self.sampled
        out: dict[str, ScoreValue] = {prefix: expected, f"{prefix}_sampled": self.sampled}
        for value, p in zip(SCALE, self.distribution or [], strict=False):
            out[f"{prefix}_p{value}"] = round(p, 4)
        return out


def scale_distribution(position: TokenLogprob) -> list[float] | None:
    """P(1)..P(5) at one token position, normalised over the digit tokens among its alternatives; None when no
    digit is among them."""
    mass = dict.fromkeys(SCALE, 0.0)
    for candidate in position.top:
        text = candidate.token.strip()
        if len(text) == 1 and text in "12345":
            mass[int(text)] += math.exp(candidate.logprob)
    total = sum(mass.values())
    if total <= 0:
        return None
    return [mass[v] / total for v in SCALE]


def expected_value(distribution: list[float]) -> float:
    """The probability-weighted mean over the scale."""
    return sum(v * p for v, p in zip(SCALE, distribution, strict=True))


def read_scale(response: ChatResponse) -> ScaleScore | None:
    """The rating in a one-digit reply: G-Eval from the log-probabilities at the first digit token, else the
    sampled digit; None when the reply holds no digit 1-5."""
    match = _DIGIT.search(response.text)
    if match is None:
        return None
    sampled = int(match.group(1))
    for position in response.logprobs or []:
        text = position.token.strip()
        if text[:1].isdigit():
            distribution = scale_distribution(position) if text in "12345" else None
            if distribution is None:
                break
            return ScaleScore(expected=expected_value(distribution), distribution=distribution, sampled=sampled)
    return ScaleScore(expected=float(sampled), sampled=sampled)


def scale_request(prompt: str, *, logprobs: bool, seed: int | None = 0) -> ChatRequest:
    """The request for one rating: greedy, a few tokens, with token probabilities where the model has them."""
    return ChatRequest.simple(prompt, max_tokens=MAX_TOKENS, seed=seed,
                              top_logprobs=TOP_LOGPROBS if logprobs else None)


ANCHORED = ScaleScore(expected=1.0, distribution=[1.0, 0.0, 0.0, 0.0, 0.0], sampled=1)
"""A rating fixed at the bottom of the scale by a rubric anchor the reply plainly meets (:meth:`Ratings.anchored`)."""


@dataclass(frozen=True)
class Ratings:
    """Several named ratings of one reply (None: the judge wrote no digit for it) and their weights.

    ``anchors`` (dimension -> why) are dimensions set to 1 by a rubric anchor that an offline check found the
    reply meets ("1: no question asked"); ``model`` then keeps the judge model's own ratings of every dimension.
    """

    dimensions: dict[str, ScaleScore | None]
    weights: Mapping[str, float]
    anchors: Mapping[str, str] = field(default_factory=dict)
    model: Mapping[str, ScaleScore | None] | None = None

    def anchored(self, anchors: Mapping[str, str]) -> Ratings:
        """These ratings with each dimension of ``anchors`` set to 1 (the model's ratings kept in ``model``)."""
        if not anchors:
            return self
        return Ratings({k: ANCHORED if k in anchors else v for k, v in self.dimensions.items()}, self.weights,
                       dict(anchors), dict(self.dimensions))

    @property
    def model_total(self) -> float | None:
        """The total of the judge model's own ratings (before any anchor)."""
        return Ratings(dict(self.model), self.weights).total if self.model is not None else self.total

    @property
    def failed(self) -> list[str]:
        return [name for name, score in self.dimensions.items() if score is None]

    @property
    def fallbacks(self) -> int:
        """Ratings read from the sampled digit because the judge model gave no token probabilities."""
        return sum(1 for name, score in self.dimensions.items()
                   if score is not None and not score.from_logprobs and name not in self.anchors)

    def _weighted(self, sampled: bool) -> float | None:
        rated = {k: v for k, v in self.dimensions.items() if v is not None}
        if any(k not in rated for k in self.weights):
            return None
        total = sum((rated[k].sampled if sampled else rated[k].expected) * w for k, w in self.weights.items())
        return total / sum(self.weights.values())

    @property
    def total(self) -> float | None:
        """The weighted mean of the expected values, 1-5; None when a rating failed."""
        return self._weighted(sampled=False)

    @property
    def sampled_total(self) -> float | None:
        """The weighted mean of the sampled digits (single-integer scoring, for comparison)."""
        return self._weighted(sampled=True)

    def scores(self, prefix: str) -> dict[str, ScoreValue]:
        """Trial scores: every rating's expected value, sampled digit and distribution (``PREFIX_NAME``,
        ``PREFIX_NAME_sampled``, ``PREFIX_NAME_p1``..``_p5``), ``PREFIX_parse_failure``, ``PREFIX_fallbacks``."""
        out: dict[str, ScoreValue] = {f"{prefix}_parse_failure": bool(self.failed),
                                      f"{prefix}_fallbacks": self.fallbacks}
        for name, score in self.dimensions.items():
            if score is not None:
                out.update(score.scores(f"{prefix}_{name}"))
        if self.anchors:
            out[f"{prefix}_anchored"] = ",".join(sorted(self.anchors))
            for name in self.anchors:
                own = (self.model or {}).get(name)
                if own is not None:
                    out[f"{prefix}_{name}_model"] = round(own.expected, 4)
        return out


async def rate(ctx: TrialContext, role: str, prompts: Mapping[str, str], weights: Mapping[str, float], *,
               seed: int | None = 0) -> Ratings:
    """One rating per named prompt from the model of ``role``, one request each."""
    logprobs = ctx.supports_logprobs(role)
    return Ratings({name: read_scale(await ctx.generate(role, scale_request(prompt, logprobs=logprobs, seed=seed)))
                    for name, prompt in prompts.items()}, weights)
