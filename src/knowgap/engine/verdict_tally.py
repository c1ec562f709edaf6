"""A run's metrics counted from its trials' verdicts, in one pass over the records.

A suite emits one verdict per proportion metric a trial feeds (:meth:`~knowgap.engine.suite.Suite.verdicts`; the
runner stores them in the record). :func:`count_metrics` reads each record once and counts it into every group it
belongs to: its configuration, and each :class:`Split` the suite declares (``CONFIG · kb=KB``, ``CONFIG · zh``).
In each group, a declared proportion's k of n is its verdicts (``right`` and ``wrong``; ``not_scored`` left out), k
those in its numerator (``wrong`` for a rate where lower is better, else ``right``: :func:`knowgap.engine.verdicts.hits`
counts the same), each with the trial's cluster key, so its interval is the clustered Wilson interval of
:class:`~knowgap.engine.tally.Tally`. A metric that is not a count of verdicts (a mean, an F1, the errors) is made
by the :class:`~knowgap.engine.metric_spec.Reducer` its :class:`~knowgap.engine.metric_spec.MetricSpec` declares
(:mod:`knowgap.engine.reducers`), from the same pass.

A suite's ``metrics()`` is then one call::

    count_metrics(records, SPECS, verdicts=self.trial_verdicts, cluster=lambda r: r.case_id, splits=self.splits())
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from knowgap.engine.metric_spec import MetricSpec, expanded, spec_of
from knowgap.engine.records import MetricValue, TrialRecord, Verdict
from knowgap.engine.tally import Tally

Verdicts = Callable[[TrialRecord], Sequence[Verdict]]


@dataclass(frozen=True, slots=True)
class Seen:
    """One trial as a reducer sees it: its record, its scores (as the suite reads them), its verdicts and the
    cluster key its interval counts it under."""

    record: TrialRecord
    scores: Mapping[str, Any]
    verdicts: Sequence[Verdict]
    cluster: Hashable
    context: Mapping[str, Any]
    """What a reducer may need of the run beyond the trial (its options: a threshold), as :func:`count_metrics`
    got it."""

    @property
    def ok(self) -> bool:
        return self.record.status == "ok"


@dataclass(frozen=True)
class Split:
    """More groups for a configuration's trials: ``label(config_id, value)`` for each value of ``values(record)``
    (a trial may count under several: partial's restriction dimensions; none: under its configuration alone)."""

    label: Callable[[str, str], str]
    values: Callable[[TrialRecord], Iterable[str]]
    several: bool = False
    """Made only when the run's trials hold more than one value (abstain's knowledge bases, languages)."""
    metrics: frozenset[str] | None = None
    """The metrics its groups report; None: every one the configuration's group reports."""
    order: Sequence[str] | None = None
    """The groups' order after their configuration's, by value; None: sorted."""
    tags: tuple[str, ...] = ()
    """The case tags its values come from (:attr:`~knowgap.engine.records.TrialRecord.case_tags`: as the trial
    stored them, else today's dataset's: :mod:`knowgap.engine.case_tags`); (): from the record itself."""

    def patterns(self, config_ids: Iterable[str]) -> list[str]:
        """Its groups as :meth:`~knowgap.engine.suite.Suite.metric_groups` gives them (``*`` for the value)."""
        return [self.label(i, "*") for i in config_ids]


def stored_or(derive: Verdicts) -> Verdicts:
    """A trial's verdicts as its record stores them, else (a record made before knowgap stored them, or built by
    hand) derived by ``derive``; an errored trial has none."""

    def verdicts(record: TrialRecord) -> Sequence[Verdict]:
        if record.verdicts or record.status != "ok":
            return record.verdicts
        return derive(record)

    return verdicts


class _Counter:
    """The proportions counted from verdicts and the reducers' metrics, by name, of the specs given."""

    def __init__(self, specs: Sequence[MetricSpec]) -> None:
        self.specs = specs
        self.reduced = [(name, spec) for name, spec in expanded(specs) if spec.reducer is not None]
        self.shown = [spec for spec in specs if spec.shown is not None]
        self._counted: dict[str, MetricSpec | None] = {}

    def counted(self, metric: str) -> MetricSpec | None:
        """The spec whose k of n counts verdicts of ``metric``; None: no verdict of it is counted."""
        if metric not in self._counted:
            spec = spec_of(self.specs, metric)
            self._counted[metric] = spec if spec and spec.kind == "proportion" and spec.reducer is None else None
        return self._counted[metric]

    def observe(self, tally: Tally, seen: Seen) -> None:
        for v in seen.verdicts:
            if v.verdict == "not_scored":
                continue
            spec = self.counted(v.metric)
            if spec is not None:
                counts = (v.verdict == "wrong") == spec.lower_is_better
                tally.hit(v.metric, counts, seen.cluster)
                for key, value in (spec.by or {}).items():
                    tally.hit(f"{v.metric}:{key}={value(seen.record)}", counts, seen.cluster)
                if spec.by_part is not None:
                    for key, part in spec.by_part(seen.record, v).items():
                        tally.hit(f"{v.metric}:{key}={part}", counts, seen.cluster)
        for spec in self.shown:
            assert spec.shown is not None
            if seen.ok and spec.shown(seen):
                tally.marks.add(("shown", spec.name))
        for name, spec in self.reduced:
            assert spec.reducer is not None
            spec.reducer.observe(name, tally, seen)

    def names(self, spec: MetricSpec, tally: Tally) -> list[str]:
        if spec.family and spec.members is None:  # an open family: the names its trials gave
            return [n for n in tally.proportion_names() if spec.matches(n)]
        if spec.by or spec.by_part:  # each name, then its breakdowns the trials gave
            return [x for n in spec.names() for x in
                    (n, *(b for b in tally.proportion_names() if b.startswith(f"{n}:")))]
        return spec.names()

    def metrics(self, tally: Tally, group: str, only: frozenset[str] | None, always: Callable[[str], bool],
                descriptions: Mapping[str, str]) -> list[MetricValue]:
        out = []
        for spec in self.specs:
            texts = spec.described()
            for name in self.names(spec, tally):
                if only is not None and name not in only:
                    continue
                text = descriptions.get(name, texts.get(name, spec.description))
                if spec.reducer is not None:
                    made: list[MetricValue] = spec.reducer.metrics(name, tally, group, text)
                elif spec.kind == "proportion":
                    made = [tally.proportion(name, group, description=text)]
                else:
                    continue
                if spec.shown is not None:
                    out += [m for m in made if m.n or ("shown", spec.name) in tally.marks]
                else:
                    out += [m for m in made if m.kind == "count" or m.n or always(m.name)]
        return out


def count_metrics(records: Iterable[TrialRecord], specs: Sequence[MetricSpec], *, verdicts: Verdicts,
                  cluster: Callable[[TrialRecord], Hashable], splits: Sequence[Split] = (),
                  scores: Callable[[TrialRecord], Mapping[str, Any]] | None = None,
                  always: Iterable[str] | None = None,
                  descriptions: Mapping[str, str] | None = None,
                  context: Mapping[str, Any] | None = None) -> list[MetricValue]:
    """The metrics of ``specs`` per group, from one pass over ``records``.

    ``verdicts(record)``: the trial's verdicts (``suite.trial_verdicts``, or :func:`stored_or`); ``cluster(record)``:
    its cluster key; ``splits``: the groups besides each configuration; ``scores(record)``: the scores reducers
    read (default: the record's); ``always``: the proportions and means reported (when their reducer makes them) in
    a group that has no observation of them (value None, n 0), None for every one (counts are always reported);
    ``descriptions``: a description in place of the spec's; ``context``: what reducers may read of the run (its
    threshold).
    Groups come each configuration (sorted) followed by its splits' groups; metrics in the order of ``specs``, a
    name's breakdowns after it."""
    counter = _Counter(specs)
    tallies: dict[str, Tally] = {}
    configs: set[str] = set()
    found: list[dict[str, set[str]]] = [{} for _ in splits]  # per split: config id -> its values
    for record in records:
        ok = record.status == "ok"
        seen = Seen(record, (scores(record) if scores and ok else record.scores), verdicts(record) if ok else (),
                    cluster(record), context or {})
        configs.add(record.config_id)
        counter.observe(tallies.setdefault(record.config_id, Tally()), seen)
        for split, values in zip(splits, found, strict=True):
            for value in dict.fromkeys(split.values(record)):
                values.setdefault(record.config_id, set()).add(value)
                counter.observe(tallies.setdefault(split.label(record.config_id, value), Tally()), seen)
    shown = (lambda _name: True) if always is None else frozenset(always).__contains__
    texts = descriptions or {}
    out: list[MetricValue] = []
    for config in sorted(configs):
        out += counter.metrics(tallies[config], config, None, shown, texts)
        for split, values in zip(splits, found, strict=True):
            if split.several and len(set().union(*values.values())) < 2:
                continue
            mine = values.get(config, set())
            ordered = [v for v in split.order if v in mine] if split.order is not None else sorted(mine)
            for value in ordered:
                group = split.label(config, value)
                out += counter.metrics(tallies[group], group, split.metrics, shown, texts)
    return out
