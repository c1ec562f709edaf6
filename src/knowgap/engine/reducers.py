"""Reducers: how a metric that is not a count of verdicts is made from one group's trials.

A :class:`~knowgap.engine.metric_spec.MetricSpec` names its reducer (``reducer=Mean(...)``);
:func:`knowgap.engine.verdict_tally.count_metrics` hands each reducer every trial of a group
(:class:`~knowgap.engine.verdict_tally.Seen`) in the same pass that counts the verdicts, then asks it for the
group's metric. Each reducer keeps what it needs in the group's :class:`~knowgap.engine.tally.Tally`.

- :class:`Mean`: a numeric score's mean (cluster bootstrap interval);
- :class:`Statistic`: any function of the trials' items (an F1, an ECE), cluster bootstrap interval;
- :class:`Count`: a count (errors, judge replies that did not parse); :data:`ERRORED` counts errored trials and
  :func:`not_scored` the ``not_scored`` verdicts of some metrics;
- :class:`Share`: a proportion of a true/false score that is deliberately no verdict (it says nothing right or
  wrong about the model: clarify's ``citation_rate``, a judge's own parse-failure rate).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from knowgap.engine.records import MetricValue
from knowgap.engine.tally import Tally
from knowgap.engine.verdict_tally import Seen
from knowgap.stats import cluster_bootstrap

Scores = Mapping[str, Any]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True)
class Mean:
    """The mean of score ``score`` (default: the metric's name) over the group's finished trials ``when`` selects
    whose score is a number, or of ``value(seen)`` where it is not None. ``seed``: the bootstrap's (or a function
    of the metric's name, for a family); ``unbounded``: not a score in [0, 1] (:meth:`MetricValue.mean`)."""

    score: str | None = None
    when: Callable[[Scores], bool] | None = None
    value: Callable[[Seen], float | None] | None = None
    seed: int | Callable[[str], int] = 0
    unbounded: bool = False

    def observe(self, name: str, tally: Tally, seen: Seen) -> None:
        if not seen.ok or (self.when is not None and not self.when(seen.scores)):
            return
        value = self.value(seen) if self.value is not None else seen.scores.get(self.score or name)
        if value is not None and _number(value):
            tally.add(name, float(value), seen.cluster)

    def metric(self, name: str, tally: Tally, group: str, description: str) -> MetricValue:
        seed = self.seed(name) if callable(self.seed) else self.seed
        return tally.mean(name, group, description=description, seed=seed, unbounded=self.unbounded)


@dataclass(frozen=True)
class Statistic:
    """``stat`` of the items ``item(seen)`` gives the group's finished trials (None: the trial gives none), with a
    percentile bootstrap 95% CI that resamples clusters (:func:`knowgap.stats.cluster_bootstrap`)."""

    item: Callable[[Seen], Any]
    stat: Callable[[list[Any]], float | None]
    reps: int = 2000
    seed: int = 0

    def observe(self, name: str, tally: Tally, seen: Seen) -> None:
        if seen.ok and (item := self.item(seen)) is not None:
            tally.keep(name, item, seen.cluster)

    def metric(self, name: str, tally: Tally, group: str, description: str) -> MetricValue:
        items, keys = tally.items.get(name, ([], []))
        lo, hi = cluster_bootstrap(items, keys, self.stat, reps=self.reps, seed=self.seed) or (None, None)
        return MetricValue(name=name, group=group, value=self.stat(items) if items else None, ci_low=lo, ci_high=hi,
                           n=len(items), n_cases=len(set(keys)), kind="mean", description=description)


@dataclass(frozen=True)
class Count:
    """A count: ``counted(seen)`` summed over every trial of the group (errored ones too)."""

    counted: Callable[[Seen], int | bool]

    def observe(self, name: str, tally: Tally, seen: Seen) -> None:
        tally.count(name, int(self.counted(seen)))

    def metric(self, name: str, tally: Tally, group: str, description: str) -> MetricValue:
        return tally.counted(name, group, description=description)


ERRORED = Count(lambda seen: not seen.ok)
"""The trials whose model call failed for good (every suite's ``errors``)."""


def not_scored(metrics: Collection[str]) -> Count:
    """The ``not_scored`` verdicts of ``metrics`` (a judge reply that did not parse, left out of the metric)."""
    return Count(lambda seen: sum(v.verdict == "not_scored" and v.metric in metrics for v in seen.verdicts))


@dataclass(frozen=True)
class Share:
    """The share of the group's finished trials ``when`` selects whose true/false score ``score`` is true (trials
    whose score is not a bool are left out), for a proportion that is no verdict on the model."""

    score: str
    when: Callable[[Scores], bool] | None = None

    def observe(self, name: str, tally: Tally, seen: Seen) -> None:
        if not seen.ok or (self.when is not None and not self.when(seen.scores)):
            return
        value = seen.scores.get(self.score)
        if isinstance(value, bool):
            tally.hit(name, value, seen.cluster)

    def metric(self, name: str, tally: Tally, group: str, description: str) -> MetricValue:
        return tally.proportion(name, group, description=description)
