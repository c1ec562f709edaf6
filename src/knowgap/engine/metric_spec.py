"""One declaration per metric: what a number means lives in one place.

A suite declares each metric it can produce once, as a :class:`MetricSpec` beside the suite (its ``specs.py``),
and lists them in :attr:`knowgap.engine.suite.Suite.metric_specs`. Everything else is derived from the specs:
the names an eval file's thresholds are checked against (``metric_names``), the metrics no judge decides
(``computed_metrics``), the judge of each metric under a run's options (``metric_judges``, stored in the
manifest and shown in every report), what a run's options lack to produce one (``metric_needs``), the
descriptions a suite's metrics carry, whether lower is better (the verdicts' polarity), the headline metrics,
and the judge catalogue's metric lists (``knowgap judges --json``).

A spec names its judge as an object (a :class:`knowgap.judges.judge.Judge`, seen here as :class:`JudgeRef`), or
a :class:`Choice` of judges picked by one of the suite's options (``--abstention-judge llm``, ``--no-rubric``):
never by a string. A family of metrics whose names share a pattern (``recall_<category>``) is one spec with a
``<part>`` in its name: its ``members`` list the names it stands for (with a description each, or the spec's
``{part}`` template), or None for a family open to any name of that pattern. A breakdown ``NAME:KEY=VALUE``
(``flip_rate:position=end``) is declared by its ``NAME``.

How a metric is produced: a proportion is counted from the trials' verdicts (:mod:`knowgap.engine.verdict_tally`);
a metric that is not a count of verdicts (a mean, an F1, the errors) names its :class:`Reducer`
(:mod:`knowgap.engine.reducers`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

MetricKind = Literal["proportion", "mean", "count"]
Counts = Literal["positive", "negative"]
_PART = re.compile(r"<([a-z_]+)>")


class JudgeRef(Protocol):
    """What the engine reads of a judge (:class:`knowgap.judges.judge.Judge`): its catalogue name, whether a
    model judges (the run's ``judge`` role) and its current version."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> Literal["offline", "model"]: ...

    def version(self) -> str: ...


class Reducer(Protocol):
    """How one group's trials make a metric that is not a count of verdicts (:mod:`knowgap.engine.reducers`):
    ``observe`` sees each trial of the group (a :class:`~knowgap.engine.verdict_tally.Seen`) with the group's
    :class:`~knowgap.engine.tally.Tally` to keep what it needs in; ``metrics`` gives the group's values of metric
    ``name`` (:class:`~knowgap.engine.records.MetricValue`: one, its breakdowns ``name:KEY=VALUE``, or none)."""

    def observe(self, name: str, tally: Any, seen: Any) -> None: ...

    def metrics(self, name: str, tally: Any, group: str, description: str) -> list[Any]: ...


@dataclass(frozen=True)
class Choice:
    """The judge one of the suite's options picks: ``judges[value]`` for the option's value in this run (None:
    no judge decides the metric then), ``otherwise`` for a value not listed. A choice may hold another choice
    (abstain: the scenario picks the metric set, then ``--abstention-judge`` the judge)."""

    option: str
    judges: Mapping[Any, JudgeRef | Choice | None]
    otherwise: JudgeRef | Choice | None = None

    def pick(self, options: object) -> JudgeRef | None:
        """The judge under ``options`` (the suite's options object)."""
        value = getattr(options, self.option)
        chosen = self.judges[value] if value in self.judges else self.otherwise
        return chosen.pick(options) if isinstance(chosen, Choice) else chosen

    def candidates(self) -> list[JudgeRef]:
        """Every judge some value of the option picks, in declaration order."""
        found: list[JudgeRef] = []
        for chosen in (*self.judges.values(), self.otherwise):
            for judge in (chosen.candidates() if isinstance(chosen, Choice) else [chosen] if chosen else []):
                if all(judge is not seen for seen in found):
                    found.append(judge)
        return found


@dataclass(frozen=True)
class Need:
    """What a run must have for a metric to be produced: ``met(suite)`` (the suite instance with the run's
    options); ``says`` names the option that provides it, in words (``'--inject (or ...)'``), which
    ``knowgap eval --check`` and ``knowgap gate`` print."""

    says: str
    met: Callable[[Any], bool]


@dataclass(frozen=True)
class MetricSpec:
    """A metric's one declaration."""

    name: str
    """The metric's name; a family's has one ``<part>`` (``recall_<category>``)."""
    kind: MetricKind
    """proportion (k of n, Wilson interval), mean (bootstrap interval) or count (no interval)."""
    description: str
    """What it measures, in one line (the metric's description in metrics.json and every report); a family's may
    hold ``{part}`` (filled with each member's name) unless ``members`` gives each its own."""
    lower_is_better: bool = False
    """The direction: a rate of bad behaviour (a flip, a leak) counts its ``wrong`` verdicts."""
    cluster: str | None = "case"
    """The independent unit its interval counts (its trials' cluster key: ``case``, ``review``, ``task``...);
    None for a count."""
    judge: JudgeRef | Choice | None = None
    """The judge that decides it (an object), a :class:`Choice` by an option, or None: computed by an exact rule
    (a count, a parsed field equal to a label, a length)."""
    counts: Counts | None = None
    """A proportion of the judge's positive (or negative) verdicts, which its card's sensitivity and specificity
    correct (Rogan-Gladen); None: a score, a mean or a combination of verdicts."""
    needs: Need | None = None
    """What a run's options must give for it to be produced; None: every run of the suite produces it."""
    headline: bool = False
    """One of the suite's key numbers (extract's configuration matrix compares runs on them)."""
    members: Mapping[str, str] | Sequence[str] | None = field(default=None)
    """A family's names: the ``<part>`` values with a description each, or a list (the ``description``
    template fills in); None for a family open to any value (names are matched by the pattern)."""
    reducer: Reducer | None = None
    """How it is made when it is not a count of verdicts (a mean, a statistic, a count); None: a proportion is
    counted from the verdicts of its name, another kind is made elsewhere (the injection driver)."""
    by: Mapping[str, Callable[[Any], Any]] | None = None
    """Breakdowns of a proportion counted from verdicts: each verdict also counts in ``NAME:KEY=VALUE``, VALUE
    ``by[KEY](record)`` of its trial (``sentiment_accuracy:lang=zh``)."""
    by_part: Callable[[Any, Any], Mapping[str, Any]] | None = None
    """Breakdowns by what a verdict's part is about (an injected run's attack): each verdict also counts in
    ``NAME:KEY=VALUE`` for each KEY, VALUE of ``by_part(record, verdict)`` (``attack_success_rate:position=end``)."""
    shown: Callable[[Any], bool] | None = None
    """Where a proportion counted from verdicts is reported in a group without an observation of it (value None,
    n 0): only where some finished trial of the group ``shown(seen)`` (a :class:`~knowgap.engine.verdict_tally.Seen`;
    the clean task score: a trial with injected runs; :func:`nowhere`: never); None: as ``always`` of
    :func:`~knowgap.engine.verdict_tally.count_metrics` says."""

    def __post_init__(self) -> None:
        parts = _PART.findall(self.name)
        if len(parts) > 1 or (self.members is not None and not parts):
            raise ValueError(f"metric spec {self.name!r}: a family has exactly one <part> in its name, and only a "
                             "family has members")

    @property
    def family(self) -> bool:
        return bool(_PART.search(self.name))

    def judges(self) -> list[JudgeRef]:
        """Every judge that may decide it (one, the choice's candidates, or none)."""
        if isinstance(self.judge, Choice):
            return self.judge.candidates()
        return [self.judge] if self.judge is not None else []

    def matches(self, name: str) -> bool:
        """Whether metric ``name`` (a breakdown by its base name) is this spec's, or one of its family."""
        base = name.split(":", 1)[0]
        if not self.family:
            return base == self.name
        if self.members is not None:
            return base in self.names()
        head, _part, tail = _PART.split(self.name)
        return len(base) > len(head) + len(tail) and base.startswith(head) and base.endswith(tail)

    def names(self) -> list[str]:
        """The concrete names it stands for (a family's members; an open family: none)."""
        if not self.family:
            return [self.name]
        return [_PART.sub(member, self.name) for member in self.members or ()]

    def described(self) -> dict[str, str]:
        """Each concrete name's description."""
        if not self.family:
            return {self.name: self.description}
        if isinstance(self.members, Mapping):
            return {_PART.sub(m, self.name): text for m, text in self.members.items()}
        return {_PART.sub(m, self.name): self.description.replace("{part}", m) for m in self.members or ()}


def nowhere(_seen: Any) -> bool:
    """``MetricSpec.shown`` of a proportion reported only where it has an observation."""
    return False


def expanded(specs: Iterable[MetricSpec]) -> Iterator[tuple[str, MetricSpec]]:
    """(name, spec) for every concrete name the specs stand for, in declaration order."""
    for spec in specs:
        for name in spec.names():
            yield name, spec


def spec_of(specs: Iterable[MetricSpec], name: str) -> MetricSpec | None:
    """The spec declaring metric ``name`` (a breakdown by its base name); None when none does."""
    return next((s for s in specs if s.matches(name)), None)


def metric_names(specs: Iterable[MetricSpec]) -> frozenset[str]:
    return frozenset(name for name, _ in expanded(specs))


def computed_names(specs: Iterable[MetricSpec]) -> frozenset[str]:
    """The names no judge decides under any options."""
    return frozenset(name for name, spec in expanded(specs) if not spec.judges())


def described(specs: Iterable[MetricSpec]) -> dict[str, str]:
    """name -> description, in declaration order."""
    return {name: text for spec in specs for name, text in spec.described().items()}


def lower_is_better(specs: Iterable[MetricSpec]) -> frozenset[str]:
    return frozenset(name for name, spec in expanded(specs) if spec.lower_is_better)


def headline(specs: Iterable[MetricSpec]) -> tuple[str, ...]:
    return tuple(name for name, spec in expanded(specs) if spec.headline)
