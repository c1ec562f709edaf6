"""Seeded percentile bootstraps, clustered: means, any statistic over clustered items, statistics over
independent items, and the bootstrap test of a change. Every interval is read off its draws by the one rule of
:mod:`knowgap.stats.percentiles`.

Trials that share a case or a source are not independent, so a bootstrap resamples **clusters** with
replacement, each with all its items (Miller 2024, arXiv:2411.00640). Where the clusters show no spread (one
case, or every case scoring the same) a bootstrap can only return a point, which is not certainty: a score in
[0, 1] then gets Wilson's interval over its clusters instead, any other value no interval
(:func:`interval_without_spread`).

Two properties hold exactly (bit for bit) and are tested: with every cluster of size 1 a clustered bootstrap is
the plain one, and a sample whose every cluster is one value repeated R times gives the interval of that sample
with one repeat.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from knowgap.stats.percentiles import interval_of_draws, percentile_interval
from knowgap.stats.proportions import wilson_rate

T = TypeVar("T")


def bootstrap_mean(values: Sequence[float], *, reps: int = 2000, seed: int = 0,
                   alpha: float = 0.05) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean of independent values (deterministic for a seed)."""
    n = len(values)
    if n == 0:
        return (math.nan, math.nan)
    if n == 1:
        return (float(values[0]), float(values[0]))
    rng = random.Random(seed)
    return percentile_interval((sum(rng.choices(values, k=n)) / n for _ in range(reps)), alpha)


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
    return percentile_interval(draws, alpha)


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


def cluster_resample(items: Sequence[T], groups: Sequence[Sequence[int]], rng: random.Random) -> list[T]:
    """One cluster bootstrap resample of ``items``: as many clusters as there are, drawn with replacement, each
    with all its items (``groups``: the items' positions per cluster, :func:`group_by_cluster`). With clusters of
    size 1 it draws exactly what ``rng.choices(items, k=n)`` draws."""
    if len(groups) == len(items):
        return list(rng.choices(items, k=len(items)))
    return [items[i] for g in rng.choices(groups, k=len(groups)) for i in g]


def cluster_bootstrap(items: Sequence[T], keys: Sequence[Hashable], statistic: Callable[[list[T]], float | None],
                      *, reps: int = 2000, seed: int = 0) -> tuple[float, float] | None:
    """The 95% CI of ``statistic`` (any function of a list of items: an F1, an ECE, a ratio) by a seeded
    percentile bootstrap that resamples clusters (``keys[i]``: item i's cluster; all its items at once); where
    every resample gives one value, not that point (:func:`unless_point`). None when there are no items, the
    statistic has no value on them, or it has none on half the resamples or more."""
    if len(items) != len(keys):
        raise ValueError(f"{len(items)} items but {len(keys)} cluster keys")
    value = statistic(list(items)) if items else None
    if value is None:
        return None
    groups = group_by_cluster(keys)
    rng = random.Random(seed)
    ci = interval_of_draws((statistic(cluster_resample(items, groups, rng)) for _ in range(reps)), reps)
    return None if ci is None else unless_point(ci, value, len(groups))


def bootstrap_ci(items: Sequence[T], statistic: Callable[[Sequence[T]], float], *, reps: int = 1000,
                 seed: int = 0, alpha: float = 0.05) -> tuple[float, float]:
    """Seeded percentile bootstrap over independent items (label agreement: an item is one trial's labels);
    resamples on which the statistic is undefined (``nan``) are dropped; ``nan`` when fewer than half the
    resamples give a value."""
    n = len(items)
    if n == 0:
        return (math.nan, math.nan)
    rng = random.Random(seed)
    values = []
    for _ in range(reps):
        values.append(statistic([items[rng.randrange(n)] for _ in range(n)]))
    return interval_of_draws(values, reps, alpha) or (math.nan, math.nan)


def percentile_test(deltas: Sequence[float]) -> tuple[float, float, float]:
    """(ci_low, ci_high, p) of bootstrap draws of a change: its 95% percentile interval and the two-sided
    bootstrap p-value of no change (draws at exactly 0 count half on each side)."""
    n = len(deltas)
    lo, hi = percentile_interval(deltas)
    below = sum(d < 0 for d in deltas) + 0.5 * sum(d == 0 for d in deltas)
    above = n - below
    return lo, hi, min(1.0, 2 * (min(below, above) + 1) / (n + 1))
