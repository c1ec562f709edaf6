"""Gate a run (or several) on thresholds: exit code 0 or 1 for CI, and JUnit XML.

A thresholds file is YAML::

    thresholds:
      - abstention_unanswerable >= 0.6              # every group of every run that has the metric
      - "accuracy[prompt=grounded] >= 0.5"          # one group
      - errors == 0
      - {metric: over_abstention, group: prompt=grounded, op: "<=", value: 0.25, use: ci_high}
      - {metric: leak_rate, op: "==", value: 0, suite: partial}

``use`` picks what is compared: the metric's ``value`` (default), a bound of its 95% CI
(``ci_low`` / ``ci_high``: e.g. "we are 95% sure abstention is at least 0.6"), or ``corrected``: the rate
corrected for its judge's sensitivity and specificity by the judge's card (Rogan-Gladen; the reports' "corrected"
column), for a proportion of one judge's verdicts.
"""

from __future__ import annotations

import operator
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from knowgap.engine.records import MetricValue
from knowgap.errors import InputError, KnowgapError, did_you_mean
from knowgap.report.data import RunData
from knowgap.yamlfile import load_yaml_model

Op = Literal[">=", "<=", ">", "<", "==", "!="]
OPS: dict[str, Callable[[float, float], bool]] = {">=": operator.ge, "<=": operator.le, ">": operator.gt,
                                                  "<": operator.lt, "==": operator.eq, "!=": operator.ne}
SHORT_FORM = re.compile(r"^\s*(?:(?P<suite>[\w.-]+)\s*:\s+)?(?P<metric>[^\s\[\]<>=!]+)\s*(?:\[(?P<group>[^\]]+)\])?"
                    r"\s*(?P<op>>=|<=|==|!=|>|<|=)\s*(?P<value>\S+)\s*$")


NO_VALUE = re.compile(SHORT_FORM.pattern.replace(r"\s*(?P<value>\S+)\s*$", r"\s*$"))
NO_OP = re.compile(SHORT_FORM.pattern.replace(r"\s*(?P<op>>=|<=|==|!=|>|<|=)\s*(?P<value>\S+)\s*$", r"\s*$"))


def _missing_part(text: str) -> None:
    """Say what a threshold lacks: ``accuracy >=`` has no value, ``accuracy`` no comparison."""
    stripped = text.strip()
    if NO_VALUE.match(stripped):
        raise ValueError(f"threshold {stripped!r} has no value: expected e.g. {stripped} 0.6")
    if stripped and NO_OP.match(stripped):
        raise ValueError(f"threshold {stripped!r} has no comparison: expected e.g. {stripped} >= 0.6")


class Threshold(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metric: str
    op: Op
    value: float
    group: str | None = Field(None, description="Only this group (configuration); default: every group.")
    suite: str | None = Field(None, description="Only runs of this suite (or this evaluation entry's name).")
    use: Literal["value", "ci_low", "ci_high", "corrected"] = "value"

    @field_validator("op", mode="before")
    @classmethod
    def _equals(cls, v: Any) -> Any:
        return "==" if v == "=" else v

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, v: Any) -> Any:
        """``[SUITE: ]METRIC[[GROUP]] OP VALUE``, e.g. ``accuracy[prompt=grounded] >= 0.5``."""
        if not isinstance(v, str):
            return v
        _missing_part(v)
        match = SHORT_FORM.match(v)
        if not match:
            raise ValueError(f"cannot read threshold {v!r}: expected 'METRIC OP VALUE' or "
                             "'METRIC[GROUP] OP VALUE' with OP one of >= <= > < == !=")
        try:
            value = float(match["value"])
        except ValueError:
            raise ValueError(f"threshold {v!r}: {match['value']!r} is not a number") from None
        return {"metric": match["metric"], "group": match["group"], "op": match["op"], "value": value,
                "suite": match["suite"]}

    @classmethod
    def parse(cls, text: str) -> Threshold:
        return cls.model_validate(text)

    def describe(self) -> str:
        scope = f"{self.suite}: " if self.suite else ""
        group = f"[{self.group}]" if self.group else ""
        bound = f" ({self.use})" if self.use != "value" else ""
        return f"{scope}{self.metric}{group}{bound} {self.op} {self.value:g}"


class ThresholdsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    thresholds: list[Threshold]
    allow_empty: bool = Field(False, description="Let a gate with no thresholds pass (by default it fails: an "
                                                 "empty gate checks nothing).")


EMPTY_GATE = ("no thresholds: an empty gate checks nothing; list thresholds, or set allow_empty: true to let a "
              "gate without any pass")


class Check(BaseModel):
    threshold: str
    run_id: str
    suite: str
    group: str
    metric: str
    actual: float | None
    passed: bool
    message: str


class GateResult(BaseModel):
    checks: list[Check]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]


def load_thresholds(path: str | Path) -> list[Threshold]:
    return load_gate_file(path).thresholds


def load_gate_file(path: str | Path) -> ThresholdsFile:
    """A thresholds file: ``thresholds: [...]`` (and ``allow_empty``), or a bare list of thresholds."""
    return load_yaml_model(path, ThresholdsFile, what="thresholds file",
                           prepare=lambda data: {"thresholds": data} if isinstance(data, list) else data)


def parse_thresholds(items: Sequence[str | dict[str, Any] | Threshold]) -> list[Threshold]:
    out = []
    for index, item in enumerate(items):
        try:
            out.append(item if isinstance(item, Threshold) else Threshold.model_validate(item))
        except ValidationError as exc:
            raise InputError.from_validation(f"thresholds[{index}]", exc) from None
    return out


def _runs_in_scope(t: Threshold, runs: Sequence[tuple[str, RunData]]) -> list[tuple[str, RunData]]:
    if t.suite is None:
        return list(runs)
    return [(label, r) for label, r in runs if t.suite in (label, r.manifest.config.suite)]


def _corrected(run: RunData, m: MetricValue, judged: dict[str, Any]) -> float | None:
    """The metric's rate corrected by its judge's card (None: no card corrects it), as the reports show it
    (``judged``: each run's :class:`~knowgap.report.judging.Judgements`, made once)."""
    from knowgap.report.judging import Judgements

    if run.run_id not in judged:
        judged[run.run_id] = Judgements.for_run(run.manifest)
    found = judged[run.run_id].of(m).corrected
    return None if found is None else found.value


def _check(t: Threshold, label: str, run: RunData, m: MetricValue, judged: dict[str, Any]) -> Check:
    actual = _corrected(run, m, judged) if t.use == "corrected" else getattr(m, t.use)
    if actual is None and t.use == "corrected":
        passed, message = False, (f"{m.name}[{m.group}] has no corrected rate: no card of its judge corrects it "
                                  "(a proportion of one judge's verdicts, a card with confusion counts covering the "
                                  "run's languages)")
    elif actual is None:
        passed, message = False, f"{m.name}[{m.group}] has no {t.use} (n={m.n}): no data to gate on"
    else:
        passed = OPS[t.op](float(actual), t.value)
        message = f"{m.name}[{m.group}] {t.use}={actual:.4g} {'satisfies' if passed else 'violates'} " \
                  f"{t.op} {t.value:g}"
    if run.manifest.sequential is not None:  # stopped by --until before every case ran: its sequence decides
        from knowgap.report.sequence_check import sequential_check
        read = sequential_check(t.op, t.value, t.use, run.manifest.sequential, m)
        if read is not None:
            passed, message = read
    return Check(threshold=t.describe(), run_id=run.run_id, suite=label, group=m.group, metric=m.name,
                 actual=actual, passed=passed, message=message)


def _needs(metric: str, runs: Sequence[tuple[str, RunData]]) -> str:
    """Why runs whose suite declares ``metric`` lack it: the option their suite says it needs (``metric_needs``)."""
    said = []
    for _, r in runs:
        try:
            need = r.suite.metric_needs(metric) if r.suite is not None else None
        except (KnowgapError, OSError):  # the run's dataset is not here: nothing to say
            need = None
        if need:
            said.append(f"run {r.run_id}'s suite produces it only with {need}")
    return f": {'; '.join(dict.fromkeys(said))}" if said else ""


def evaluate_gate(runs: Sequence[RunData] | Sequence[tuple[str, RunData]], thresholds: Sequence[Threshold],
                  *, source: str = "thresholds", allow_empty: bool = False) -> GateResult:
    """Check every threshold against the runs' metrics. An unknown metric or group is an InputError naming
    the threshold (and listing what exists), so a typo never passes silently. No thresholds is a failed
    gate (one failing check saying so) unless ``allow_empty``."""
    labelled = [r if isinstance(r, tuple) else (r.manifest.config.suite, r) for r in runs]
    if not thresholds and not allow_empty:
        ids = ", ".join(r.run_id for _, r in labelled) or "-"
        return GateResult(checks=[Check(threshold="(none)", run_id=ids, suite=source, group="", metric="",
                                        actual=None, passed=False, message=EMPTY_GATE)])
    checks = []
    judged: dict[str, Any] = {}
    for index, t in enumerate(thresholds):
        scoped = _runs_in_scope(t, labelled)
        where = f"thresholds[{index}]"
        if not scoped:
            known = sorted({label for label, _ in labelled} | {r.manifest.config.suite for _, r in labelled})
            raise InputError(source, f"no run of suite '{t.suite}' (runs: {', '.join(known)})",
                             field=f"{where}.suite")
        matched = [(label, r, m) for label, r in scoped for m in r.metrics if m.name == t.metric]
        if not matched:
            names = sorted({m.name for _, r in scoped for m in r.metrics})
            raise InputError(source, f"threshold '{t.describe()}': unknown metric '{t.metric}'"
                                     f"{did_you_mean(t.metric, names)}{_needs(t.metric, scoped)} "
                                     f"(metrics: {', '.join(names) or 'none'})", field=f"{where}.metric")
        if t.group is not None:
            in_group = [x for x in matched if x[2].group == t.group]
            if not in_group:
                groups = sorted({m.group for _, _, m in matched})
                raise InputError(source, f"threshold '{t.describe()}': metric '{t.metric}' has no group "
                                         f"'{t.group}'{did_you_mean(t.group, groups)} (groups: {', '.join(groups)})",
                                 field=f"{where}.group")
            matched = in_group
        checks += [_check(t, label, r, m, judged) for label, r, m in matched]
    return GateResult(checks=checks)


def junit_xml(result: GateResult, *, name: str = "knowgap gate") -> str:
    suite = ET.Element("testsuite", name=name, tests=str(len(result.checks)),
                       failures=str(len(result.failures)), errors="0", skipped="0")
    for c in result.checks:
        case = ET.SubElement(suite, "testcase", classname=f"knowgap.{c.suite}.{c.run_id}",
                             name=f"{c.threshold} :: {c.group}")
        if not c.passed:
            failure = ET.SubElement(case, "failure", message=c.message, type="threshold")
            failure.text = c.message
        else:
            out = ET.SubElement(case, "system-out")
            out.text = c.message
    root = ET.Element("testsuites", name=name, tests=suite.get("tests", "0"), failures=suite.get("failures", "0"))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(result: GateResult, out: Path, *, name: str = "knowgap gate") -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(junit_xml(result, name=name), encoding="utf-8")
    return out
