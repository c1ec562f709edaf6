"""Rank correlation (Spearman's rho: the rubric report's and the rubric cards' agreement of the judge with people)
and its interval."""

from __future__ import annotations

import math
from collections.abc import Sequence
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


def ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, ties given their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for t in range(i, j + 1):
            out[order[t]] = (i + j) / 2 + 1
        i = j + 1
    return out


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    n = len(x)
    if n != len(y):
        raise ValueError("a correlation needs as many x as y")
    if n < 2:
        return math.nan
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx, syy = sum((a - mx) ** 2 for a in x), sum((b - my) ** 2 for b in y)
    if sxx == 0 or syy == 0:
        return math.nan
    return sxy / math.sqrt(sxx * syy)


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation: Pearson's r of the (tie-averaged) ranks."""
    if len(x) != len(y):
        raise ValueError("a correlation needs as many x as y")
    return pearson(ranks(x), ranks(y))
