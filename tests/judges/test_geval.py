"""G-Eval scoring of 1-5 ratings from token probabilities (knowgap.judges.geval)."""

from __future__ import annotations

import math

import pytest

from knowgap.judges.geval import Ratings, ScaleScore, expected_value, read_scale, scale_distribution
from knowgap.models.types import ChatResponse, TokenLogprob, TopLogprob


def position(token: str, probs: dict[str, float]) -> TokenLogprob:
    top = [TopLogprob(token=t, logprob=math.log(p)) for t, p in sorted(probs.items(), key=lambda kv: -kv[1])]
    return TokenLogprob(token=token, logprob=math.log(probs[token]), top=top)


def test_weighted_mean_of_a_known_distribution() -> None:
    # 0.5 on "4", 0.2 on " 4" (the same digit after a space), 0.2 on "2", 0.1 on a non-digit token
    at = position("4", {"4": 0.5, " 4": 0.2, "2": 0.2, "Four": 0.1})
    dist = scale_distribution(at)
    assert dist == pytest.approx([0.0, 0.2 / 0.9, 0.0, 0.7 / 0.9, 0.0])
    assert expected_value(dist or []) == pytest.approx((2 * 0.2 + 4 * 0.7) / 0.9)
    assert scale_distribution(position("x", {"x": 0.9, "y": 0.1})) is None


def test_read_scale_from_the_first_digit_token() -> None:
    reply = ChatResponse(text="Score: 3", logprobs=[
        position("Score", {"Score": 0.9, "3": 0.1}), position(":", {":": 1.0}),
        position(" 3", {" 3": 0.6, " 5": 0.3, " 1": 0.1})])
    score = read_scale(reply)
    assert score is not None and score.from_logprobs and score.sampled == 3
    assert score.expected == pytest.approx(3 * 0.6 + 5 * 0.3 + 1 * 0.1)
    # no probabilities (a provider without them): the sampled digit, marked as a fallback
    fallback = read_scale(ChatResponse(text="I'd say 4."))
    assert fallback == ScaleScore(expected=4.0, sampled=4) and not fallback.from_logprobs
    # a reply with no digit 1-5 is a parse failure, never a default
    assert read_scale(ChatResponse(text="7", logprobs=[position("7", {"7": 0.9, "8": 0.1})])) is None
    assert read_scale(ChatResponse(text="four out of five")) is None
    assert read_scale(ChatResponse(text="10")) is None


def test_ratings_total_scores_and_failures() -> None:
    four = ScaleScore(expected=4.2, distribution=[0, 0, 0.1, 0.6, 0.3], sampled=4)
    two = ScaleScore(expected=2.0, sampled=2)
    ratings = Ratings({"a": four, "b": two}, {"a": 0.75, "b": 0.25})
    assert ratings.total == pytest.approx(4.2 * 0.75 + 2 * 0.25) and ratings.sampled_total == pytest.approx(3.5)
    assert ratings.fallbacks == 1 and ratings.failed == []
    scores = ratings.scores("r")
    assert scores["r_a"] == 4.2 and scores["r_a_p4"] == 0.6 and scores["r_a_sampled"] == 4
    assert "r_b_p1" not in scores and scores["r_b"] == 2.0 and scores["r_fallbacks"] == 1
    assert scores["r_parse_failure"] is False
    broken = Ratings({"a": four, "b": None}, {"a": 0.75, "b": 0.25})
    assert broken.total is None and broken.failed == ["b"] and broken.scores("r")["r_parse_failure"] is True


def test_an_anchored_dimension_is_one_and_the_models_own_rating_is_kept() -> None:
    four = ScaleScore(expected=4.2, distribution=[0, 0, 0.1, 0.6, 0.3], sampled=4)
    two = ScaleScore(expected=2.0, sampled=2)
    ratings = Ratings({"a": four, "b": two}, {"a": 0.75, "b": 0.25}).anchored({"a": "asks no question"})
    assert ratings.total == pytest.approx(1 * 0.75 + 2 * 0.25)
    assert ratings.model_total == pytest.approx(4.2 * 0.75 + 2 * 0.25)
    scores = ratings.scores("r")
    assert scores["r_a"] == 1.0 and scores["r_a_model"] == 4.2 and scores["r_anchored"] == "a"
    assert ratings.fallbacks == 1  # b's sampled digit; an anchor is no fallback
    unreadable = Ratings({"a": None, "b": two}, {"a": 0.75, "b": 0.25}).anchored({"a": "asks no question"})
    assert unreadable.failed == [] and unreadable.model_total is None and "r_a_model" not in unreadable.scores("r")
    plain = Ratings({"a": four}, {"a": 1.0})
    assert plain.anchored({}) is plain and plain.model_total == plain.total and "r_anchored" not in plain.scores("r")
