"""Discrimination validity of the rubric judges (the machinery: knowgap.judges.rubric_validity; the pairs: each
suite's rubric_card.py): pairs built from the datasets, the pairwise card, and the whole measurement on the real small
model."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowgap.judges.cards import find_card, save_card
from knowgap.judges.geval import Ratings, ScaleScore
from knowgap.judges.rubric_validity import PairResult, RubricPair, pairwise_card
from knowgap.suites.clarify.rubric_card import clarify_pairs
from knowgap.suites.partial.prompts import RUBRIC_VERSION
from knowgap.suites.partial.rubric_card import partial_pairs, validate_partial_rubric


def test_pairs_come_from_the_datasets() -> None:
    clarify, files = clarify_pairs()
    assert len(clarify) == 62 and files[0].name == "cases.jsonl"  # every deficient case
    partial, _ = partial_pairs()
    assert len(partial) == 192 and len({p.id for p in partial}) == 192  # every insufficient (scenario, role, task)
    assert all(p.reference != p.assuming for p in clarify + partial)


def _ratings(total: float | None) -> Ratings:
    return Ratings({"x": None if total is None else ScaleScore(expected=total, sampled=round(total))}, {"x": 1.0})


def test_pairwise_card_counts_ties_and_unreadable_ratings_as_wrong() -> None:
    pair = RubricPair("p", "en", "good", "bad", judge=None)  # type: ignore[arg-type]
    results = ([PairResult(pair, _ratings(4.2), _ratings(2.1))] * 6  # right, both in G-Eval and sampled digits
               + [PairResult(pair, _ratings(3.4), _ratings(3.8))]  # wrong
               + [PairResult(pair, _ratings(4.4), _ratings(3.6))]  # right, but the sampled digits tie (4 = 4)
               + [PairResult(pair, _ratings(None), _ratings(3.0))])  # unreadable
    card = pairwise_card("clarify", "v", results, judge_model="m", dataset="d", dataset_sha256="0" * 64,
                         seconds=9.0)
    assert card.judge == "clarify-rubric" and card.n == 9 and card.parse_failures == 1
    assert card.agreement is not None and card.agreement.value == pytest.approx(7 / 9)
    assert card.confusion is not None and card.confusion.tp + card.confusion.fn not in (0, 9)  # both orders shown
    single = card.extra["pairwise_accuracy_single_integer"]
    assert not isinstance(single, float | str) and single.value == pytest.approx(6 / 9)
    assert card.extra["single_integer_ties"] == 1.0 and card.seconds_per_item == pytest.approx(1.0)


@pytest.mark.slow
@pytest.mark.local_model
def test_validate_partial_rubric_end_to_end_on_the_small_model(small_pack_home: Path, tmp_path: Path) -> None:
    """The machinery runs on a real model: one labelled real reply, three G-Eval ratings, a card saved and found
    again. (Whether the judge meets the bar is measured, not tested.)"""
    seen: list[tuple[int, int]] = []
    card = validate_partial_rubric(None, 1, "local:qwen2.5-0.5b", lambda done, total: seen.append((done, total)))
    assert seen == [(1, 1)]
    assert (card.judge, card.version, card.judge_model, card.n) == ("partial-rubric", RUBRIC_VERSION,
                                                                    "local:qwen2.5-0.5b", 1)
    assert card.parse_failures == 0 and card.extra["fallbacks_to_sampled_digit"] == 0.0
    assert card.agreement is not None and card.agreement.value in (0.0, 1.0)
    assert card.replies is not None and card.replies.kind == "real"
    save_card(card)
    assert find_card("partial-rubric", RUBRIC_VERSION, "local:qwen2.5-0.5b") == card
