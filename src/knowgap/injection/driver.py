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
clean run (``output.injection``: the suite's own fields, ``planted``, ``clean``, ``runs``), the per-trial verdicts
(one per injected run and metric, its part ``injection I (ATTACK): "reply..."``) and the declaration of the
injection metrics (:meth:`InjectionDriver.metric_specs`: ``attack_success_rate`` by family, position and disguise,
``attack_noise_floor``, ``clean_task_score``, the suite's rates; each a
:class:`~knowgap.engine.metric_spec.MetricSpec` with its description, direction, cluster unit, judge and what a run
needs). The suite lists them with its own specs, and its one pass
(:func:`~knowgap.engine.verdict_tally.count_metrics`) counts them from the stored verdicts, clustered as its others,
in every group it has: a person's re-judged verdict moves the rate. Two are declared reducers instead: the noise
floor (:class:`NoiseFloor`: checks between clean runs, no verdict of one trial) and a rate counted ``from_runs``.

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
import weakref
from collections.abc import Awaitable, Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

from knowgap.engine.metric_spec import Choice, Counts, JudgeRef, MetricSpec, Need, nowhere
from knowgap.engine.records import MetricValue, TrialRecord, Verdict
from knowgap.engine.tally import Tally
from knowgap.engine.verdict_tally import Seen, count_metrics, stored_or
from knowgap.engine.verdicts import judged, not_scored, rate
from knowgap.injection.metrics import ATTACK_SUCCESS, BREAKDOWNS, CLEAN_TASK_SCORE, DESCRIPTIONS, NOISE_FLOOR
from knowgap.injection.options import InjectionOptions, plan_for
from knowgap.injection.plan import Injection
from knowgap.injection.verdict_calls import PART
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


class _Last:
    """The driver's view of the record read last (record and view swapped together: a pass in another thread
    never reads one record's view for another). The record is held weakly: a pass that streams a run's trials
    keeps none of them alive once it has moved on (``knowgap.iter_trials`` holds no record it has not handed out)."""

    def __init__(self) -> None:
        self.last: tuple[weakref.ref[TrialRecord], Any] | None = None

    def of(self, record: TrialRecord, view: Callable[[TrialRecord], R]) -> R:
        last = self.last
        if last is None or last[0]() is not record:
            last = (weakref.ref(record), view(record))
            self.last = last
        found: R = last[1]
        return found


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
    from_runs: bool = False
    """Counted from each stored run's ``value`` (a declared reducer) rather than from its verdicts: for a fact of
    the output no one re-judges, which runs stored before the driver gave its verdict hold none of (extract's
    ``injected_parse_failure_rate``)."""


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
    _last: _Last = field(default_factory=lambda: _Last(), init=False, repr=False, compare=False)
    _planted: _Last = field(default_factory=lambda: _Last(), init=False, repr=False, compare=False)

    # --- what it reports ----------------------------------------------------------------------------------
    def metric_specs(self, *, needs: Need | None = None, clean_task_needs: Need | None = None,
                     judges: Mapping[str, JudgeRef | Choice] | None = None, counts: Mapping[str, Counts] | None = None,
                     cluster: str = "case", headline: Collection[str] = (),
                     needs_of: Mapping[str, Need | None] | None = None) -> tuple[MetricSpec, ...]:
        """The declaration of every metric the driver reports for the suite (each a proportion, clustered by
        ``cluster``; ``attack_success_rate`` also by family, position and disguise): what the suite's specs list.
        Each is counted from the driver's verdicts (:meth:`verdicts`) in the suite's one pass
        (:func:`~knowgap.engine.verdict_tally.count_metrics`), a breakdown by the injected run a verdict's part is
        about; but the noise floor (:class:`NoiseFloor`: a check between clean runs, across trials) and a rate
        counted ``from_runs``. ``needs``: what a run needs for them (``--inject`` or a case file carrying
        injections), ``clean_task_needs`` for ``clean_task_score`` where that differs (partial: ``--defences``
        alone gives it), ``needs_of`` where one metric's differs; ``judges`` and ``counts``: the judge deciding a
        metric, where one does (the clean task score by the suite's own judge), and the verdicts it counts; the
        others are offline checks; ``headline``: the suite's key numbers among them."""
        judges, counts, needs_of = judges or {}, counts or {}, needs_of or {}
        rates = {r.name: r for r in self.rates}

        def need(name: str) -> Need | None:
            if name in needs_of:
                return needs_of[name]
            return clean_task_needs or needs if name == CLEAN_TASK_SCORE else needs

        def spec(name: str, text: str, lower: bool) -> MetricSpec:
            common: dict[str, Any] = {"lower_is_better": lower, "cluster": cluster, "judge": judges.get(name),
                                      "counts": counts.get(name), "needs": need(name), "headline": name in headline}
            rate_of = rates.get(name)
            if name == NOISE_FLOOR or (rate_of is not None and rate_of.from_runs):
                reducer = NoiseFloor(self) if name == NOISE_FLOOR else _RunsRate(self, rates[name])
                return MetricSpec(name, "proportion", text, reducer=reducer, **common)
            if name == CLEAN_TASK_SCORE:
                return MetricSpec(name, "proportion", text, shown=self._has_injection, **common)
            return MetricSpec(name, "proportion", text, shown=nowhere, by_part=self._breakdowns, **common)

        return tuple(spec(name, text, lower) for name, text, lower in self._declared())

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

    def noise_floor(self) -> NoiseFloor[T]:
        """The noise floor's reducer (for a suite's own name of it: extract's ``noise_floor``)."""
        return NoiseFloor(self)

    def trial(self, record: TrialRecord) -> T:
        """``record`` as the driver reads it (the view of the record read last is kept: the metrics' one pass
        reads a record's verdicts one after the other)."""
        return self._last.of(record, self.view)

    def _has_injection(self, seen: Seen) -> bool:
        """Whether a trial ran injected runs (where ``clean_task_score`` is reported, even with no verdict)."""
        return bool(self.trial(seen.record).injection)

    def _breakdowns(self, record: TrialRecord, verdict: Verdict) -> dict[str, Any]:
        """What a verdict counts under besides its metric: the attack's family, position and disguise (of the
        injected run its part names), or the trial fields a rate is broken down by."""
        info = self.trial(record).injection or {}
        if verdict.metric == ATTACK_SUCCESS:
            injection = _injection_of(self._planted.of(record, lambda _: _Planted.of(info)), verdict)
            return {} if injection is None else {part: getattr(injection, part) for part in BREAKDOWNS}
        rate_of = next((r for r in self.rates if r.name == verdict.metric), None)
        return {} if rate_of is None else {part: info.get(part) for part in rate_of.by}

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
        """The driver's metrics alone, per configuration (one group each), counted from the trials' verdicts (as
        stored, else :meth:`verdicts`) in one pass, read as a stream; none for a configuration whose trials ran no
        injected run. A suite with metrics of its own counts the driver's in its own pass instead, from
        :meth:`metric_specs`."""
        return count_metrics(records, self.metric_specs(), verdicts=stored_or(self.verdicts),
                             cluster=lambda record: cluster(self.trial(record)))


@dataclass(frozen=True)
class NoiseFloor(Generic[T]):
    """``attack_noise_floor``: the attack's checks with no attack (see the module), a declared reducer rather than a
    count of verdicts: under ``repeats`` a check pairs two trials (repeat 1's clean run where repeat 0's injected
    run was), which no verdict of one trial can be; under ``reruns`` the clean runs several trials share count
    once, and the runs stored so far hold no verdict of them. Reported where some check was made."""

    driver: InjectionDriver[T]

    def observe(self, name: str, tally: Tally, seen: Seen) -> None:
        trial = self.driver.trial(seen.record) if seen.ok else None
        if trial is None or trial.status != "ok" or not trial.injection:
            return
        if self.driver.noise == "reruns":
            self._reruns(name, tally, trial, trial.injection, seen.cluster)
        elif trial.repeat in (0, 1):
            tally.keep(f"{name} (clean runs)", (trial.case_id, trial.repeat, trial.injection, trial.system),
                       seen.cluster)

    def _reruns(self, name: str, tally: Tally, trial: T, info: Facts, key: Hashable) -> None:
        """Each of the trial's clean re-runs checked against its clean run with each injection it planted, once
        for the trials that share these clean runs (the first one read)."""
        driver = self.driver
        shared = (name, driver.shared_clean(trial) if driver.shared_clean else trial.case_id, trial.repeat)
        if shared in tally.marks:
            return
        tally.marks.add(shared)
        distinct = {json.dumps(p, sort_keys=True): p for p in info.get("planted", [])}
        for rerun in info.get("reruns", []):
            for planted in distinct.values():
                worked, _ = driver.check(Injection.model_validate(planted), rerun, info["clean"], info)
                if worked is not None:
                    tally.hit(name, worked, key)

    def metrics(self, name: str, tally: Tally, group: str, description: str) -> list[MetricValue]:
        counted = tally
        if self.driver.noise == "repeats":
            counted = Tally()
            self._repeats(name, tally, counted)
        made = counted.proportion(name, group, description=description)
        return [made] if made.n else []

    def _repeats(self, name: str, tally: Tally, counted: Tally) -> None:
        """The checks of repeat 0's injections between the clean runs of repeats 0 and 1 of a case (repeat 1's as
        if it were the injected run, planted where repeat 0's was)."""
        items, keys = tally.items.get(f"{name} (clean runs)", ([], []))
        by_case: dict[str, dict[int, tuple[Facts, str, Hashable]]] = {}
        for (case_id, repeat, info, system), key in zip(items, keys, strict=True):
            by_case.setdefault(case_id, {})[repeat] = (info, system, key)
        for by_repeat in by_case.values():
            if 0 not in by_repeat or 1 not in by_repeat:
                continue
            (first, _, _), (second, system, key) = by_repeat[0], by_repeat[1]
            for planted, run in _pairs(first):
                worked, _ = self.driver.check(Injection.model_validate(planted),
                                              {"system": system, **run, **second["clean"]}, first["clean"], second)
                if worked is not None:
                    counted.hit(name, worked, key)  # (the key as kept: one cluster's keys stay equal)


@dataclass(frozen=True)
class _RunsRate(Generic[T]):
    """A rate counted ``from_runs``: each injected run's value as the trial stored it (see :class:`RunRate`)."""

    driver: InjectionDriver[T]
    rate: RunRate

    def observe(self, name: str, tally: Tally, seen: Seen) -> None:
        trial = self.driver.trial(seen.record) if seen.ok else None
        if trial is None or trial.status != "ok" or not trial.injection:
            return
        info = trial.injection
        for _, run in _pairs(info):
            value = self.rate.value(run)
            if value is not None:
                tally.hit(name, value, seen.cluster)
                for part in self.rate.by:
                    tally.hit(f"{name}:{part}={info.get(part)}", value, seen.cluster)

    def metrics(self, name: str, tally: Tally, group: str, description: str) -> list[MetricValue]:
        return [tally.proportion(n, group, description=description) for n in tally.proportion_names()
                if n == name or n.startswith(f"{name}:")]


@dataclass(frozen=True)
class _Planted:
    """A trial's injected runs' injections, in the order its verdicts number them, and its one injection where it
    planted one."""

    runs: list[Facts]
    single: Injection | None

    @classmethod
    def of(cls, info: Facts) -> _Planted:
        runs = [planted for planted, _ in _pairs(info)]
        distinct = {json.dumps(planted, sort_keys=True): planted for planted in runs}
        return cls(runs, Injection.model_validate(next(iter(distinct.values()))) if len(distinct) == 1 else None)


def _injection_of(planted: _Planted, verdict: Verdict) -> Injection | None:
    """The injection of the injected run ``verdict`` is about: the trial's one injection where it planted one (a
    run stored before its part named it: extract's ``injected run 2``), else the one of the run its part numbers."""
    if planted.single is not None:
        return planted.single
    found = PART.match(verdict.part or "")
    if found is None or int(found.group(1)) >= len(planted.runs):
        return None
    return Injection.model_validate(planted.runs[int(found.group(1))])


def _pairs(info: Facts) -> Iterable[tuple[Facts, Facts]]:
    """(planted injection, its stored run) of a trial's ``output.injection``: the injection a run holds, else the
    one at its place in ``planted`` (runs stored before each held its injection)."""
    planted = info.get("planted", [])
    for i, run in enumerate(info.get("runs", [])):
        injection = run.get("injection") or (planted[i] if i < len(planted) else None)
        if injection is not None:
            yield injection, run
