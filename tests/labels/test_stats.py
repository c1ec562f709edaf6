"""Agreement statistics against textbook values computed by hand, and Krippendorff's alpha against the
``krippendorff`` package (a test-only dependency) on random data with missing values."""

from __future__ import annotations

import math
import random

import pytest

from knowgap.labels.stats import (
    cohen_kappa,
    confusion,
    fleiss_kappa,
    krippendorff_alpha_nominal,
    percent_agreement,
)


def pairs_from_table(yy: int, yn: int, ny: int, nn: int) -> tuple[list[str], list[str]]:
    a = ["y"] * (yy + yn) + ["n"] * (ny + nn)
    b = ["y"] * yy + ["n"] * yn + ["y"] * ny + ["n"] * nn
    return a, b


@pytest.mark.parametrize(("table", "p_o", "kappa"), [
    # Wikipedia "Cohen's kappa", worked example: p_o = 0.7, p_e = 0.5 -> 0.4
    ((20, 5, 10, 15), 0.7, 0.4),
    # its second pair of examples: p_o = 0.60 in both, p_e = 0.54 -> 0.1304 and p_e = 0.46 -> 0.2593
    ((45, 15, 25, 15), 0.6, 0.06 / 0.46),
    ((25, 35, 5, 35), 0.6, 0.14 / 0.54),
])
def test_cohen_kappa_textbook(table: tuple[int, int, int, int], p_o: float, kappa: float) -> None:
    a, b = pairs_from_table(*table)
    assert percent_agreement(a, b) == pytest.approx(p_o)
    assert cohen_kappa(a, b) == pytest.approx(kappa)
    assert confusion(a, b, ["y", "n"]) == [[table[0], table[1]], [table[2], table[3]]]


def test_cohen_kappa_edge_cases() -> None:
    assert cohen_kappa(["a", "b", "a"], ["a", "b", "a"]) == pytest.approx(1.0)
    assert math.isnan(cohen_kappa(["a", "a"], ["a", "a"]))  # one category only: undefined
    assert math.isnan(cohen_kappa([], []))
    # perfect disagreement on a balanced pair: p_o = 0, p_e = 0.5 -> -1
    assert cohen_kappa(["a", "b"], ["b", "a"]) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        cohen_kappa(["a"], ["a", "b"])


def test_fleiss_kappa_wikipedia_example() -> None:
    # Wikipedia "Fleiss' kappa": 10 subjects, 14 raters, 5 categories; P = 0.378, P_e = 0.213, kappa = 0.210
    counts = [(0, 0, 0, 0, 14), (0, 2, 6, 4, 2), (0, 0, 3, 5, 6), (0, 3, 9, 2, 0), (2, 2, 8, 1, 1),
              (7, 7, 0, 0, 0), (3, 2, 6, 3, 0), (2, 5, 3, 2, 2), (6, 5, 2, 1, 0), (0, 2, 2, 3, 7)]
    ratings = [[c for c, k in enumerate(row, start=1) for _ in range(k)] for row in counts]
    # by hand: P_i = (sum n_ij^2 - 14) / 182, summing to 1 + 506/182; column totals 20, 28, 39, 21, 32 of 140
    p_bar = (1 + 506 / 182) / 10
    p_e = (20**2 + 28**2 + 39**2 + 21**2 + 32**2) / 140**2
    assert (round(p_bar, 3), round(p_e, 3)) == (0.378, 0.213)  # the article's intermediate values
    assert fleiss_kappa(ratings) == pytest.approx((p_bar - p_e) / (1 - p_e), abs=1e-5)
    assert round(fleiss_kappa(ratings), 3) == 0.210
    with pytest.raises(ValueError):
        fleiss_kappa([["a", "b"], ["a"]])


def test_fleiss_equals_scott_pi_for_two_raters() -> None:
    a, b = pairs_from_table(20, 5, 10, 15)
    # Scott's pi by hand: p_o = 0.7; pooled shares yes = 55/100, no = 45/100; p_e = 0.505
    assert fleiss_kappa(list(zip(a, b, strict=True))) == pytest.approx((0.7 - 0.505) / (1 - 0.505))


def test_krippendorff_alpha_textbook_example() -> None:
    # Krippendorff (2011) "Computing Krippendorff's alpha-reliability", the 4 coders x 12 units example with
    # missing values; nominal alpha = 0.743
    n = None
    coders = [[1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n],
              [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
              [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n],
              [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n]]
    units = [[c[u] for c in coders if c[u] is not None] for u in range(12)]
    assert round(krippendorff_alpha_nominal(units), 3) == 0.743


def test_krippendorff_alpha_matches_reference_package() -> None:
    krippendorff = pytest.importorskip("krippendorff", reason="reference implementation is in the dev extras")
    import numpy as np

    rng = random.Random(7)
    for trial in range(20):
        coders, units_n = rng.randint(2, 5), rng.randint(5, 40)
        truth = [rng.randrange(3) for _ in range(units_n)]
        data = [[(t if rng.random() < 0.7 else rng.randrange(3)) if rng.random() > 0.2 else None for t in truth]
                for _ in range(coders)]
        units = [[row[u] for row in data if row[u] is not None] for u in range(units_n)]
        if sum(len(u) for u in units if len(u) >= 2) < 2:
            continue
        reliability = np.array([[np.nan if v is None else v for v in row] for row in data], dtype=float)
        try:
            expected = krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal")
        except (ValueError, ZeroDivisionError):
            continue
        ours = krippendorff_alpha_nominal(units)
        if math.isnan(expected):
            assert math.isnan(ours)
        else:
            assert ours == pytest.approx(expected, abs=1e-9), trial
