"""The confidence sequence of a judge-corrected rate (knowgap.stats.judge_correction, issue 38): the Rogan-Gladen
range over the observed rate's sequence and the card's box is the brute-force range over a grid of the box, a
threshold no run could decide is told apart, and a fast version of the judge-error simulation
(benchmarks/sequential_error.py --judged): with a judge of known sensitivity and specificity the corrected sequence
is wrong at most alpha of the time, where the uncorrected sequence gated on the same threshold (and a correction at
the card's point values) is wrong far more often."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from benchmarks.sequential_error import JudgedScenario, simulate_judged

from knowgap.stats import rogan_gladen, wilson
from knowgap.stats.judge_correction import (
    CardBox,
    alpha_split,
    card_box,
    corrected_point,
    corrected_range,
    decidable,
    reachable,
)

BOXES = [
    CardBox((0.80, 0.97), (0.70, 0.93), alpha=0.025),
    CardBox((0.55, 0.70), (0.52, 0.66), alpha=0.025),  # se + sp - 1 between 0.07 and 0.36: a wide range
    CardBox((0.95, 0.99), (0.97, 0.995), alpha=0.025),
    CardBox((0.60, 1.00), (0.45, 0.60), alpha=0.025),
]


def _brute(low: float, high: float, box: CardBox, counts: str, steps: int = 60) -> tuple[float, float]:
    """The range of the clipped corrected rate over a grid of (p, se, sp) in [low, high] x box."""
    ps = np.linspace(low, high, steps)
    se = np.linspace(*box.sensitivity, steps)
    sp = np.linspace(*box.specificity, steps)
    p, a, b = np.meshgrid(ps, se, sp, indexing="ij")
    if counts == "negative":
        values = 1 - np.clip((1 - p + b - 1) / (a + b - 1), 0, 1)
    else:
        values = np.clip((p + b - 1) / (a + b - 1), 0, 1)
    return float(values.min()), float(values.max())


@pytest.mark.parametrize("counts", ["positive", "negative"])
@pytest.mark.parametrize("box", BOXES)
def test_the_corrected_range_is_the_worst_case_over_the_box(box: CardBox, counts: str) -> None:
    for low, high in [(0.0, 0.0), (0.1, 0.3), (0.4, 0.45), (0.62, 0.9), (0.0, 1.0), (0.97, 1.0), (0.5, 0.5)]:
        found = corrected_range(low, high, box, counts)  # type: ignore[arg-type]
        assert found is not None
        brute = _brute(low, high, box, counts)
        # the grid holds the corners, so it reaches the extremes exactly; never beyond them
        assert found == pytest.approx(brute, abs=1e-12), (low, high, box, counts)
        assert 0.0 <= found[0] <= found[1] <= 1.0


def test_at_a_point_box_it_is_rogan_gladen() -> None:
    box = CardBox((0.9, 0.9), (0.85, 0.85), alpha=0.0)
    for p in (0.1, 0.3, 0.5, 0.69, 0.9):
        lo, hi = corrected_range(p, p, box) or (None, None)
        assert lo == pytest.approx(rogan_gladen(p, 0.9, 0.85)) == pytest.approx(hi)
        assert corrected_point(p, 0.9, 0.85) == pytest.approx(rogan_gladen(p, 0.9, 0.85))
        assert corrected_point(p, 0.9, 0.85, "negative") == pytest.approx(1 - rogan_gladen(1 - p, 0.9, 0.85))


def test_the_card_box_is_the_cards_wilson_interval_at_the_split_level() -> None:
    assert alpha_split(0.05) == (0.025, 0.025)
    box = card_box(45, 5, 8, 42, 0.025)  # each of se and sp at 1 - 0.025 / 2: z = 2.498
    assert box.sensitivity == pytest.approx(wilson(45, 50, 2.4977054744123054), abs=1e-12)
    assert box.specificity == pytest.approx(wilson(42, 50, 2.4977054744123054), abs=1e-12)
    stated = wilson(45, 50)  # the card's own 95% interval is narrower
    assert box.sensitivity[0] < stated[0] and box.sensitivity[1] > stated[1]


def test_a_box_that_allows_a_chance_judge_cannot_decide_anything() -> None:
    chance = card_box(12, 8, 9, 11, 0.025)  # se 0.6, sp 0.55 on 40 items: se + sp - 1 may be below 0
    assert chance.youden_low <= 0
    assert corrected_range(0.2, 0.4, chance) is None
    assert not any(decidable(chance, op, v) for op, v in itertools.product((">=", "<=", "==", "!="), (0.05, 0.5)))


def test_what_a_threshold_can_reach_with_a_box() -> None:
    tight = card_box(575, 16, 15, 1123, 0.025)  # the shipped abstention card
    for op, v in itertools.product((">=", "<=", ">", "<"), (0.05, 0.5, 0.95)):
        assert reachable(tight, op, v) == {"pass", "fail"}
    # se + sp - 1 in [0.01, 0.42]: a true rate of 1, observed as the judge gives it (0.6), corrects to [0.52, 1]
    narrow = CardBox((0.48, 0.72), (0.53, 0.70), alpha=0.025)
    assert corrected_range(0.6, 0.6, narrow) == pytest.approx((0.52, 1.0))
    assert reachable(narrow, ">=", 0.7) == {"fail"}  # no true rate passes it
    assert reachable(narrow, "<=", 0.3, "negative") == {"fail"}  # 1 - the positive rate <= 0.3: the mirror
    # equality to a value is never decided by a range wider than a point, only refuted
    assert reachable(tight, "==", 0.5) == {"fail"}
    # an observed rate beyond what the judge gives at a true rate 0 or 1 is not counted on
    assert corrected_range(1.0, 1.0, narrow) == (1.0, 1.0) and reachable(narrow, ">=", 0.99) == {"fail"}


def test_corrected_sequence_keeps_alpha_where_the_uncorrected_one_gated_on_the_same_threshold_does_not() -> None:
    """300 simulated runs of 100 cases (1-5 trials, ICC 0.4), true rate 0.72 against a gate >= 0.70 on the corrected
    rate; a judge of se 0.9 and sp 0.85, its card 100 labelled items drawn afresh each run. The judged rate is
    0.69: the uncorrected sequence, exact at the end, fails the gate in most runs; so does correcting at the
    card's point values. The corrected sequence is never wrong."""
    found = simulate_judged(JudgedScenario(0.72, 0.70, 0.4), runs=300, seed=138)
    assert found.wrong_corrected / found.runs <= 0.05
    assert found.wrong_uncorrected / found.runs > 0.15
    assert found.wrong_plugin / found.runs > 0.10


def test_far_from_the_threshold_the_corrected_sequence_decides() -> None:
    found = simulate_judged(JudgedScenario(0.95, 0.70, 0.4), runs=100, seed=7)
    assert found.wrong_corrected == 0
    assert found.decided_corrected >= 95 and found.cases_corrected < 0.9
