"""Confidence intervals: Wilson for proportions, a seeded percentile bootstrap for means, both clustered.

Trials that share a case (repeats, an extract case's runs) or a source (adversarial cases built on one review)
are not independent observations. Every interval here takes the trials' cluster keys and counts clusters, not
trials, where the data say they move together (Miller 2024, "Adding Error Bars to Evals: A Statistical
Approach to Language Model Evaluations", arXiv:2411.00640, section on clustered standard errors):

- a proportion keeps Wilson's shape on Kish's effective sample size ``n_eff = p(1-p) / Var_cluster(p_hat)``,
  the cluster-robust (ratio-estimator) variance without the small-sample factor G/(G-1), capped at the number
  of trials; at p = 0 or 1 (no variance to estimate from) ``n_eff`` is the number of clusters;
- a mean is a seeded percentile bootstrap that resamples clusters, all their trials at once; where the
  clusters show no spread (one case, or every case scoring the same) a bootstrap can only return a point, so a
  metric's mean takes Wilson's interval instead for scores in [0, 1] and no interval otherwise
  (:func:`mean_interval`).

Two properties hold exactly (bit for bit) and are tested: with every cluster of size 1 the intervals are the
plain Wilson and bootstrap intervals, and a sample whose every cluster is one observation repeated R times
gives the interval of that sample with one repeat.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Sequence
from fractions import Fraction

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


def bootstrap_mean(values: Sequence[float], *, reps: int = 2000, seed: int = 0,
                   alpha: float = 0.05) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean of independent values (deterministic for a seed)."""
    n = len(values)
    if n == 0:
        return (math.nan, math.nan)
    if n == 1:
        return (float(values[0]), float(values[0]))
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(reps))
    return _percentiles(means, alpha)


def _percentiles(draws: Sequence[float], alpha: float) -> tuple[float, float]:
    reps = len(draws)
    lo = draws[int(math.floor(alpha / 2 * reps))]
    hi = draws[min(reps - 1, int(math.ceil((1 - alpha / 2) * reps)) - 1)]
    return (lo, hi)


def group_by_cluster(keys: Sequence[Hashable]) -> list[list[int]]:
    """The positions of each cluster key, clusters in first-seen order."""
    groups: dict[Hashable, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    return list(groups.values())


def _cluster_mean(values: Sequence[float]) -> float:
    """A cluster's mean; exactly its value when the cluster repeats one value (or holds one)."""
    first = values[0]
    if all(v == first for v in values):
        return float(first)
    return math.fsum(values) / len(values)


def cluster_bootstrap_mean(values: Sequence[float], keys: Sequence[Hashable], *, reps: int = 2000, seed: int = 0,
                           alpha: float = 0.05) -> tuple[float, float]:
    """Percentile bootstrap CI of the pooled mean, resampling clusters (all their values at once).

    With clusters of equal size the pooled mean of a resample is the mean of its cluster means, so the
    bootstrap runs on the cluster means with :func:`bootstrap_mean`'s draws: clusters of size 1 give exactly
    its interval, and clusters that repeat one value give exactly the interval of one repeat. Clusters of
    unequal size resample (sum, size) pairs: the ratio estimator."""
    if len(values) != len(keys):
        raise ValueError(f"{len(values)} values but {len(keys)} cluster keys")
    if not values:
        return (math.nan, math.nan)
    groups = group_by_cluster(keys)
    sizes = [len(g) for g in groups]
    if len(set(sizes)) == 1:
        return bootstrap_mean([_cluster_mean([values[i] for i in g]) for g in groups], reps=reps, seed=seed,
                              alpha=alpha)
    sums = [math.fsum(values[i] for i in g) for g in groups]
    rng = random.Random(seed)
    picks = range(len(groups))
    draws = []
    for _ in range(reps):
        chosen = rng.choices(picks, k=len(groups))
        draws.append(math.fsum(sums[i] for i in chosen) / sum(sizes[i] for i in chosen))
    return _percentiles(sorted(draws), alpha)


def mean_interval(values: Sequence[float], keys: Sequence[Hashable], *, reps: int = 2000, seed: int = 0,
                  unbounded: bool = False) -> tuple[float, float] | None:
    """The 95% CI of a clustered mean as a metric reports it: :func:`cluster_bootstrap_mean`, unless the clusters show
    no spread (one cluster, or every cluster's mean the same), where a bootstrap can only return the mean itself
    (a zero-width interval: certainty from one case). Then, for scores in [0, 1], the Wilson interval of that
    mean over the clusters, as a share that every case had would get (no [0, 1] score varies more than a 0/1
    outcome, so it is the cautious side: 12 cases all 1.0 give [0.76, 1], as 12 of 12 does); for other values,
    and for a quantity that is not a [0, 1] score even when its values fall there (``unbounded``: tokens,
    accuracy per 1,000 tokens), None (no interval can be estimated). None also when there are no values."""
    if len(values) != len(keys):
        raise ValueError(f"{len(values)} values but {len(keys)} cluster keys")
    if not values:
        return None
    groups = group_by_cluster(keys)
    means = {_cluster_mean([values[i] for i in g]) for g in groups}
    if len(means) > 1:
        return cluster_bootstrap_mean(values, keys, reps=reps, seed=seed)
    (mean,) = means
    in_unit = not unbounded and 0.0 <= min(values) and max(values) <= 1.0
    return interval_without_spread(mean, len(groups)) if in_unit else None


def interval_without_spread(value: float, clusters: int) -> tuple[float, float] | None:
    """The 95% CI of a statistic whose cluster resamples all give ``value`` (one cluster, or clusters that all
    agree), where a percentile bootstrap returns the zero-width ``(value, value)``: Wilson's interval of a share
    ``value`` over ``clusters`` for a statistic in [0, 1], None (no interval) otherwise."""
    return wilson_rate(value, clusters) if clusters > 0 and 0.0 <= value <= 1.0 else None


def unless_point(ci: tuple[float, float], value: float, clusters: int) -> tuple[float, float] | None:
    """A percentile bootstrap's interval ``ci`` of a statistic ``value`` over ``clusters``, unless it is a point
    (every resample gave one value: one cluster, or clusters that all agree), which is not certainty: then
    :func:`interval_without_spread`."""
    return ci if ci[0] != ci[1] else interval_without_spread(value, clusters)


def cluster_resample(items: Sequence[object], groups: Sequence[Sequence[int]], rng: random.Random) -> list[object]:
    """One cluster bootstrap resample of ``items``: as many clusters as there are, drawn with replacement, each
    with all its items (``groups``: the items' positions per cluster, :func:`group_by_cluster`). With clusters of
    size 1 it draws exactly what ``rng.choices(items, k=n)`` draws."""
    if len(groups) == len(items):
        return list(rng.choices(items, k=len(items)))
    return [items[i] for g in rng.choices(groups, k=len(groups)) for i in g]


def newcombe_interval(p1: float, ci1: tuple[float, float], p2: float, ci2: tuple[float, float]
                      ) -> tuple[float, float]:
    """95% interval of p1 - p2 by Newcombe's hybrid score method (1998, method 10) from each proportion's own
    interval (Wilson, or clustered Wilson)."""
    (l1, u1), (l2, u2) = ci1, ci2
    d = p1 - p2
    return d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
