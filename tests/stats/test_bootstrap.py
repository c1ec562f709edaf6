"""The one percentile rule (knowgap.stats.percentiles) and the bootstraps that read their intervals with it
(knowgap.stats.bootstrap): order statistics counted by hand, the mirror property, the half-of-the-resamples rule,
a statistic's cluster bootstrap (identical repeats give the interval of one repeat, clusters of one item the
plain bootstrap), the item bootstrap of label agreement and the bootstrap test of a change."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import pytest

from knowgap.labels.stats import cohen_kappa
from knowgap.stats import (
    bootstrap_ci,
    cluster_bootstrap,
    interval_of_draws,
    percentile_interval,
    percentile_test,
    wilson_rate,
)


@pytest.mark.parametrize("reps", [7, 40, 999, 1000, 2000, 4000])
@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_the_interval_leaves_as_many_draws_out_on_each_side(reps: int, alpha: float) -> None:
    rng = random.Random(reps)
    draws = [rng.gauss(0, 1) for _ in range(reps)]
    lo, hi = percentile_interval(draws, alpha)
    outside = math.floor(reps * alpha / 2)
    assert sum(d < lo for d in draws) == outside == sum(d > hi for d in draws)
    assert lo in draws and hi in draws  # no interpolation: both bounds are draws
    # a statistic negated (B - A against A - B) gets the mirror image of its interval
    assert percentile_interval([-d for d in draws], alpha) == (-hi, -lo)


def test_two_thousand_draws_give_draws_50_and_1949() -> None:
    draws = list(range(2000))
    assert percentile_interval(reversed(draws)) == (50.0, 1949.0)
    assert percentile_interval(range(1000)) == (25.0, 974.0)  # 25 below, 25 above (partial took draw 975)


def test_draws_without_a_value_are_dropped_and_half_of_them_are_needed() -> None:
    assert interval_of_draws([None, math.nan, *range(10)], reps=12) == percentile_interval(range(10))
    assert interval_of_draws([None] * 7 + [1.0] * 5, reps=12) is None  # 5 values of 12 resamples
    assert interval_of_draws([None] * 6 + [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], reps=12) == (1.0, 6.0)
    assert interval_of_draws([], reps=0) is None
    with pytest.raises(ValueError):
        percentile_interval([])


def _share(items: Sequence[bool]) -> float:
    return sum(items) / len(items)


def test_a_statistic_over_identical_repeats_gets_the_interval_of_one_repeat() -> None:
    rng = random.Random(4)
    outcomes = [rng.random() < 0.4 for _ in range(30)]

    def f1(pairs: Sequence[tuple[bool, bool]]) -> float | None:
        tp = sum(a and b for a, b in pairs)
        wrong = sum(a != b for a, b in pairs)
        return 2 * tp / (2 * tp + wrong) if tp + wrong else None

    pairs = [(o, rng.random() < 0.5) for o in outcomes]
    one = cluster_bootstrap(pairs, list(range(30)), f1, reps=1000, seed=2)
    three = cluster_bootstrap([p for p in pairs for _ in range(3)], [i for i in range(30) for _ in range(3)], f1,
                              reps=1000, seed=2)
    assert one == three and one is not None and one[0] < one[1]


def test_clusters_of_one_item_resample_as_the_plain_bootstrap() -> None:
    rng = random.Random(9)
    values = [rng.random() < 0.3 for _ in range(25)]
    rng = random.Random(0)
    draws = [_share(rng.choices(values, k=len(values))) for _ in range(500)]
    assert cluster_bootstrap(values, [f"c{i}" for i in range(25)], _share, reps=500, seed=0) == \
        percentile_interval(draws)


def test_no_spread_is_not_certainty_and_no_value_is_no_interval() -> None:
    # every cluster gives the statistic one value: Wilson's interval of that share over the clusters, not a point
    assert cluster_bootstrap([True] * 12, list(range(12)), _share, reps=200) == wilson_rate(1.0, 12)
    assert cluster_bootstrap([], [], _share) is None
    assert cluster_bootstrap([1.0, 2.0], ["a", "b"], lambda items: None) is None
    # defined on fewer than half the resamples (the one item that gives a value is drawn in about 1 - 1/e)
    rare = cluster_bootstrap([1.0] + [0.0] * 9, list(range(10)), lambda xs: 1.0 if sum(xs) > 2 else None)
    assert rare is None


def test_the_item_bootstrap_is_seeded_and_covers_the_estimate() -> None:
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    items = list(zip(a, b, strict=True))

    def kappa(ps: Sequence[tuple[str, str]]) -> float:
        return cohen_kappa([p[0] for p in ps], [p[1] for p in ps])

    one = bootstrap_ci(items, kappa, reps=500, seed=3)
    assert one == bootstrap_ci(items, kappa, reps=500, seed=3)
    assert one != bootstrap_ci(items, kappa, reps=500, seed=4)
    assert one[0] < 0.4 < one[1]
    assert -1 <= one[0] and one[1] <= 1
    assert all(math.isnan(x) for x in bootstrap_ci([], kappa))


def test_the_bootstrap_test_of_a_change() -> None:
    lo, hi, p = percentile_test([0.1 * i for i in range(1, 1001)])  # every draw above 0
    assert (lo, hi) == pytest.approx((2.6, 97.5)) and p == pytest.approx(2 / 1001)
    assert percentile_test([0.0] * 200) == (0.0, 0.0, 1.0)
