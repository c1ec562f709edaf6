"""Metrics of the ``partial`` suite, per configuration, per family and per restriction dimension (the
:func:`splits`), with 95% CIs clustered by task (:func:`cluster_key`; :mod:`knowgap.stats`): the rates counted from
the trials' verdicts (:mod:`.verdicts`), the injection driver's too, the rest made by the reducers of their specs
(:mod:`.specs`); and the seed's sufficiency pre-test (per family: full-view accuracy, and the
drop to the authorized view, which should fall in a band: 15-35 points by default, the seed's 95% -> 60-80%), which
compares two views across configurations. One pass over the records."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel

from knowgap.engine.case_tags import Tags, tag_value, tag_values, tags_of
from knowgap.engine.records import MetricValue, TagValue, TrialRecord
from knowgap.engine.verdict_tally import Split, Verdicts, count_metrics, stored_or
from knowgap.suites.partial import specs
from knowgap.suites.partial.prompts import DEFAULT_PROMPT
from knowgap.suites.partial.verdicts import partial_verdicts


class PretestRule(BaseModel):
    """When a family's scenarios are well calibrated: the model decides well with the full view
    (``min_full_accuracy``) and loses ``low``..``high`` points of accuracy with the authorized view."""

    low: float = 15.0
    high: float = 35.0
    min_full_accuracy: float = 0.8

    def criteria(self) -> str:
        return (f"full-view accuracy >= {100 * self.min_full_accuracy:g}% and a drop of {self.low:g}-{self.high:g} "
                f"points")


PRETEST = tuple(spec.name for spec in specs.PRETEST)


def case_tags(case: Any) -> dict[str, TagValue]:
    """What the groups and intervals read of a case, stored in each of its trials' records
    (:meth:`PartialSuite.case_tags`): its role's restriction dimensions and its task's, its scenario family and its
    cluster (its task: the roles of one task share the scenario's data and the question; a scenario's 3-4 tasks
    ask different questions; scenarios as clusters would leave 6 per family group: too few to estimate a variance
    from)."""
    scenario, task = getattr(case, "scenario_id", None), getattr(case, "task_id", None)
    return {"dimensions": list(case.dimensions), "task_dimensions": list(case.task_dimensions),
            "family": case.family} | ({"cluster": f"task:{scenario}/{task}"}
                                      if scenario is not None and task is not None else {})


def trial_tags(record: TrialRecord, cases: Mapping[str, Any]) -> Tags:
    """``record``'s case tags: as its trial stored them, else (a trial stored before knowgap kept them) those of its
    case in ``cases``, today's dataset ({} for a case it lacks)."""
    return tags_of(record, lambda case_id: None if (case := cases.get(case_id)) is None else case_tags(case))


def cluster_key(record: TrialRecord, cases: Mapping[str, Any]) -> str:
    """The cluster of a trial in every interval: its case's ``cluster`` tag (:func:`case_tags`: its task), or its
    own case when the case is unknown."""
    return tag_value(trial_tags(record, cases), "cluster") or f"case:{record.case_id}"


def splits(cases: Mapping[str, Any]) -> list[Split]:
    """The groups besides each configuration: by restriction dimension (``· dim=``: the task's for the full view,
    the role's otherwise; cost only in budget mode, where it removes evidence) and by scenario family
    (``· family=``); a trial of an unknown case is in neither."""

    def dimensions(record: TrialRecord) -> list[str]:
        view = record.config.get("view")
        return [d for d in tag_values(trial_tags(record, cases), "task_dimensions" if view == "full" else "dimensions")
                if d != "cost" or view == "budget"]

    def family(record: TrialRecord) -> list[str]:
        return tag_values(trial_tags(record, cases), "family")

    return [Split(lambda config, dim: f"{config} · dim={dim}", dimensions, tags=("dimensions", "task_dimensions")),
            Split(lambda config, name: f"{config} · family={name}", family, tags=("family",))]


class _Pretest:
    """The pre-test's decisions, full view and authorized view apart, per prompt, defence and family."""

    def __init__(self, cases: Mapping[str, Any]) -> None:
        self.cases = cases
        self.full: dict[str, list[tuple[bool, str]]] = defaultdict(list)
        self.authorized: dict[str, list[tuple[bool, str]]] = defaultdict(list)

    def add(self, r: TrialRecord) -> None:
        family = tag_value(trial_tags(r, self.cases), "family")
        if family is None or r.status != "ok" or not r.scores.get("decision"):
            return
        target = self.full if r.config.get("view") == "full" else self.authorized
        prompt = r.config.get("prompt", DEFAULT_PROMPT)
        head = "pretest" if prompt == DEFAULT_PROMPT else f"pretest · prompt={prompt}"
        if r.config.get("defence", "none") != "none":  # a defence's views pair with each other
            head += f" · defence={r.config['defence']}"
        key = cluster_key(r, self.cases)
        target[f"{head} · family={family}"].append((bool(r.scores.get("correct_full")), key))

    def metrics(self, rule: PretestRule) -> list[MetricValue]:
        return [m for group in sorted(set(self.full) & set(self.authorized))
                for m in _pretest(group, self.full[group], self.authorized[group], rule)]


def compute(records: Iterable[TrialRecord], cases: Mapping[str, Any], pretest: PretestRule | None = None,
            verdicts: Verdicts | None = None) -> list[MetricValue]:
    """Every metric of the run's ``records`` (read once, as a stream), the injection driver's too (in every group);
    ``verdicts``: the suite's (default: stored, else :func:`.verdicts.partial_verdicts`)."""
    pre = _Pretest(cases)

    def read() -> Iterator[TrialRecord]:
        for record in records:
            pre.add(record)
            yield record

    counted = count_metrics(read(), (*specs.TRIALS, *specs.INJECTION), verdicts=verdicts or stored_or(partial_verdicts),
                            cluster=lambda r: cluster_key(r, cases), splits=splits(cases), always=specs.REPORTED_EMPTY)
    return counted + pre.metrics(pretest or PretestRule())


def _flag(name: str, group: str, on: bool, description: str) -> MetricValue:
    return MetricValue(name=name, group=group, value=float(on), n=1, kind="count", description=description)


def _pretest(group: str, full_keyed: list[tuple[bool, str]], authorized_keyed: list[tuple[bool, str]],
             rule: PretestRule) -> list[MetricValue]:
    """The seed's sufficiency pre-test of one family: full-view accuracy, the drop to the authorized view, and
    whether the family is well calibrated (the full view decides well and the drop is inside the band)."""
    full = [ok for ok, _ in full_keyed]
    authorized = [ok for ok, _ in authorized_keyed]
    full_accuracy = sum(full) / len(full)
    drop = 100 * (full_accuracy - sum(authorized) / len(authorized))
    below, above = drop < rule.low, drop > rule.high
    weak = full_accuracy < rule.min_full_accuracy
    return [
        MetricValue.proportion_of("full_view_accuracy", group, full, [k for _, k in full_keyed],
                                  "full-view decisions equal to the full-data answer"),
        MetricValue(name="accuracy_drop_points", group=group, value=drop, n=min(len(full), len(authorized)),
                    kind="mean", description="full-view minus authorized-view accuracy vs the full-data answer, in "
                                             "points"),
        _flag("drop_below_band", group, below, f"1: the drop is below {rule.low:g} points (the authorized view "
                                               "costs too little: too easy)"),
        _flag("drop_above_band", group, above, f"1: the drop is above {rule.high:g} points (too little left to "
                                               "decide on: hopeless)"),
        _flag("full_view_too_weak", group, weak, f"1: full-view accuracy is below {100 * rule.min_full_accuracy:g}%, "
                                                 "so the drop says nothing about the scenarios"),
        _flag("well_calibrated", group, not (below or above or weak), f"1: well calibrated ({rule.criteria()})"),
    ]


VERDICTS = (("full_view_too_weak", "not assessed: the model is not accurate enough with the full view, so the drop "
                                   "says nothing about the scenarios (run a stronger target)"),
            ("drop_below_band", "too easy: the authorized view costs too little accuracy"),
            ("drop_above_band", "too hard: the authorized view leaves too little to decide on"))
"""The pre-test's verdicts in words, the first flag set wins; none set: well calibrated."""


def pretest_words(metrics: list[MetricValue]) -> str | None:
    """The pre-test in words, one line per family (None when the run has no pre-test)."""
    by_group: dict[str, dict[str, MetricValue]] = defaultdict(dict)
    for m in metrics:
        if m.group.startswith("pretest") and m.name in PRETEST:
            by_group[m.group][m.name] = m
    if not by_group:
        return None
    criteria = next((g["well_calibrated"].description.removeprefix("1: ") for g in by_group.values()
                     if "well_calibrated" in g), "")
    lines = [f"Sufficiency pre-test (the seed's check that the authorized view costs accuracy, but not all of it; "
             f"{criteria}):", ""]
    for group, found in sorted(by_group.items()):
        full, drop = found.get("full_view_accuracy"), found.get("accuracy_drop_points")
        if full is None or drop is None or full.value is None or drop.value is None:
            continue
        verdict = next((words for name, words in VERDICTS if name in found and found[name].value), "well calibrated")
        lines.append(f"- {group.removeprefix('pretest · ')}: full-view accuracy {100 * full.value:.1f}% "
                     f"(n={full.n}), drop {drop.value:.1f} points: {verdict}")
    return "\n".join(lines)
