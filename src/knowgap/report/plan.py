"""``knowgap plan SUITE``: how many cases it takes to detect a difference of a given size, and whether repeats help.

The math is :mod:`knowgap.stats.power`; this module finds its inputs. A stored run (``--from-run``) gives the
metric's baseline rate, the within-case correlation of repeated trials (ICC: repeats of ``--repeats``, or the
extract suite's runs per case) and, with a second group (``--versus``) or a second run, the correlation of two
configurations' verdicts on one case (the paired design's discordance). Each is taken per case from the suite's own
``metrics()`` over that case's trials, so it works for every suite, whatever its scores look like. What is not
measured is assumed, and the plan says so.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from knowgap.engine.records import MetricValue, TrialRecord
from knowgap.engine.suite import Suite
from knowgap.errors import KnowgapError, first_validation_error
from knowgap.report.data import RunData, load_run_data
from knowgap.stats import power as pw
from knowgap.suites import get_suite

WORST_CASE_RATE = 0.5
"""The baseline rate assumed when none is given or measured: a proportion's variance is largest at 0.5."""

Hits = dict[str, tuple[int, int]]
"""(successes, trials) of one metric in one group, by case id."""


class Design(BaseModel):
    """Cases needed under one design, with one trial per case and with the requested repeats."""

    name: str
    cases_one_repeat: int | None
    """None: not reachable (e.g. a discordance smaller than the difference)."""
    cases_with_repeats: int | None
    cases_available: int
    """The cases each configuration gets from the available ones (half of them for independent groups)."""
    smallest_detectable: float | None
    """The smallest difference (to 0.01) the available cases detect with the requested repeats; None: none."""


class Plan(BaseModel):
    """What ``knowgap plan`` prints (``--json``): the inputs, where each came from, the designs and the verdict."""

    suite: str
    metric: str | None = None
    group: str | None = None
    detect: float
    alpha: float
    power: float
    repeats: int
    baseline_rate: float
    baseline_source: str
    icc: float
    icc_source: str
    phi: float | None = None
    """Correlation of two configurations' verdicts on one case (None when --discordance fixes the discordance)."""
    discordance: float
    """At the baseline rate and baseline + detect (or - detect: the direction needing more cases)."""
    discordance_source: str
    available_cases: int
    available_source: str
    paired: Design
    independent: Design
    verdict: list[str] = Field(default_factory=list)


def _trials(metric: MetricValue) -> int:
    """The trials a proportion counts (``n``; its clusters are ``n_cases``)."""
    return metric.n


def case_hits(suite: Suite, records: Sequence[TrialRecord]) -> dict[tuple[str, str], Hits]:
    """(successes, trials) per case of every proportion in the run, by (metric, group): the suite's ``metrics()``
    over each case's ok trials alone."""
    by_case: dict[str, list[TrialRecord]] = defaultdict(list)
    for record in records:
        if record.status == "ok":
            by_case[record.case_id].append(record)
    out: dict[tuple[str, str], Hits] = defaultdict(dict)
    for case_id, case_records in by_case.items():
        for m in suite.metrics(case_records):
            if m.kind == "proportion" and m.value is not None and m.n:
                n = _trials(m)
                out[(m.name, m.group)][case_id] = (round(m.value * n), n)
    return out


def _pick(what: str, given: str | None, known: Sequence[str], flag: str, run: str) -> str:
    if given is not None:
        if given not in known:
            raise KnowgapError(f"{flag} {given!r}: run {run} has no such {what} (known: {', '.join(known) or 'none'})")
        return given
    if len(known) == 1:
        return known[0]
    raise KnowgapError(f"run {run}: give {flag}, one of {', '.join(known) or 'none'}")


def _proportions(run: RunData) -> dict[str, list[str]]:
    """Groups of every proportion metric in the run's metrics, by metric name."""
    out: dict[str, list[str]] = defaultdict(list)
    for m in run.metrics:
        if m.kind == "proportion" and m.value is not None:
            out[m.name].append(m.group)
    return out


def _suite(name: str, options: dict[str, Any], data: str | None) -> Suite:
    cls = get_suite(name)
    options = {k: v for k, v in options.items() if k != "sample"}
    if data is not None:
        if "data" not in cls.Options.model_fields:
            raise KnowgapError(f"--data: suite {name} takes no cases file")
        options["data"] = data
    try:
        return cls(cls.Options.model_validate(options))
    except ValidationError as exc:
        field, message = first_validation_error(exc)
        raise KnowgapError(f"suite {name}: bad option {field}: {message}") from None


def _pairs(first: Hits, second: Hits) -> list[tuple[float, float]]:
    return [(k / n, second[c][0] / second[c][1]) for c, (k, n) in first.items() if c in second]


def _worst(needed: Callable[[float, float], float], p1: float, delta: float) -> float:
    """Cases needed for the harder direction of a difference ``delta`` from ``p1`` (up or down, within [0, 1])."""
    sizes = [needed(p1, p2) for p2 in (p1 + delta, p1 - delta) if 0 <= p2 <= 1]
    return max(sizes) if sizes else math.inf


def _ceil(x: float) -> int | None:
    return None if math.isinf(x) else math.ceil(x - 1e-9)


@dataclass
class Measured:
    """What the stored runs say about the metric: each case's (successes, trials) in the chosen group, and each
    shared case's rates under the two configurations compared (None: no second group or run)."""

    run_id: str
    metric: str
    group: str
    hits: Hits
    pairs: list[tuple[float, float]] | None = None
    other: str = ""
    """The second configuration: ``group G of run R`` or ``run R``."""
    run_cases: int = 0


def measure(loaded: Sequence[RunData], metric: str | None, group: str | None, versus: str | None) -> Measured:
    """Per-case hits of ``metric`` in ``group`` of the first run, and the pairs against ``versus`` (a group of the
    same run) or the same group of the second run."""
    first = loaded[0]
    assert first.suite is not None
    props = _proportions(first)
    metric = _pick("proportion metric", metric, sorted(props), "--metric", first.run_id)
    group = _pick("group", group, props[metric], "--group", first.run_id)
    per_case = case_hits(first.suite, first.records)
    hits = per_case.get((metric, group), {})
    if not hits:
        raise KnowgapError(f"run {first.run_id}: no ok trial scores {metric} in group {group}")
    found = Measured(run_id=first.run_id, metric=metric, group=group, hits=hits,
                     run_cases=len({r.case_id for r in first.records}))
    if versus is not None:
        versus = _pick("group", versus, [g for g in props[metric] if g != group], "--versus", first.run_id)
        found.pairs = _pairs(hits, per_case.get((metric, versus), {}))
        found.other = f"group {versus} of run {first.run_id}"
    elif len(loaded) == 2:
        second = loaded[1]
        assert second.suite is not None
        other = case_hits(second.suite, second.records).get((metric, group), {})
        if not other:
            raise KnowgapError(f"run {second.run_id}: no ok trial scores {metric} in group {group}")
        found.pairs, found.other = _pairs(hits, other), f"run {second.run_id}"
        if not found.pairs:
            raise KnowgapError(f"runs {first.run_id} and {second.run_id} share no case scoring {metric} "
                               "(run both on the same dataset with the same --sample and --seed)")
    return found


def _available(target: Suite, data: str | None, options: dict[str, Any], found: Measured | None) -> tuple[int, str]:
    """The cases the suite's dataset offers, and where that number comes from: the cases that score the metric
    when the run shows only some do (extract's flip rate: the adversarial ones)."""
    available = len(target.cases())
    source = f"the cases file {data}" if data else "the shipped dataset"
    if found is None or len(found.hits) >= found.run_cases:
        return available, source
    scoring = len(found.hits)
    if data is None and options.get("sample") is None:
        return scoring, f"{source}, the {scoring} that score {found.metric}"
    about = max(1, round(available * scoring / found.run_cases))
    return about, f"{source}, about {about} scoring {found.metric} (as {scoring} of the run's {found.run_cases})"


def _baseline(given: float | None, found: Measured | None) -> tuple[float, str]:
    if given is not None:
        return given, "--baseline-rate"
    if found is not None:
        k, n = sum(k for k, _ in found.hits.values()), sum(n for _, n in found.hits.values())
        return k / n, f"run {found.run_id}: {k} of {n} trials ({len(found.hits)} cases)"
    return WORST_CASE_RATE, "assumed 0.5, the worst case (the most variance); give --baseline-rate or --from-run"


def _icc(given: float | None, found: Measured | None, temperature: float) -> tuple[float, str]:
    if given is not None:
        return given, "--icc"
    measured = pw.icc_binary(list(found.hits.values())) if found is not None else None
    if found is not None and measured is not None:
        multi = sum(1 for _, n in found.hits.values() if n > 1)
        return measured, f"run {found.run_id} ({multi} cases with 2 or more trials)"
    why = ("no run given" if found is None else
           "the run has one trial per case" if all(n == 1 for _, n in found.hits.values()) else
           "the run's trials do not vary")
    if temperature == 0:
        return 1.0, f"assumed 1: at temperature 0 repeats of a case are near-copies ({why})"
    return 1.0, (f"assumed 1, the worst case, at temperature {temperature:g} ({why}; a run with --repeats 2 "
                 "measures it)")


def _phi(found: Measured | None) -> tuple[float, str]:
    pairs = found.pairs if found is not None else None
    measured = pw.phi_paired(pairs) if pairs is not None else None
    if found is not None and pairs is not None and measured is not None:
        return measured, (f"correlation {measured:.2f} of verdicts on one case, group {found.group} of run "
                           f"{found.run_id} vs {found.other} ({len(pairs)} cases)")
    why = (f"{found.other} gives no correlation: a configuration's verdicts do not vary over the {len(pairs)} "
           "shared cases" if found is not None and pairs is not None else
           "--versus or a second --from-run measure it")
    return 0.0, ("assumed: the two configurations' verdicts on a case are independent (correlation 0, "
                 f"conservative; pairs usually agree more; {why})")


def _check_inputs(detect: float, power: float, alpha: float, repeats: int, rates: dict[str, float | None],
                  runs: int, versus: str | None) -> None:
    for flag, value in (("--detect", detect), ("--power", power), ("--alpha", alpha)):
        if not 0 < value < 1:
            raise KnowgapError(f"{flag} must be between 0 and 1 (exclusive), got {value}")
    for flag, rate in rates.items():
        if rate is not None and not 0 <= rate <= 1:
            raise KnowgapError(f"{flag} must be between 0 and 1, got {rate}")
    if repeats < 1:
        raise KnowgapError(f"--repeats must be at least 1, got {repeats}")
    if runs > 2:
        raise KnowgapError(f"--from-run: at most two runs (two models or configurations), got {runs}")
    if versus is not None and runs != 1:
        raise KnowgapError("--versus compares two groups of one run: give exactly one --from-run")


def _load(runs: Sequence[str], suite: str, runs_root: str | Path | None) -> list[RunData]:
    loaded = [load_run_data(r, runs_root) for r in runs]
    for run in loaded:
        if run.manifest.config.suite != suite:
            raise KnowgapError(f"run {run.run_id} is a run of suite {run.manifest.config.suite}, not {suite}")
        if run.suite is None:
            raise KnowgapError(f"run {run.run_id}: suite {suite} cannot be loaded with the run's options")
    return loaded


def make_plan(suite: str, *, detect: float, baseline_rate: float | None = None, repeats: int = 1,
              runs: Sequence[str] = (), metric: str | None = None, group: str | None = None,
              versus: str | None = None, icc: float | None = None, discordance: float | None = None,
              power: float = 0.8, alpha: float = 0.05, data: str | None = None,
              runs_root: str | Path | None = None) -> Plan:
    """How many cases ``suite`` needs to detect a difference of ``detect`` in a proportion, paired (the same
    cases under both configurations) and with independent groups, with 1 and with ``repeats`` trials per case.

    ``runs`` (one or two stored runs of the suite) measure the baseline rate of ``metric`` in ``group``, the ICC
    of repeated trials, and the paired correlation (against ``versus``, another group of the first run, or the
    same group of the second run). Given values (``baseline_rate``, ``icc``, ``discordance``) win over
    measured ones. Raises KnowgapError on bad input."""
    _check_inputs(detect, power, alpha, repeats, {"--baseline-rate": baseline_rate, "--icc": icc,
                                                  "--discordance": discordance}, len(runs), versus)
    loaded = _load(runs, suite, runs_root)
    options = dict(loaded[0].manifest.config.options) if loaded else {}
    target = _suite(suite, options, data)
    found = measure(loaded, metric, group, versus) if loaded else None
    available, available_source = _available(target, data, options, found)
    p1, baseline_source = _baseline(baseline_rate, found)
    if max(p1, 1 - p1) < detect:
        raise KnowgapError(f"--detect {detect}: no rate is {detect} away from the baseline {p1:.2f}")
    temperature = float(options.get("temperature", getattr(target.options, "temperature", 0.0)))
    icc_value, icc_source = _icc(icc, found, temperature)
    phi: float | None = None
    if discordance is None:
        phi, discordance_source = _phi(found)
    else:
        discordance_source = "--discordance"

    def psi(a: float, b: float) -> float:
        return discordance if discordance is not None else pw.discordance(a, b, phi or 0.0)

    def paired_one(delta: float) -> float:
        return _worst(lambda a, b: pw.n_paired(a, b, psi=psi(a, b), alpha=alpha, power=power), p1, delta)

    def independent_one(delta: float) -> float:
        return _worst(lambda a, b: pw.n_independent(a, b, alpha=alpha, power=power), p1, delta)

    def design(name: str, one: Callable[[float], float], share: int) -> Design:
        n1 = one(detect)
        return Design(name=name, cases_one_repeat=_ceil(n1),
                      cases_with_repeats=_ceil(pw.cases_with_repeats(n1, repeats, icc_value)), cases_available=share,
                      smallest_detectable=pw.smallest_detectable(
                          share, lambda d: pw.cases_with_repeats(one(d), repeats, icc_value)))

    plan = Plan(suite=suite, metric=found.metric if found else metric, group=found.group if found else None,
                detect=detect, alpha=alpha, power=power, repeats=repeats, baseline_rate=p1,
                baseline_source=baseline_source, icc=icc_value, icc_source=icc_source, phi=phi,
                discordance=max(psi(p1, p2) for p2 in (p1 + detect, p1 - detect) if 0 <= p2 <= 1),
                discordance_source=discordance_source, available_cases=available, available_source=available_source,
                paired=design("paired: the same cases under both", paired_one, available),
                independent=design("independent groups: other cases for each (per group)", independent_one,
                                   available // 2))
    plan.verdict = verdict(plan)
    return plan


def verdict(plan: Plan) -> list[str]:
    """The plan in plain words: what the available cases can detect, and whether repeats help."""
    trials = "1 trial" if plan.repeats == 1 else f"{plan.repeats} trials"
    what = plan.metric or "the metric"
    lines = []
    design = plan.paired
    needed = design.cases_with_repeats
    if needed is not None and needed <= plan.available_cases:
        lines.append(f"the {plan.available_cases} available cases can detect a {plan.detect:.2f} difference in {what} "
                     f"(paired, {trials} per case: {needed} cases needed)")
    elif design.smallest_detectable is not None:
        lines.append(f"the {plan.available_cases} available cases can detect a {design.smallest_detectable:.2f} "
                     f"difference in {what}, not {plan.detect:.2f} (paired, {trials} per case; "
                     f"{needed if needed is not None else 'no number of'} cases needed for {plan.detect:.2f})")
    else:
        lines.append(f"the {plan.available_cases} available cases cannot detect any difference in {what} "
                     f"with {plan.power:.0%} power (paired, {trials} per case)")
    one, many = design.cases_one_repeat, design.cases_with_repeats
    if plan.repeats > 1 and one is not None and many is not None:
        if plan.icc >= 0.9:
            lines.append(f"repeats do not help (ICC {plan.icc:.2f}): {plan.repeats} trials per case need {many} cases, "
                         f"one trial needs {one}; add cases, not repeats")
        else:
            lines.append(f"{plan.repeats} trials per case cut the cases needed from {one} to {many} (ICC "
                         f"{plan.icc:.2f}: {plan.repeats} trials count as "
                         f"{plan.repeats / pw.design_effect(plan.repeats, plan.icc):.1f} independent ones)")
    elif plan.icc >= 0.9:
        lines.append(f"repeats would not help (ICC {plan.icc:.2f}): add cases, not repeats")
    return lines
