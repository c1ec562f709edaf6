"""Ordinal agreement statistics against values computed by hand, Krippendorff's (2011) worked example and the
``krippendorff`` package (a test-only dependency) on random ordinal data with missing values."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from knowgap.labels.ordinal import (
    krippendorff_alpha_ordinal,
    quadratic_weighted_kappa,
    to_scale,
    weighted_total,
)
from knowgap.stats.correlation import ranks, spearman


def test_quadratic_weighted_kappa_by_hand() -> None:
    # a = 1 2 3, b = 1 3 3: observed mean squared difference 1/3; over all 9 pairs (a_i - b_j)^2 sums to
    # 8 + 3 + 4 = 15, mean 5/3 -> kappa_w = 1 - (1/3) / (5/3) = 0.8
    assert quadratic_weighted_kappa([1, 2, 3], [1, 3, 3]) == pytest.approx(0.8)
    assert quadratic_weighted_kappa([1, 1, 5, 5], [1, 1, 5, 5]) == pytest.approx(1.0)
    # a near miss costs less than a far one (that is the point of the weights)
    near = quadratic_weighted_kappa([1, 2, 3, 4, 5], [2, 2, 3, 4, 5])
    far = quadratic_weighted_kappa([1, 2, 3, 4, 5], [5, 2, 3, 4, 5])
    assert 0 < far < near < 1
    # reversed order: systematic disagreement, kappa_w = 1 - 8 / 4 = -1
    assert quadratic_weighted_kappa([1, 2, 3, 4, 5], [5, 4, 3, 2, 1]) == pytest.approx(-1.0)
    assert math.isnan(quadratic_weighted_kappa([3, 3], [3, 3]))  # no spread: undefined
    assert math.isnan(quadratic_weighted_kappa([], []))
    with pytest.raises(ValueError):
        quadratic_weighted_kappa([1], [1, 2])


def _coders() -> list[list[int | None]]:
    n = None
    return [[1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
            [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n]]


def test_krippendorff_alpha_ordinal_textbook_example() -> None:
    # Krippendorff (2011) "Computing Krippendorff's alpha-reliability", section C (4 coders x 12 units, missing
    # values): ordinal alpha = 0.815 (nominal 0.743, interval 0.849)
    coders = _coders()
    units = [[c[u] for c in coders if c[u] is not None] for u in range(12)]
    assert round(krippendorff_alpha_ordinal(units), 3) == 0.815  # type: ignore[arg-type]


def test_krippendorff_alpha_ordinal_by_hand() -> None:
    # two coders, units (1,1), (1,2), (2,2): coincidences o_11 = 2, o_12 = o_21 = 1, o_22 = 2; n_1 = n_2 = 3,
    # n = 6; d2_12 = (3 + 3 - 3)^2 = 9; alpha = 1 - 5 * 2*9 / (2*3*3*9) = 1 - 5/9 = 4/9
    assert krippendorff_alpha_ordinal([[1, 1], [1, 2], [2, 2]]) == pytest.approx(4 / 9)
    assert math.isnan(krippendorff_alpha_ordinal([[3, 3], [3, 3]]))
    assert math.isnan(krippendorff_alpha_ordinal([[1], [2]]))  # nothing pairable


def test_krippendorff_alpha_ordinal_matches_the_package() -> None:
    krippendorff = pytest.importorskip("krippendorff")
    rng = random.Random(7)
    for _ in range(20):
        coders = [[rng.choice([1, 2, 3, 4, 5, None]) for _ in range(15)] for _ in range(3)]
        units = [[c[u] for c in coders if c[u] is not None] for u in range(15)]
        if sum(len(u) for u in units if len(u) >= 2) < 4:
            continue
        matrix = np.array([[np.nan if v is None else v for v in c] for c in coders], dtype=float)
        ours = krippendorff_alpha_ordinal(units)  # type: ignore[arg-type]
        theirs = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
        assert ours == pytest.approx(theirs, abs=1e-9) or (math.isnan(ours) and math.isnan(theirs))


def test_spearman_by_hand() -> None:
    # y = 5 6 7 8 7 ranks 1 2 3.5 5 3.5; deviations from 3: x -2 -1 0 1 2, y -2 -1 .5 2 .5;
    # sxy = 8, sxx = 10, syy = 9.5 -> 8 / sqrt(95)
    assert ranks([5, 6, 7, 8, 7]) == [1, 2, 3.5, 5, 3.5]
    assert spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(8 / math.sqrt(95))
    assert spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-1.0)
    assert math.isnan(spearman([1, 2, 3], [4, 4, 4]))


def test_weighted_total_and_scale() -> None:
    weights = {"a": 0.3, "b": 0.3, "c": 0.25, "d": 0.15}
    # 5*0.3 + 3*0.3 + 4*0.25 + 1*0.15 = 1.5 + 0.9 + 1.0 + 0.15 = 3.55
    assert weighted_total({"a": 5, "b": 3, "c": 4, "d": 1}, weights) == pytest.approx(3.55)
    assert weighted_total({"a": 5, "b": 3, "c": 4}, weights) is None
    assert to_scale(0.0, (0, 1)) == 1 and to_scale(0.5, (0, 1)) == 3 and to_scale(4, (1, 5)) == 4
