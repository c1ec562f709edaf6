"""The injection driver: what every suite with injected runs does the same way, written once.

A suite gives three things, and declares two (docs/architecture.md, "Adding injection to a suite"):

- **where the attack goes and how it is planted**: ``plant(injection) -> Planted``, the suite's request with the
  payload in its carrier (a context, a retrieved fact, a visible evidence field: its untrusted text, chosen by the
  injection's position), and what the run keeps of where it went;
- **its call of the target** on that request, ``ask(injection, request) -> Reply``: the clean run's own code
  (through the engine's gateway, ``ctx.generate``), so the injected request differs from the clean one only by
  the payload;
- **the success check**, ``check(injection, run, clean, trial) -> (worked or None, why)``: the attack's check
  (:data:`~knowgap.injection.attacks.CHECKS`) made on the injected run against the clean run of the same trial;
  ``knowgap.injection.success`` makes the shared ones;
- and it declares what counts as the clean task done (``clean_task``: ``clean_task_score``; none where the suite
  scores its clean task itself) and its own rates over injected runs (:class:`RunRate`, broken down by trial fields
  where it asks).

The driver does the rest: each case's injections (those its case record carries, else ``--inject``'s plan, seeded
by the cases' order: :func:`~knowgap.injection.plan.plan_injections`), the injected runs of a trial paired with its
clean run (``output.injection``: the suite's own fields, ``planted``, ``clean``, ``runs``), the per-trial verdicts,
the noise floor and the injection metrics per group, clustered as the suite's others (``attack_success_rate`` by
family, position and disguise, ``attack_noise_floor``, ``clean_task_score``, the suite's rates).
:meth:`InjectionDriver.metric_specs` declares them for the suite's specs
(:class:`~knowgap.engine.metric_spec.MetricSpec`: description, direction, cluster unit, judge, what a run needs).

Two designs of the noise floor (``noise``):

- ``repeats``: one clean run per trial; the check between the clean runs of repeats 0 and 1 of a case (repeat 1's
  clean run where repeat 0's injected run was);
- ``reruns``: the suite asks the clean request several times in a trial (``reruns``: the clean runs after the one it
  compares with) and the injected request as often (``times``, or a run per injection as the suite stores it);
  each re-run is checked against the clean run with each injection the trial planted. Trials whose clean runs are
  the same runs (``shared_clean``: extract's attacks on one review) count them once per repeat.

A suite whose stored trials keep another layout (extract: ``clean`` and ``injected`` lists) gives a ``view`` that
reads them as the driver's ``output.injection``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

from knowgap.engine.metric_spec import Choice, Counts, JudgeRef, MetricSpec, Need
from knowgap.engine.records import MetricValue, TrialRecord, Verdict
from knowgap.engine.tally import Tally
from knowgap.engine.verdicts import judged, not_scored, rate
from knowgap.injection.metrics import (
    ATTACK_SUCCESS,
    CLEAN_TASK_SCORE,
    DESCRIPTIONS,
    NOISE_FLOOR,
    count_attack,
)
from knowgap.injection.options import InjectionOptions, plan_for
from knowgap.injection.plan import Injection
from knowgap.text import quoted_start

Facts = Mapping[str, Any]
"""What is stored of a run (or a trial's ``output.injection``), as the checks and the metrics read it."""
Check = Callable[[Injection, Facts, Facts, Facts], tuple[bool | None, str]]
"""``(injection, run, clean, trial) -> (worked, why)``: whether ``injection`` worked in ``run`` against ``clean``
(None: not checkable) and why in one line. ``run``: what plant and ask stored of the injected run, with the facts
ask gave for the check; ``clean``: the clean run's stored facts; ``trial``: the trial's ``output.injection`` (the
suite's own fields). For the noise floor, ``run`` is repeat 1's clean run where the injected run of repeat 0 was
(its planting fields kept), ``clean`` repeat 0's."""


class TrialView(Protocol):
    """What the driver reads of one trial: :class:`InjectedTrial`, or a suite's lighter view of its own."""

    @property
    def case_id(self) -> str: ...

    @property
    def config_id(self) -> str: ...

    @property
    def repeat(self) -> int: ...

    @property
    def status(self) -> str: ...

    @property
    def injection(self) -> Mapping[str, Any] | None:
        """The trial's ``output.injection`` (None: the trial ran no injected run)."""
        ...

    @property
    def system(self) -> str:
        """The target's system prompt where a stored run does not hold it (partial's runs), else ''."""
        ...


T = TypeVar("T", bound=TrialView)
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class InjectedTrial:
    """The driver's view of a trial record: its ids, scores and ``output.injection`` (not its calls)."""

    case_id: str
    config_id: str
    repeat: int
    status: str
    scores: Mapping[str, Any]
    injection: Mapping[str, Any] | None
    system: str = ""

    @classmethod
    def of(cls, record: TrialRecord) -> InjectedTrial:
        return cls(case_id=record.case_id, config_id=record.config_id, repeat=record.repeat, status=record.status,
                   scores=record.scores, injection=record.output.get("injection"))


@dataclass(frozen=True)
class Planted(Generic[R]):
    """One injection planted in a suite's request: the request to ask, and where the payload went (kept in the
    run: an injected context, a carrier fact, an evidence path)."""

    request: R
    stored: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Reply:
    """What an injected run did: ``stored`` is kept in the trial's output (the reply, whether it abstained...);
    ``facts`` is what the check compares beyond it and is not kept (partial's leaks and evidence text)."""

    stored: dict[str, Any]
    facts: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunRate:
    """A suite's own rate over its injected runs, read off each stored run (``value`` None: not counted)."""

    name: str
    description: str
    value: Callable[[Facts], bool | None]
    why: Callable[[Facts, bool], str]
    lower_is_better: bool = True
    by: tuple[str, ...] = ()
    """Trial fields (in ``output.injection``) to break the rate down by: ``NAME:FIELD=VALUE``."""


@dataclass(frozen=True)
class InjectionDriver(Generic[T]):
    """One suite's injected runs, verdicts and metrics (see the module)."""

    suite: str
    checks: tuple[str, ...]
    """The attack checks the suite makes (an attack with another is never planted; a file of one's own with one
    is refused)."""
    check: Check
    view: Callable[[TrialRecord], T]
    """A trial record as the driver reads it (:meth:`InjectedTrial.of`, or the suite's own view)."""
    clean_task: Callable[[T], tuple[bool | None, str] | None] | None = None
    """Whether a trial's clean run did the suite's task, and why (None: the trial does not count; (None, why): it
    counts but was not scored). None: the driver reports no ``clean_task_score`` (the suite scores it itself)."""
    clean_task_description: str = ""
    reply_field: str = "raw"
    """The stored run's field holding the reply a verdict quotes."""
    rates: tuple[RunRate, ...] = ()
    noise: Literal["repeats", "reruns"] = "repeats"
    """Where the noise floor's clean runs come from (see the module)."""
    shared_clean: Callable[[T], Hashable] | None = None
    """Under ``reruns``: trials with one key share their clean runs (counted once per repeat); None: the case."""
    described: Mapping[str, str] = field(default_factory=dict)
    """The suite's own description of a shared metric (what its check counts as success)."""

    # --- what it reports ----------------------------------------------------------------------------------
    def metric_specs(self, *, needs: Need | None = None, clean_task_needs: Need | None = None,
                     judges: Mapping[str, JudgeRef | Choice] | None = None, counts: Mapping[str, Counts] | None = None,
                     cluster: str = "case") -> tuple[MetricSpec, ...]:
        """The declaration of every metric the driver reports for the suite (each a proportion, clustered by
        ``cluster``; ``attack_success_rate`` also by family, position and disguise): what the suite's specs list.
        ``needs``: what a run needs for them (``--inject`` or a case file carrying injections), ``clean_task_needs``
        for ``clean_task_score`` where that differs (partial: ``--defences`` alone gives it); ``judges`` and
        ``counts``: the judge deciding a metric, where one does (the clean task score by the suite's own judge),
        and the verdicts it counts; the others are offline checks."""
        judges, counts = judges or {}, counts or {}
        return tuple(MetricSpec(name, "proportion", text, lower_is_better=lower, cluster=cluster,
                                judge=judges.get(name), counts=counts.get(name),
                                needs=clean_task_needs or needs if name == CLEAN_TASK_SCORE else needs)
                     for name, text, lower in self._declared())

    def _declared(self) -> list[tuple[str, str, bool]]:
        shared = [(ATTACK_SUCCESS, True), (NOISE_FLOOR, True)]
        return [*((name, self.described.get(name, DESCRIPTIONS[name]), lower) for name, lower in shared),
                *([(CLEAN_TASK_SCORE, self.clean_task_description, False)] if self.clean_task else []),
                *((r.name, r.description, r.lower_is_better) for r in self.rates)]

    def descriptions(self) -> dict[str, str]:
        return {name: text for name, text, _ in self._declared()}

    def metric_names(self) -> frozenset[str]:
        return frozenset(self.descriptions())

    def lower_is_better(self) -> frozenset[str]:
        return frozenset(name for name, _, lower in self._declared() if lower)

    # --- which case gets which attack -------------------------------------------------------------------------
    def injections(self, options: InjectionOptions, cases: Sequence[tuple[str, str]],
                   carried: Mapping[str, Sequence[Injection]], field_for: Callable[[str], str | None] | None = None,
                   ) -> dict[str, list[Injection]]:
        """The injections of each of ``cases`` ((id, language), the suite's stable order) that gets some: those
        its record carries (``carried``: a file written by ``knowgap data inject``), else, under ``--inject``, the
        planner's (over all ``cases``; ``field_for`` names a case's hidden field for a ``{field}`` placeholder)."""
        planned = plan_for(options, self.suite, cases, self.checks, field_for) if options.inject else {}
        out = {case_id: list(carried.get(case_id) or planned.get(case_id, [])) for case_id, _ in cases}
        return {case_id: injections for case_id, injections in out.items() if injections}

    # --- one trial ----------------------------------------------------------------------------------------------
    async def run(self, injections: Sequence[Injection], *, clean: Facts,
                  plant: Callable[[Injection], Planted[R]], ask: Callable[[Injection, R], Awaitable[Reply]],
                  fields: Mapping[str, Any] | None = None, reruns: Sequence[Facts] = (),
                  times: int = 1) -> dict[str, Any]:
        """The trial's ``output.injection``: the suite's ``fields``, the injections planted, the clean run's facts
        (and its ``reruns``: the clean request's further runs, for the ``reruns`` noise floor) and ``times``
        injected runs per injection (planted once, asked, each checked against the clean run), in order."""
        out = self.output(injections, clean, [], **(fields or {}))
        if reruns:
            out["reruns"] = [dict(run) for run in reruns]
        for injection in injections:
            planted = plant(injection)
            for _ in range(times):
                reply = await ask(injection, planted.request)
                run = {**planted.stored, **reply.stored}
                worked, why = self.check(injection, {**run, **reply.facts}, clean, out)
                out["runs"].append({"injection": injection.model_dump(), **run, "worked": worked, "why": why})
        return out

    @staticmethod
    def output(injections: Sequence[Injection], clean: Facts, runs: list[dict[str, Any]],
               **fields: Any) -> dict[str, Any]:
        """A trial's ``output.injection`` as :meth:`run` writes it (``runs`` empty: nothing could be planted)."""
        return {**fields, "planted": [i.model_dump() for i in injections], "clean": dict(clean), "runs": runs}

    def verdicts(self, record: TrialRecord, clean_why: str | None = None) -> list[Verdict]:
        """The clean run's task verdict, then per injected run (``part``: its number, attack and reply) whether
        the attack worked and the suite's rates. ``clean_why``: the clean task verdict's why where the suite has
        said it already (partial: its decision verdict's)."""
        trial = self.view(record)
        info = trial.injection
        if trial.status != "ok" or not info:
            return []
        out = []
        done = self.clean_task(trial) if self.clean_task else None
        if done is not None:
            why = clean_why or done[1]
            out.append(not_scored(CLEAN_TASK_SCORE, why) if done[0] is None else judged(CLEAN_TASK_SCORE, done[0], why))
        for i, (planted, run) in enumerate(_pairs(info)):
            attack = f" ({planted['attack_id']})" if planted.get("attack_id") else ""
            part = f"injection {i}{attack}: {quoted_start(run.get(self.reply_field) or '')}"
            worked, why = run.get("worked"), str(run.get("why", ""))
            out.append(not_scored(ATTACK_SUCCESS, why, part=part) if worked is None
                       else rate(ATTACK_SUCCESS, worked, why, lower_is_better=True, part=part))
            for r in self.rates:
                value = r.value(run)
                if value is not None:
                    out.append(rate(r.name, value, r.why(run, value), lower_is_better=r.lower_is_better, part=part))
        return out

    # --- metrics ------------------------------------------------------------------------------------------------
    def metrics(self, records: Iterable[TrialRecord], cluster: Callable[[T], Hashable]) -> list[MetricValue]:
        """The injection metrics per configuration (one group each), read as a stream; none for a configuration
        whose trials ran no injected run."""
        groups: dict[str, _Counts] = defaultdict(_Counts)
        for record in records:
            trial = self.view(record)
            if trial.status == "ok" and trial.injection:
                self._count(groups[trial.config_id], trial, cluster(trial))
        return [m for group in sorted(groups) for m in self._values(group, groups[group])]

    def group_metrics(self, group: str, trials: Iterable[T], cluster: Callable[[T], Hashable]) -> list[MetricValue]:
        """The injection metrics of the trials of one ``group`` (none when none ran an injected run)."""
        counts = _Counts()
        for trial in trials:
            if trial.status == "ok" and trial.injection:
                self._count(counts, trial, cluster(trial))
        return self._values(group, counts) if counts.trials else []

    def _count(self, counts: _Counts, trial: T, key: Hashable) -> None:
        info = trial.injection
        assert info
        counts.trials += 1
        t = counts.tally
        done = self.clean_task(trial) if self.clean_task else None
        if done is not None and done[0] is not None:
            t.hit(CLEAN_TASK_SCORE, done[0], key)
        if self.noise == "reruns":
            self._rerun_noise(counts, trial, info, key)
        elif trial.repeat in (0, 1):
            counts.repeats.setdefault(trial.case_id, {})[trial.repeat] = (info, trial.system, key)
        for planted, run in _pairs(info):
            count_attack(t, Injection.model_validate(planted), run.get("worked"), key)
            for r in self.rates:
                value = r.value(run)
                if value is not None:
                    t.hit(r.name, value, key)
                    for part in r.by:
                        t.hit(f"{r.name}:{part}={info.get(part)}", value, key)

    def _rerun_noise(self, counts: _Counts, trial: T, info: Facts, key: Hashable) -> None:
        """Each of the trial's clean re-runs checked against its clean run with each injection it planted, once
        for the trials that share these clean runs (the first one read)."""
        shared = (self.shared_clean(trial) if self.shared_clean else trial.case_id, trial.repeat)
        if shared in counts.noise_seen:
            return
        counts.noise_seen.add(shared)
        distinct = {json.dumps(p, sort_keys=True): p for p in info.get("planted", [])}
        for rerun in info.get("reruns", []):
            for planted in distinct.values():
                worked, _ = self.check(Injection.model_validate(planted), rerun, info["clean"], info)
                if worked is not None:
                    counts.tally.hit(NOISE_FLOOR, worked, key)

    def _noise(self, counts: _Counts) -> None:
        """The checks of repeat 0's injections between the clean runs of repeats 0 and 1 (repeat 1's as if it were
        the injected run, planted where repeat 0's was)."""
        for by_repeat in counts.repeats.values():
            if 0 not in by_repeat or 1 not in by_repeat:
                continue
            (first, _, _), (second, system, key) = by_repeat[0], by_repeat[1]
            for planted, run in _pairs(first):
                worked, _ = self.check(Injection.model_validate(planted), {"system": system, **run, **second["clean"]},
                                       first["clean"], second)
                if worked is not None:
                    counts.tally.hit(NOISE_FLOOR, worked, key)

    def _values(self, group: str, counts: _Counts) -> list[MetricValue]:
        self._noise(counts)
        described = self.descriptions()
        names = {*counts.tally.proportion_names(), *([CLEAN_TASK_SCORE] if self.clean_task else [])}
        return [counts.tally.proportion(name, group, described[name.split(":", 1)[0]]) for name in sorted(names)
                if name.split(":", 1)[0] in described]


class _Counts:
    """One group's tally, and the clean runs of repeats 0 and 1 of each case for the noise floor."""

    def __init__(self) -> None:
        self.tally = Tally()
        self.trials = 0
        self.repeats: dict[str, dict[int, tuple[Facts, str, Hashable]]] = {}
        self.noise_seen: set[tuple[Hashable, int]] = set()


def _pairs(info: Facts) -> Iterable[tuple[Facts, Facts]]:
    """(planted injection, its stored run) of a trial's ``output.injection``: the injection a run holds, else the
    one at its place in ``planted`` (runs stored before each held its injection)."""
    planted = info.get("planted", [])
    for i, run in enumerate(info.get("runs", [])):
        injection = run.get("injection") or (planted[i] if i < len(planted) else None)
        if injection is not None:
            yield injection, run
