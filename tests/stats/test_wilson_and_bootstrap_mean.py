"""Confidence intervals: Wilson score for proportions, seeded percentile bootstrap for means."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence

import pytest

from knowgap.stats import Z95, bootstrap_mean, wilson


def textbook_wilson(k: int, n: int, z: float) -> tuple[float, float]:
    """Wilson (1927) score interval, written as the roots of |p - p_hat| = z * sqrt(p (1 - p) / n)."""
    # (1 + z^2/n) p^2 - (2 p_hat + z^2/n) p + p_hat^2 = 0
    p_hat = k / n
    a = 1 + z * z / n
    b = -(2 * p_hat + z * z / n)
    c = p_hat * p_hat
    disc = math.sqrt(b * b - 4 * a * c)
    return ((-b - disc) / (2 * a), (-b + disc) / (2 * a))


def test_z95_is_the_normal_quantile() -> None:
    assert statistics.NormalDist().inv_cdf(0.975) == pytest.approx(Z95, abs=1e-12)


# Newcombe (1998), "Two-sided confidence intervals for the single proportion: comparison of seven methods",
# Statistics in Medicine 17:857-872, Table II, method 3 (Wilson score, no continuity correction).
NEWCOMBE = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0000, 0.1611),
    (1, 29, 0.0061, 0.1718),
]


@pytest.mark.parametrize(("k", "n", "low", "high"), NEWCOMBE)
def test_wilson_matches_published_values(k: int, n: int, low: float, high: float) -> None:
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(low, abs=5e-5)
    assert hi == pytest.approx(high, abs=5e-5)


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    (0, 10, 0.0, 0.2775),
    (5, 10, 0.2366, 0.7634),
    (10, 10, 0.7225, 1.0),
    (8, 8, 0.6756, 1.0),
    (0, 8, 0.0, 0.3244),
])
def test_wilson_small_n_reference_values(k: int, n: int, low: float, high: float) -> None:
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(low, abs=5e-5)
    assert hi == pytest.approx(high, abs=5e-5)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (5, 10), (10, 10), (81, 263), (1, 1), (3, 7), (999, 1000)])
def test_wilson_equals_the_textbook_roots(k: int, n: int) -> None:
    expected = textbook_wilson(k, n, Z95)
    assert wilson(k, n) == pytest.approx(expected, abs=1e-12)


def test_wilson_at_the_edges_is_clamped_to_unit_interval() -> None:
    assert wilson(0, 10)[0] == 0.0
    assert wilson(10, 10)[1] == 1.0
    for k in range(0, 11):
        lo, hi = wilson(k, 10)
        assert 0.0 <= lo <= k / 10 <= hi <= 1.0


def test_wilson_interval_always_contains_the_observed_proportion() -> None:
    for n in range(1, 150):
        for k in range(n + 1):
            lo, hi = wilson(k, n)
            assert 0.0 <= lo <= k / n <= hi <= 1.0, (k, n, lo, hi)


def test_wilson_other_confidence_level() -> None:
    z99 = statistics.NormalDist().inv_cdf(0.995)
    assert wilson(5, 10, z=z99) == pytest.approx(textbook_wilson(5, 10, z99), abs=1e-12)
    # a wider level gives a wider interval
    assert wilson(5, 10, z=z99)[0] < wilson(5, 10)[0]


def test_wilson_is_symmetric_around_one_half() -> None:
    lo, hi = wilson(3, 10)
    lo2, hi2 = wilson(7, 10)
    assert lo == pytest.approx(1 - hi2, abs=1e-12)
    assert hi == pytest.approx(1 - lo2, abs=1e-12)


def test_wilson_with_no_trials_is_undefined() -> None:
    lo, hi = wilson(0, 0)
    assert math.isnan(lo) and math.isnan(hi)


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    rng = random.Random(1)
    values = [rng.random() for _ in range(40)]
    assert bootstrap_mean(values, seed=7) == bootstrap_mean(values, seed=7)
    assert bootstrap_mean(values, seed=7) != bootstrap_mean(values, seed=8)


@pytest.mark.parametrize("seed", range(5))
def test_bootstrap_interval_contains_the_mean(seed: int) -> None:
    rng = random.Random(100 + seed)
    values = [rng.gauss(3.0, 2.0) for _ in range(30)]
    lo, hi = bootstrap_mean(values, seed=seed)
    mean = statistics.fmean(values)
    assert min(values) <= lo < mean < hi <= max(values)


def test_bootstrap_agrees_with_the_normal_approximation() -> None:
    # 100 values, half 0 and half 1: mean 0.5, standard error 0.05, so the 95% CI is about 0.5 +/- 0.098
    values: Sequence[float] = [0.0, 1.0] * 50
    lo, hi = bootstrap_mean(values, reps=4000, seed=3)
    assert lo == pytest.approx(0.5 - 1.96 * 0.05, abs=0.015)
    assert hi == pytest.approx(0.5 + 1.96 * 0.05, abs=0.015)


def test_bootstrap_of_constant_values_is_a_point() -> None:
    assert bootstrap_mean([2.5] * 12, seed=0) == (2.5, 2.5)


def test_bootstrap_edge_cases() -> None:
    lo, hi = bootstrap_mean([])
    assert math.isnan(lo) and math.isnan(hi)
    assert bootstrap_mean([4]) == (4.0, 4.0)
    assert bootstrap_mean((0.25,), seed=9) == (0.25, 0.25)


def test_bootstrap_wider_for_smaller_alpha() -> None:
    values = [float(i % 7) for i in range(50)]
    lo95, hi95 = bootstrap_mean(values, seed=1)
    lo80, hi80 = bootstrap_mean(values, seed=1, alpha=0.2)
    assert lo95 <= lo80 < hi80 <= hi95
