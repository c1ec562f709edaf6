"""Reducers: how a metric that is not a count of verdicts is made from one group's trials.

A :class:`~knowgap.engine.metric_spec.MetricSpec` names its reducer (``reducer=Mean(...)``);
:func:`knowgap.engine.verdict_tally.count_metrics` hands each reducer every trial of a group
(:class:`~knowgap.engine.verdict_tally.Seen`) in the same pass that counts the verdicts, then asks it for the
group's metric. Each reducer keeps what it needs in the group's :class:`~knowgap.engine.tally.Tally`.

- :class:`Mean`: a numeric score's mean (cluster bootstrap interval); :class:`Means`: several values per trial, by
  part (``judge_score:faithful``);
- :class:`Statistic`: any function of the trials' items (an F1, an ECE), cluster bootstrap interval;
- :class:`Count`: a count (errors, judge replies that did not parse); :data:`ERRORED` counts errored trials and
  :func:`not_scored` the ``not_scored`` verdicts of some metrics; :class:`CountBy`: counts by a part the data
  names (``sentiment_confusion:positive->negative``);
- :class:`Share`: a proportion of a true/false score that is deliberately no verdict (it says nothing right or
  wrong about the model: clarify's ``citation_rate``, a judge's own parse-failure rate);
- :class:`Shown`: another reducer's metric, reported only where some trial shows it (a judge that ran).

Whether a metric with no observation in a group is reported at all is ``always`` of
:func:`~knowgap.engine.verdict_tally.count_metrics`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
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
    scale: Callable[[float], float] | None = None
    """Maps each score before the mean (a 1-5 rating onto 0-1)."""

    def observe(self, name: str, tally: Tally, seen: Seen) -> None:
        if not seen.ok or (self.when is not None and not self.when(seen.scores)):
            return
        value = self.value(seen) if self.value is not None else seen.scores.get(self.score or name)
        if value is not None and _number(value):
            tally.add(name, self.scale(float(value)) if self.scale else float(value), seen.cluster)

    def metrics(self, name: str, tally: Tally, group: str, description: str) -> list[MetricValue]:
        seed = self.seed(name) if callable(self.seed) else self.seed
        return [tally.mean(name, group, description=description, seed=seed, unbounded=self.unbounded)]


@dataclass(frozen=True)
class Means:
    """Means of several values per trial (a trial's runs), each of ``values(seen)``'s ``(part, value)`` into
    ``NAME`` (part None) or ``NAME:PART`` (``judge_score:faithful``), over the group's finished trials; the
    bootstrap resamples the trials' clusters."""

    values: Callable[[Seen], Iterable[tuple[str | None, float]]]

    def observe(self, name: str, tally: Tally, seen: Seen) -> None:
        if seen.ok:
            for part, value in self.values(seen):
                tally.add(name if part is None else f"{name}:{part}", value, seen.cluster)

    def metrics(self, name: str, tally: Tally, group: str, description: str) -> list[MetricValue]:
        return [tally.mean(n, group, description=description) for n in sorted(tally.values)
                if n == name or n.startswith(f"{name}:")]


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

    def metrics(self, name: str, tally: Tally, group: str, description: str) -> list[MetricValue]:
        items, keys = tally.items.get(name, ([], []))
        lo, hi = cluster_bootstrap(items, keys, self.stat, reps=self.reps, seed=self.seed) or (None, None)
        return [MetricValue(name=name, group=group, value=self.stat(items) if items else None, ci_low=lo,
                            ci_high=hi, n=len(items), n_cases=len(set(keys)), kind="mean", description=description)]


@dataclass(frozen=True)
class Count:
    """A count: ``counted(seen)`` summed over every trial of the group (errored ones too). Its n is the count, or,
    with ``out_of``, the number of trials ``out_of(seen)`` holds for (the trials it was counted among);
    ``nonzero``: reported only where it is above 0."""

    counted: Callable[[Seen], int | bool]
    out_of: Callable[[Seen], bool] | None = None
    nonzero: bool = False

    def observe(self, name: str, tally: Tally, seen: Seen) -> None:
        tally.count(name, int(self.counted(seen)))
        if self.out_of is not None:
            tally.count(f"{name} (out of)", int(self.out_of(seen)))

    def metrics(self, name: str, tally: Tally, group: str, description: str) -> list[MetricValue]:
        if self.nonzero and not tally.counts[name]:
            return []
        made = tally.counted(name, group, description=description)
        if self.out_of is not None:
            made.n = tally.counts[f"{name} (out of)"]
        return [made]


@dataclass(frozen=True)
class CountBy:
    """Counts by a part the data names (``sentiment_confusion:positive->negative``, ``tokens:judge``): each
    ``(part, k)`` of ``counted(seen)`` adds k to ``NAME:PART``, over every trial of the group; every part seen is
    reported (0 included), in sorted order."""

    counted: Callable[[Seen], Iterable[tuple[str, int]]]

    def observe(self, name: str, tally: Tally, seen: Seen) -> None:
        for part, k in self.counted(seen):
            tally.count(f"{name}:{part}", k)

    def metrics(self, name: str, tally: Tally, group: str, description: str) -> list[MetricValue]:
        return [tally.counted(n, group, description=description) for n in sorted(tally.counts)
                if n.startswith(f"{name}:")]


ERRORED = Count(lambda seen: not seen.ok)
"""The trials whose model call failed for good (every suite's ``errors``)."""


def not_scored(metrics: Collection[str]) -> Count:
    """The ``not_scored`` verdicts of ``metrics`` (a judge reply that did not parse, left out of the metric)."""
    return Count(lambda seen: sum(v.verdict == "not_scored" and v.metric in metrics for v in seen.verdicts))


@dataclass(frozen=True)
class Share:
    """The share of the group's finished trials ``when`` selects whose true/false score ``score`` is true (trials
    whose score is not a bool are left out), or of the outcomes ``outcomes(seen)`` gives (one per run), for a
    proportion that is no verdict on the model."""

    score: str | None = None
    when: Callable[[Scores], bool] | None = None
    outcomes: Callable[[Seen], Iterable[bool]] | None = None

    def observe(self, name: str, tally: Tally, seen: Seen) -> None:
        if not seen.ok or (self.when is not None and not self.when(seen.scores)):
            return
        if self.outcomes is not None:
            for outcome in self.outcomes(seen):
                tally.hit(name, outcome, seen.cluster)
            return
        value = seen.scores.get(self.score or name)
        if isinstance(value, bool):
            tally.hit(name, value, seen.cluster)

    def metrics(self, name: str, tally: Tally, group: str, description: str) -> list[MetricValue]:
        return [tally.proportion(name, group, description=description)]


@dataclass(frozen=True)
class Shown:
    """``reducer``'s metric, reported only in a group where some finished trial ``shows`` it (a score that is there,
    even without a value: a judge that ran) or whose name ``group`` accepts."""

    reducer: Any
    shows: Callable[[Seen], bool]
    group: Callable[[str], bool] | None = None

    def observe(self, name: str, tally: Tally, seen: Seen) -> None:
        self.reducer.observe(name, tally, seen)
        if seen.ok and self.shows(seen):
            tally.count(f"{name} (shown)")

    def metrics(self, name: str, tally: Tally, group: str, description: str) -> list[MetricValue]:
        if tally.counts[f"{name} (shown)"] or (self.group is not None and self.group(group)):
            made: list[MetricValue] = self.reducer.metrics(name, tally, group, description)
            return made
        return []
