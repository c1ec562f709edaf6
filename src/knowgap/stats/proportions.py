"""Intervals of proportions: Wilson's score interval, clustered on Kish's effective sample size; and a judge's
rate corrected for its sensitivity and specificity (Rogan-Gladen).

Trials that share a case (repeats, an extract case's runs) or a source (adversarial cases built on one review)
are not independent observations. A clustered proportion counts clusters, not trials, where the data say they
move together (Miller 2024, "Adding Error Bars to Evals: A Statistical Approach to Language Model Evaluations",
arXiv:2411.00640, section on clustered standard errors): it keeps Wilson's shape on Kish's effective sample size
``n_eff = p(1-p) / Var_cluster(p_hat)``, the cluster-robust (ratio-estimator) variance without the small-sample
factor G/(G-1), capped at the number of trials; at p = 0 or 1 (no variance to estimate from) ``n_eff`` is the
number of clusters.

Two properties hold exactly (bit for bit) and are tested: with every cluster of size 1 the interval is the plain
Wilson interval, and a sample whose every cluster is one outcome repeated R times gives the interval of that
sample with one repeat.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from fractions import Fraction

from knowgap.stats.percentiles import interval_of_draws

Z95 = 1.959963984540054

ClusterCounts = Sequence[tuple[int, int]]
"""(successes, trials) per cluster."""


def wilson_rate(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of an observed proportion ``p`` on a (possibly effective, fractional) sample
    size ``n`` (0 <= low <= high <= 1)."""
    if n <= 0:
        return (math.nan, math.nan)
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # at p = 0 or 1 the bound is exactly 0 or 1; rounding would put p itself outside the interval
    low = 0.0 if p <= 0 else max(0.0, centre - half)
    high = 1.0 if p >= 1 else min(1.0, centre + half)
    return (low, high)


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for ``successes`` out of ``n`` independent trials (0 <= low <= high <= 1)."""
    if n <= 0:
        return (math.nan, math.nan)
    return wilson_rate(successes / n, n, z)


def cluster_counts(outcomes: Sequence[bool], keys: Sequence[Hashable]) -> list[tuple[int, int]]:
    """(successes, trials) per cluster key, in first-seen order."""
    if len(outcomes) != len(keys):
        raise ValueError(f"{len(outcomes)} outcomes but {len(keys)} cluster keys")
    counts: dict[Hashable, list[int]] = {}
    for ok, key in zip(outcomes, keys, strict=True):
        k_n = counts.setdefault(key, [0, 0])
        k_n[0] += bool(ok)
        k_n[1] += 1
    return [(k, n) for k, n in counts.values()]


def effective_n(clusters: ClusterCounts) -> float:
    """Kish's effective sample size of a clustered proportion: p(1-p) over its cluster-robust variance
    ``sum_c (k_c - p n_c)^2 / N^2`` (no small-sample factor), capped at the N trials; the number of clusters
    when p is 0 or 1. Computed in exact arithmetic, so N trials in N clusters give exactly N, and clusters that
    each repeat one outcome R times give exactly the number of clusters."""
    big_n = sum(n for _, n in clusters)
    big_k = sum(k for k, _ in clusters)
    if big_n <= 0:
        return 0.0
    if big_k in (0, big_n):
        return float(min(len(clusters), big_n))
    spread = sum((k * big_n - big_k * n) ** 2 for k, n in clusters)
    if spread == 0:  # every cluster at exactly p: no variance between clusters, n_eff is unbounded
        return float(big_n)
    exact = Fraction(big_k * (big_n - big_k) * big_n * big_n, spread)
    return float(exact) if exact < big_n else float(big_n)


def clustered_wilson(clusters: ClusterCounts, z: float = Z95) -> tuple[float, float]:
    """Wilson's interval on the design-effect-adjusted sample size (:func:`effective_n`); the plain
    :func:`wilson` interval when every cluster holds one trial."""
    big_n = sum(n for _, n in clusters)
    if big_n <= 0:
        return (math.nan, math.nan)
    return wilson_rate(sum(k for k, _ in clusters) / big_n, effective_n(clusters), z)


def rogan_gladen(p_obs: float, sens: float, spec: float) -> float:
    """The rate a judge with sensitivity ``sens`` and specificity ``spec`` would have observed as ``p_obs`` if it
    were perfect: (p_obs + spec - 1) / (sens + spec - 1), clipped to [0, 1]; nan when the judge is no better than
    chance (sens + spec <= 1) or a rate is undefined."""
    denom = sens + spec - 1
    if denom <= 0 or math.isnan(denom):
        return math.nan
    return min(1.0, max(0.0, (p_obs + spec - 1) / denom))


def corrected_rate(k: float, n: float, tp: int, fn: int, fp: int, tn: int, *, reps: int = 4000, seed: int = 0
                   ) -> tuple[float, tuple[float, float] | None] | None:
    """:func:`rogan_gladen` of ``k`` of ``n`` for a judge whose labelled set gave the confusion counts ``tp``,
    ``fn``, ``fp``, ``tn``, with a 95% interval from a seeded Monte Carlo over the observed rate and the judge's
    sensitivity and specificity (Jeffreys Beta draws), so the judge's own uncertainty widens it; the interval is
    None when fewer than half the draws have a judge better than chance. None when the counts give no
    sensitivity or specificity, or the judge is no better than chance. For a clustered rate, ``k`` and ``n`` are
    effective counts (p * n_eff and n_eff), fractional."""
    import numpy as np

    if n <= 0 or not (tp + fn) or not (tn + fp):
        return None
    sens, spec = tp / (tp + fn), tn / (tn + fp)
    if sens + spec <= 1:
        return None
    point = rogan_gladen(k / n, sens, spec)
    rng = np.random.default_rng(seed)
    p = rng.beta(k + 0.5, n - k + 0.5, reps)
    se = rng.beta(tp + 0.5, fn + 0.5, reps)
    sp = rng.beta(tn + 0.5, fp + 0.5, reps)
    youden = se + sp - 1
    ok = youden > 1e-6
    corrected = np.clip((p[ok] + sp[ok] - 1) / youden[ok], 0.0, 1.0)
    return point, interval_of_draws(corrected.tolist(), reps)
