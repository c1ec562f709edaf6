"""Agreement statistics for ordinal labels (rubric scores 1-5): quadratic-weighted Cohen's kappa, Krippendorff's
alpha with the ordinal metric, Spearman's rank correlation with a Fisher z interval, and a rubric's weighted
total. Pure functions over numbers; a statistic that is undefined on its data is ``nan`` (shown as "-").
Intervals (a bootstrap over items, Fisher's z for Spearman's rho) come from :mod:`knowgap.stats`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from knowgap.labels.stats import coincidences


def quadratic_weighted_kappa(a: Sequence[float], b: Sequence[float]) -> float:
    """Cohen's kappa with quadratic weights for two raters over the same items:
    1 - mean((a_i - b_i)^2) / mean over all pairs (i, j) of (a_i - b_j)^2.

    With equally spaced categories this is the textbook 1 - sum(w O) / sum(w E), w_ij = (i - j)^2 / (k - 1)^2
    (the normalisation cancels), so it needs no list of categories."""
    n = len(a)
    if n != len(b):
        raise ValueError("two raters need the same number of items")
    if n == 0:
        return math.nan
    observed = sum((x - y) ** 2 for x, y in zip(a, b, strict=True)) / n
    expected = sum((x - y) ** 2 for x in a for y in b) / (n * n)
    if expected == 0:
        return math.nan
    return 1 - observed / expected


def krippendorff_alpha_ordinal(units: Sequence[Sequence[float]]) -> float:
    """Krippendorff's alpha with the ordinal metric. ``units[u]`` holds the values the coders gave unit u
    (missing values left out); units with fewer than two values are not pairable and are ignored.

    alpha = 1 - (n - 1) * sum_ck o_ck d2_ck / sum_ck n_c n_k d2_ck, with the coincidence matrix
    o_ck = sum_u (pairs c-k in u) / (m_u - 1) and the ordinal distance
    d2_ck = (sum_{g from c to k} n_g - (n_c + n_k) / 2)^2 over the values used, in order (Krippendorff 2011)."""
    coincidence, n_c = coincidences(units)
    n = sum(n_c.values())
    if n <= 1:
        return math.nan
    values = sorted(n_c)
    cumulative = [0.0]
    for v in values:
        cumulative.append(cumulative[-1] + n_c[v])
    rank = {v: i for i, v in enumerate(values)}

    def d2(c: float, k: float) -> float:
        lo, hi = sorted((rank[c], rank[k]))
        return (cumulative[hi + 1] - cumulative[lo] - (n_c[c] + n_c[k]) / 2) ** 2

    observed = sum(v * d2(c, k) for (c, k), v in coincidence.items())
    expected = sum(n_c[c] * n_c[k] * d2(c, k) for c in values for k in values)
    if expected == 0:
        return math.nan
    return 1 - (n - 1) * observed / expected


def weighted_total(scores: Mapping[str, float | None], weights: Mapping[str, float]) -> float | None:
    """sum(weight * score) over the rubric's dimensions, divided by the sum of the weights (so a rubric whose
    weights sum to 1, like clarify's 0.3 / 0.3 / 0.25 / 0.15, stays on the 1-5 scale); None when a dimension
    is missing."""
    values = [scores.get(k) for k in weights]
    total = sum(weights.values())
    if not total or any(v is None for v in values):
        return None
    return sum(v * w for v, w in zip(values, weights.values(), strict=True) if v is not None) / total


def to_scale(value: float, scale: tuple[float, float], points: int = 5) -> float:
    """A judge's score on ``scale`` (lo, hi) mapped onto 1..points (e.g. 0-1 -> 1-5)."""
    lo, hi = scale
    return 1 + (points - 1) * (value - lo) / (hi - lo)
