"""Sample sizes and design effects (knowgap.stats.power) against textbook values and exact calculations."""

from __future__ import annotations

import math
import random

import pytest

from knowgap.stats import power as pw


def test_two_proportion_sample_size_matches_r_power_prop_test() -> None:
    # R's documented examples of stats::power.prop.test (https://rdrr.io/r/stats/power.prop.test.html, Examples):
    #   power.prop.test(p1 = .50, p2 = .75, power = .90)  # => n = 76.7
    #   power.prop.test(n = 50, p1 = .50, p2 = .75)       # => power = 0.740
    assert pw.n_independent(0.50, 0.75, power=0.90) == pytest.approx(76.7, abs=0.05)
    assert pw.power_independent(50, 0.50, 0.75) == pytest.approx(0.740, abs=0.0005)


def test_two_proportion_sample_size_for_0_30_vs_0_35() -> None:
    # Fleiss's formula without continuity correction, worked by hand: p̄ = 0.325,
    # [1.959964·sqrt(2·0.325·0.675) + 0.841621·sqrt(0.3·0.7 + 0.35·0.65)]² / 0.05² = 1376.3 per group
    # (power.prop.test(p1 = .30, p2 = .35, power = .80) solves the same equation).
    n = pw.n_independent(0.30, 0.35, alpha=0.05, power=0.80)
    assert math.ceil(n) == 1377
    assert pw.power_independent(n, 0.30, 0.35) == pytest.approx(0.80, abs=1e-6)
    assert pw.n_independent(0.35, 0.30) == pytest.approx(n)  # the direction does not matter


def _mcnemar_power(n: int, p10: float, p01: float, alpha: float) -> float:
    """Exact power of the two-sided McNemar z-test with n pairs: discordant pairs D ~ Bin(n, psi), and of them
    n10 ~ Bin(D, p10 / psi); rejected when |n10 - n01| / sqrt(D) > z(1 - alpha/2)."""
    psi = p10 + p01
    crit = pw.z(1 - alpha / 2)
    total = 0.0
    for d in range(1, n + 1):
        p_d = math.comb(n, d) * psi ** d * (1 - psi) ** (n - d)
        if p_d < 1e-15:
            continue
        share = p10 / psi
        total += p_d * sum(math.comb(d, k) * share ** k * (1 - share) ** (d - k)
                           for k in range(d + 1) if abs(2 * k - d) / math.sqrt(d) > crit)
    return total


@pytest.mark.parametrize(("p1", "p2", "phi"), [(0.30, 0.45, 0.4), (0.30, 0.45, 0.0), (0.50, 0.60, 0.5)])
def test_paired_sample_size_gives_the_power_asked_for_exactly_computed(p1: float, p2: float, phi: float) -> None:
    # Connor's normal approximation is slightly conservative: the exact power at its n is 0.80-0.83 here
    psi = pw.discordance(p1, p2, phi)
    n = math.ceil(pw.n_paired(p1, p2, psi=psi))
    p10, p01 = (psi + (p2 - p1)) / 2, (psi - (p2 - p1)) / 2
    assert 0.80 <= _mcnemar_power(n, p10, p01, 0.05) <= 0.84
    assert _mcnemar_power(round(n * 0.8), p10, p01, 0.05) < 0.76


def test_pairs_that_agree_need_fewer_cases_and_independent_pairs_about_as_many_as_each_group() -> None:
    independent = pw.n_independent(0.30, 0.40)
    assert pw.n_paired(0.30, 0.40, psi=pw.discordance(0.30, 0.40, 0.0)) == pytest.approx(independent, rel=0.01)
    assert pw.n_paired(0.30, 0.40, psi=pw.discordance(0.30, 0.40, 0.6)) < independent / 2
    assert pw.discordance(0.30, 0.40, 1.0) == pytest.approx(0.10)  # perfectly correlated: only the difference
    assert pw.n_paired(0.30, 0.40, psi=0.05) == math.inf  # fewer discordant cases than the difference: impossible


@pytest.mark.parametrize("repeats", [1, 2, 3, 10])
def test_repeats_do_not_reduce_cases_when_copies_and_divide_them_when_independent(repeats: int) -> None:
    assert pw.cases_with_repeats(400, repeats, icc=1.0) == pytest.approx(400)
    assert pw.cases_with_repeats(400, repeats, icc=0.0) == pytest.approx(400 / repeats)
    assert pw.design_effect(repeats, 0.5) == pytest.approx(1 + (repeats - 1) * 0.5)


def test_icc_of_identical_repeats_is_one_and_of_alternating_repeats_zero() -> None:
    assert pw.icc_binary([(3, 3), (0, 3), (3, 3), (0, 3)]) == 1.0
    assert pw.icc_binary([(1, 2)] * 8) == 0.0
    assert pw.icc_binary([(1, 1), (0, 1)]) is None  # one trial per case: nothing to tell
    assert pw.icc_binary([(2, 2), (2, 2)]) is None  # no variation at all


@pytest.mark.parametrize("icc", [0.1, 0.5, 0.8])
def test_icc_estimate_recovers_a_beta_binomial_truth(icc: float) -> None:
    # case rates drawn from Beta(a, b) with a + b = 1/icc - 1 give trials correlating by icc within a case
    rng = random.Random(7)
    a = 0.4 * (1 / icc - 1)
    b = 0.6 * (1 / icc - 1)
    clusters = []
    for _ in range(3000):
        rate = rng.betavariate(a, b)
        clusters.append((sum(rng.random() < rate for _ in range(4)), 4))
    estimate = pw.icc_binary(clusters)
    assert estimate == pytest.approx(icc, abs=0.04)


def test_phi_of_paired_rates() -> None:
    same = [(1.0, 1.0), (0.0, 0.0), (1.0, 1.0), (0.0, 0.0)]
    assert pw.phi_paired(same) == pytest.approx(1.0)
    assert pw.phi_paired([(1.0, 0.0), (0.0, 1.0)]) == pytest.approx(-1.0)
    assert pw.phi_paired([(1.0, 1.0), (1.0, 0.0)]) is None  # A never varies


def test_smallest_detectable_difference_is_the_first_one_the_cases_suffice_for() -> None:
    def needed(d: float) -> float:
        return pw.n_independent(0.5 - d / 2, 0.5 + d / 2)

    found = pw.smallest_detectable(100, needed)
    assert found is not None
    assert needed(found) <= 100 < needed(round(found - 0.01, 2))
    assert pw.smallest_detectable(1, needed) is None  # 0 vs 1 takes 1.92 per group
