"""The interval of a rank correlation (the rubric report's Spearman rho between people and the judge)."""

from __future__ import annotations

import math
from statistics import NormalDist


def fisher_z_interval(r: float, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """The (1 - alpha) interval of a Spearman correlation ``r`` on ``n`` pairs: Fisher's z with the standard
    error sqrt(1.06 / (n - 3)) of Fieller, Hartley and Pearson (1957); nan when n < 4 or r is undefined."""
    if n < 4 or math.isnan(r):
        return (math.nan, math.nan)
    if abs(r) >= 1:
        return (r, r)
    z = math.atanh(r)
    half = NormalDist().inv_cdf(1 - alpha / 2) * math.sqrt(1.06 / (n - 3))
    return (math.tanh(z - half), math.tanh(z + half))
