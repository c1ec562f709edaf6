"""A tally of one group's trials (usually one configuration), turned into metrics with 95% CIs.

:func:`knowgap.engine.verdict_tally.count_metrics` keeps one :class:`Tally` per group and counts each trial's
verdicts into it, with the trial's cluster key (its case, or the source cases share); the specs' reducers
(:mod:`knowgap.engine.reducers`) keep their values, items and counts in it. Used by hand (a plugin suite, the
injection driver), it is::

    tallies: dict[str, Tally] = defaultdict(Tally)
    for r in records:
        t = tallies[r.config_id]
        if r.status != "ok":
            t.count("errors")
            continue
        t.hit("accuracy", bool(r.scores["correct"]), r.case_id)   # a proportion: successes of trials
        t.add("length", float(r.scores["length"]), r.case_id)     # a mean
    for group in sorted(tallies):
        out.append(tallies[group].proportion("accuracy", group, description="..."))

Observations with one cluster key count as one independent unit in the interval (clustered Wilson for a
proportion, a cluster bootstrap for a mean: :mod:`knowgap.stats`); an observation without a key is its
own cluster. Suites that hold their scores as lists use :meth:`MetricValue.proportion_of` and
:meth:`MetricValue.mean` with the same keys; both give the same records.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from itertools import count
from typing import Any

from knowgap.engine.records import MetricValue
from knowgap.stats import cluster_counts


class Tally:
    """Outcomes per proportion, values per mean (each with its cluster key), and plain counts, by metric name."""

    def __init__(self) -> None:
        self._hits: dict[str, tuple[list[bool], list[Hashable]]] = {}
        self.values: dict[str, list[float]] = {}
        self.keys: dict[str, list[Hashable]] = {}
        self.counts: Counter[str] = Counter()
        self.items: dict[str, tuple[list[Any], list[Hashable]]] = {}
        self.marks: set[Hashable] = set()
        """What a reducer noted it has counted (observations several trials share, counted once), and the specs
        some trial of the group shows (``MetricSpec.shown``)."""
        self._alone = count()

    def _key(self, cluster: Hashable | None) -> Hashable:
        return ("observation", next(self._alone)) if cluster is None else ("cluster", cluster)

    def hit(self, name: str, ok: bool, cluster: Hashable | None = None) -> None:
        """One more trial in proportion ``name``, a success when ``ok``, in ``cluster`` (None: its own)."""
        outcomes, keys = self._hits.setdefault(name, ([], []))
        outcomes.append(bool(ok))
        keys.append(self._key(cluster))

    def add(self, name: str, value: float, cluster: Hashable | None = None) -> None:
        """One more value in mean ``name``, in ``cluster`` (None: its own)."""
        self.values.setdefault(name, []).append(float(value))
        self.keys.setdefault(name, []).append(self._key(cluster))

    def keep(self, name: str, item: Any, cluster: Hashable | None = None) -> None:
        """One more item of statistic ``name`` (an F1's pair, a calibration point), in ``cluster`` (None: its own)."""
        items, keys = self.items.setdefault(name, ([], []))
        items.append(item)
        keys.append(self._key(cluster))

    def count(self, name: str, k: int = 1) -> None:
        self.counts[name] += k

    def hits(self, name: str) -> tuple[int, int]:
        """(successes, trials) of proportion ``name``; (0, 0) if it has none."""
        outcomes, _ = self._hits.get(name, ([], []))
        return sum(outcomes), len(outcomes)

    def clusters(self, name: str) -> list[tuple[int, int]]:
        """(successes, trials) per cluster of proportion ``name``."""
        outcomes, keys = self._hits.get(name, ([], []))
        return cluster_counts(outcomes, keys)

    def proportion_names(self) -> list[str]:
        """The proportions that have at least one trial, sorted."""
        return sorted(self._hits)

    def proportion(self, name: str, group: str, description: str = "") -> MetricValue:
        k, n = self.hits(name)
        return MetricValue.proportion(name, group, k, n, description=description, clusters=self.clusters(name))

    def mean(self, name: str, group: str, description: str = "", seed: int = 0,
             unbounded: bool = False) -> MetricValue:
        """``unbounded``: not a score in [0, 1] (a count, tokens): no interval where the clusters show no spread."""
        return MetricValue.mean(name, group, self.values.get(name, []), description=description, seed=seed,
                                keys=self.keys.get(name, []), unbounded=unbounded)

    def counted(self, name: str, group: str, description: str = "") -> MetricValue:
        return MetricValue.count(name, group, self.counts[name], description=description)
