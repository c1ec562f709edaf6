"""Paired tests and unpaired differences (knowgap.stats.paired, knowgap.stats.differences): the exact McNemar test
and its clustered form by hand, Newcombe's interval and the two-proportion z-test at their edges."""

from __future__ import annotations

import pytest

from knowgap.stats import clustered_mcnemar, difference_from_intervals, mcnemar_exact, newcombe, two_proportion_p


def test_mcnemar_exact_by_hand() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(8, 0) == pytest.approx(2 / 256)
    assert mcnemar_exact(3, 5) == pytest.approx(2 * (1 + 8 + 28 + 56) / 256)
    assert mcnemar_exact(5, 5) == 1.0


def test_clustered_mcnemar_reduces_to_exact_mcnemar_for_clusters_of_one() -> None:
    for fixed, regressed in ((0, 0), (8, 0), (3, 5), (5, 5), (1, 9)):
        one_each = [(1, 0)] * fixed + [(0, 1)] * regressed + [(0, 0)] * 4
        assert clustered_mcnemar(one_each) == (fixed, regressed, mcnemar_exact(fixed, regressed))


def test_clustered_mcnemar_counts_clusters_by_net_change() -> None:
    # 3 identical repeats per case: the p-value of one repeat, not of 24 independent flips
    assert clustered_mcnemar([(3, 0)] * 8) == (8, 0, pytest.approx(2 / 256))
    assert mcnemar_exact(24, 0) < 1e-6
    # a cluster whose trials fix and regress alike counts for neither side; the others by their net change
    assert clustered_mcnemar([(2, 2), (2, 1), (0, 3), (1, 0)]) == (2, 1, mcnemar_exact(2, 1))


def test_newcombe_and_z_edge_cases() -> None:
    lo, hi = newcombe(5, 10, 5, 10)
    assert lo < 0 < hi and lo == pytest.approx(-hi)
    assert two_proportion_p(0, 10, 0, 10) == 1.0


def test_difference_from_two_intervals_reads_each_as_normal() -> None:
    lo, hi, p = difference_from_intervals(0.5, (0.4, 0.6), 0.7, (0.6, 0.8))
    se = ((0.1 / 1.959963984540054) ** 2 * 2) ** 0.5
    assert (lo, hi) == (pytest.approx(0.2 - 1.959963984540054 * se), pytest.approx(0.2 + 1.959963984540054 * se))
    assert p == pytest.approx(0.00557, abs=1e-4)
    assert difference_from_intervals(0.5, (0.5, 0.5), 0.5, (0.5, 0.5)) == (0.0, 0.0, 1.0)
