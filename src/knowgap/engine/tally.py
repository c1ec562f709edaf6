"""A tally of one group's trials (usually one configuration), turned into metrics with 95% CIs.

A suite's ``metrics()`` keeps one :class:`Tally` per group, feeds it each trial's scores and reads the
metrics out at the end::

    tallies: dict[str, Tally] = defaultdict(Tally)
    for r in records:
        t = tallies[r.config_id]
        if r.status != "ok":
            t.count("errors")
            continue
        t.hit("accuracy", bool(r.scores["correct"]))    # a proportion: successes of trials
        t.add("length", float(r.scores["length"]))      # a mean
    for group in sorted(tallies):
        out.append(tallies[group].proportion("accuracy", group, description="..."))

Suites that hold their scores as lists use :meth:`MetricValue.proportion` and :meth:`MetricValue.mean`
directly; both give the same records (Wilson interval for a proportion, seeded bootstrap for a mean).
"""

from __future__ import annotations

from collections import Counter

from knowgap.engine.records import MetricValue


class Tally:
    """Successes of trials per proportion, values per mean, and plain counts, by metric name."""

    def __init__(self) -> None:
        self._hits: dict[str, list[int]] = {}
        self.values: dict[str, list[float]] = {}
        self.counts: Counter[str] = Counter()

    def hit(self, name: str, ok: bool) -> None:
        """One more trial in proportion ``name``, a success when ``ok``."""
        k_n = self._hits.setdefault(name, [0, 0])
        k_n[0] += bool(ok)
        k_n[1] += 1

    def add(self, name: str, value: float) -> None:
        """One more value in mean ``name``."""
        self.values.setdefault(name, []).append(float(value))

    def count(self, name: str, k: int = 1) -> None:
        self.counts[name] += k

    def hits(self, name: str) -> tuple[int, int]:
        """(successes, trials) of proportion ``name``; (0, 0) if it has none."""
        k, n = self._hits.get(name, (0, 0))
        return k, n

    def proportion_names(self) -> list[str]:
        """The proportions that have at least one trial, sorted."""
        return sorted(self._hits)

    def proportion(self, name: str, group: str, description: str = "") -> MetricValue:
        k, n = self.hits(name)
        return MetricValue.proportion(name, group, k, n, description=description)

    def mean(self, name: str, group: str, description: str = "", seed: int = 0) -> MetricValue:
        return MetricValue.mean(name, group, self.values.get(name, []), description=description, seed=seed)

    def counted(self, name: str, group: str, description: str = "") -> MetricValue:
        return MetricValue.count(name, group, self.counts[name], description=description)
