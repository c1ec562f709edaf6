"""The decision a report opens on: per run, its suite's headline metrics (declared ``headline`` in the suite's
:class:`~knowgap.engine.metric_spec.MetricSpec`, never a list here) per configuration, each with its value, 95%
interval and n, the gate's verdict on it where a gate was given (or the run's own ``--until decided`` sequences),
the judge's validity badge, and, for a run compared with a baseline, the change and whether it is significant.

Also what the details below it fold away: the rows that are housekeeping and all zero (a lower-is-better metric
no judge decides, not headline, 0 in every group: ``errors``, the parse-failure counts...) and the per-group breakdowns
(a group ``CONFIG · kb=...``, a name ``flip_rate:family=...``), shown collapsed.

Every report (report.html, the markdown summary, report.md, the web app) builds its scorecard here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, Field

from knowgap.engine.metric_spec import MetricSpec, spec_of
from knowgap.engine.metric_spec import headline as headline_names
from knowgap.engine.outcome import status_text
from knowgap.engine.records import Manifest, MetricValue
from knowgap.errors import KnowgapError
from knowgap.report.compare import Comparison, MetricChange
from knowgap.report.data import RunData
from knowgap.report.gate import GateResult
from knowgap.report.judging import Judgements

BREAKDOWN = " · "
"""What separates a configuration from a breakdown in a metric's group (``rag/basic · kb=BTT``)."""


def suite_specs(suite: str, run: RunData | None = None) -> tuple[MetricSpec, ...] | None:
    """The suite's metric specs (the run's suite object when loaded, else the installed class); None when the
    suite is not installed here or declares none."""
    if run is not None and run.suite is not None:
        return run.suite.metric_specs
    from knowgap.suites import get_suite

    try:
        return get_suite(suite).metric_specs
    except KnowgapError:
        return None


def is_breakdown(m: MetricValue) -> bool:
    """A per-group breakdown: a group below a configuration (``CONFIG · lang=zh``) or a name's (``NAME:KEY=V``)."""
    return BREAKDOWN in m.group or ":" in m.name


LANGUAGE = re.compile(r"^[a-z]{2,3}(?:-[A-Za-z0-9]+)?$")


def breakdown_by(m: MetricValue) -> str:
    """What a breakdown row breaks its metric down by: the key of ``CONFIG · kb=BTT`` (``kb``), ``language`` for
    ``CONFIG · zh``, the key of ``flip_rate:position=end`` (``position``), or the base name of a count per category
    (``judge_outcome:scored``: ``judge_outcome``); empty for a row that is none."""
    if BREAKDOWN in m.group:
        part = m.group.split(BREAKDOWN, 1)[1]
        return part.split("=", 1)[0] if "=" in part else "language" if LANGUAGE.match(part) else part
    if ":" in m.name:
        base, part = m.name.split(":", 1)
        return part.split("=", 1)[0] if "=" in part else base
    return ""


def by(metrics: Sequence[MetricValue]) -> list[str]:
    """What ``metrics`` (breakdown rows) break down by, sorted: ``['kb', 'language']``."""
    return sorted({breakdown_by(m) for m in metrics} - {""})


def folded_zero(metrics: Sequence[MetricValue], specs: Sequence[MetricSpec] | None) -> list[str]:
    """The names of housekeeping rows that are all zero: metrics whose spec says lower is better, no judge (an exact
    count or rule) and not headline, with the value 0 in every group of the run (errors, parse failures, cut
    answers...). A judged rate at 0 (over-abstention) keeps its row and interval. None without specs."""
    if not specs:
        return []
    values: dict[str, list[float | None]] = {}
    for m in metrics:
        values.setdefault(m.name, []).append(m.value)
    out = []
    for name, seen in values.items():
        spec = spec_of(specs, name)
        if (spec is not None and spec.lower_is_better and not spec.headline and not spec.judges()
                and all(v == 0 for v in seen)):
            out.append(name)
    return out


class GateMark(BaseModel):
    """A threshold's verdict on one headline number."""

    passed: bool | None
    """None: the run's sequence left it undecided."""
    threshold: str
    message: str


class ChangeMark(BaseModel):
    """The number against the baseline run's: B - A with its 95% interval and significance."""

    baseline: str
    a: float | None
    a_ci_low: float | None = None
    a_ci_high: float | None = None
    a_n: str = ""
    delta: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    significant: bool | None = None
    better: bool | None = None
    """Whether B is better than A by the metric's direction (None: no change, or unknown)."""
    text: str = ""
    """``-12.5 pp [-20.1, -4.9]``."""


class Cell(BaseModel):
    """One headline metric in one configuration."""

    group: str
    kind: str
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: str = ""
    """``n`` or ``n cases / n trials`` (:meth:`MetricValue.n_text`)."""
    value_text: str = ""
    ci_text: str = ""
    gate: list[GateMark] = Field(default_factory=list)
    change: ChangeMark | None = None

    @property
    def gate_passed(self) -> bool | None:
        """False when a threshold failed, None when none applies or one is undecided, else True."""
        if not self.gate:
            return None
        if any(g.passed is False for g in self.gate):
            return False
        return None if any(g.passed is None for g in self.gate) else True


class HeadlineRow(BaseModel):
    metric: str
    description: str = ""
    lower_is_better: bool = False
    judge_status: str = "unknown"
    """reportable, screen, computed or unknown (:class:`knowgap.report.judging.MetricJudgement`)."""
    judge_badge: str = ""
    judge: str = ""
    """The judge, its version and its card's balanced accuracy; empty for a computed metric."""
    judge_reason: str = ""
    cells: list[Cell | None] = Field(default_factory=list)
    """One per configuration of the card (None: the metric has no value there)."""


class RunCard(BaseModel):
    run_id: str
    suite: str
    target: str
    status: str
    status_text: str
    trials_ok: int
    trials_error: int
    trials_total: int
    groups: list[str] = Field(default_factory=list)
    """The configurations (columns), in the run's order."""
    rows: list[HeadlineRow] = Field(default_factory=list)
    baseline: str | None = None
    """The run this one is compared with."""
    note: str = ""
    """Why the card has no rows (suite not installed, no headline metric in the run)."""


class GateSummary(BaseModel):
    passed: bool
    checks: int
    failed: list[str] = Field(default_factory=list)
    """One line per failed check: threshold, run, group, actual."""


class Scorecard(BaseModel):
    cards: list[RunCard]
    gate: GateSummary | None = None

    def marks(self) -> list[GateMark]:
        return [g for card in self.cards for row in card.rows for cell in row.cells if cell for g in cell.gate]


def _signed(x: float | None, kind: str) -> str:
    if x is None:
        return "n/a"
    return f"{x * 100:+.1f} pp" if kind == "proportion" else f"{x:+.3g}"


def change_mark(ch: MetricChange, baseline: str, lower_is_better: bool, a: MetricValue | None = None) -> ChangeMark:
    """``ch`` (B - A) as the scorecard shows it; ``a``: the baseline's metric (its interval and n)."""
    low, high = (_signed(x, ch.kind).removesuffix(" pp") for x in (ch.ci_low, ch.ci_high))
    ci = f" [{low}, {high}]" if ch.ci_low is not None and ch.ci_high is not None else ""
    better = None if not ch.delta else (ch.delta < 0) == lower_is_better
    return ChangeMark(baseline=baseline, a=ch.a, a_ci_low=a.ci_low if a else None, a_ci_high=a.ci_high if a else None,
                      a_n=a.n_text() if a else "", delta=ch.delta, ci_low=ch.ci_low, ci_high=ch.ci_high,
                      p_value=ch.p_value, significant=ch.significant, better=better,
                      text=_signed(ch.delta, ch.kind) + ci)


def _texts(m: MetricValue) -> tuple[str, str]:
    """(value, 95% CI) as the scorecard shows them: a proportion as ``41.9%`` and ``[26.4, 59.2]`` (in percent)."""
    if m.value is None:
        return "n/a", ""
    value = f"{m.value:.1%}" if m.kind == "proportion" else f"{m.value:.0f}" if m.kind == "count" else f"{m.value:.3f}"
    if m.ci_low is None or m.ci_high is None or m.kind == "count":
        return value, ""
    if m.kind == "proportion":
        return value, f"[{m.ci_low * 100:.1f}, {m.ci_high * 100:.1f}]"
    return value, f"[{m.ci_low:.3f}, {m.ci_high:.3f}]"


def _gate_marks(run: RunData, gate: GateResult | None) -> dict[tuple[str, str], list[GateMark]]:
    """(group, metric) -> the verdicts of the gate's checks on this run; without a gate, the run's own
    ``--until decided`` sequences' decisions."""
    marks: dict[tuple[str, str], list[GateMark]] = {}
    if gate is not None:
        for c in gate.checks:
            if c.run_id == run.run_id:
                marks.setdefault((c.group, c.metric), []).append(
                    GateMark(passed=c.passed, threshold=c.threshold, message=c.message))
        return marks
    record = run.manifest.sequential
    for s in record.sequences if record is not None else []:
        if s.threshold and s.kind != "difference":
            passed = {"pass": True, "fail": False}.get(s.decision)
            marks.setdefault((s.group, s.metric), []).append(
                GateMark(passed=passed, threshold=s.threshold, message=f"--until decided: {s.decision}"))
    return marks


def run_card(run: RunData, *, gate: GateResult | None = None, comparison: Comparison | None = None,
             baseline: RunData | None = None) -> RunCard:
    """The scorecard of one run (against ``comparison``'s baseline when this run is its B; ``baseline``: that run,
    for its intervals)."""
    m: Manifest = run.manifest
    card = RunCard(run_id=m.run_id, suite=m.config.suite, target=run.target, status=m.status,
                   status_text=status_text(m), trials_ok=m.trials_ok, trials_error=m.trials_error,
                   trials_total=m.trials_total)
    specs = suite_specs(m.config.suite, run)
    if specs is None:
        card.note = (f"suite '{m.config.suite}' is not installed here (or declares no metric specs): its headline "
                     "metrics are unknown; see every metric below")
        return card
    names = headline_names(specs)
    rows = [x for x in run.metrics if x.name in names and BREAKDOWN not in x.group]
    if not rows:
        card.note = ("no headline metric in this run" + (f" (the suite's: {', '.join(names)})" if names else
                                                          " (the suite declares none)"))
        return card
    card.groups = list(dict.fromkeys(x.group for x in rows))
    marks = _gate_marks(run, gate)
    changes = ({(c.group, c.name): c for c in comparison.changes}
               if comparison is not None and comparison.run_b == run.run_id else {})
    if comparison is not None and comparison.run_b == run.run_id:
        card.baseline = comparison.run_a
    judged = Judgements.for_run(m)
    base = {(x.group, x.name): x for x in baseline.metrics} if baseline is not None else {}
    by_key = {(x.group, x.name): x for x in rows}
    for name in (n for n in names if any(x.name == n for x in rows)):
        spec = spec_of(specs, name)
        lower = bool(spec and spec.lower_is_better)
        first = next(x for x in rows if x.name == name)
        j = judged.of(first)
        row = HeadlineRow(metric=name, description=first.description or (spec.description if spec else ""),
                          lower_is_better=lower, judge_status=j.status, judge_badge=j.badge,
                          judge=" · ".join(p for p in (j.judge_label, j.accuracy) if p), judge_reason=j.reason)
        for group in card.groups:
            x = by_key.get((group, name))
            if x is None:
                row.cells.append(None)
                continue
            value, ci = _texts(x)
            ch = changes.get((group, name))
            row.cells.append(Cell(group=group, kind=x.kind, value=x.value, ci_low=x.ci_low, ci_high=x.ci_high,
                                  n=x.n_text(), value_text=value, ci_text=ci, gate=marks.get((group, name), []),
                                  change=change_mark(ch, comparison.run_a, lower, base.get((group, name)))
                                  if ch and comparison else None))
        card.rows.append(row)
    return card


def gate_summary(gate: GateResult) -> GateSummary:
    several = len({c.run_id for c in gate.checks}) > 1
    failed = [f"{c.threshold}" + (f" [{c.group}]" if c.group and f"[{c.group}]" not in c.threshold else "")
              + (f" ({c.suite} {c.run_id})" if several else "")
              + (f": actual {c.actual:.4g}" if c.actual is not None else f": {c.message}") for c in gate.failures]
    return GateSummary(passed=gate.passed, checks=len(gate.checks), failed=failed)


def scorecard(runs: Sequence[RunData], *, gate: GateResult | None = None,
              comparison: Comparison | None = None) -> Scorecard:
    """The scorecard of ``runs``; with a comparison, the baseline (its A) is left out: its numbers are the B card's
    changes."""
    baseline = next((r for r in runs if comparison is not None and r.run_id == comparison.run_a), None)
    shown = [r for r in runs if r is not baseline or comparison is None or comparison.run_a == comparison.run_b]
    card = Scorecard(cards=[run_card(r, gate=gate, comparison=comparison, baseline=baseline) for r in shown])
    card.gate = gate_summary(gate) if gate is not None else _sequences_summary(shown)
    return card


def _sequences_summary(runs: Sequence[RunData]) -> GateSummary | None:
    """Without a gate, the verdict of the runs' own ``--until decided`` thresholds (None when they have none):
    passed when the sequences decided every one of them pass."""
    decided = [(r, s) for r in runs for s in (r.manifest.sequential.sequences if r.manifest.sequential else [])
               if s.threshold and s.kind != "difference"]
    if not decided:
        return None
    failed = [f"{s.threshold} [{s.group}]: --until decided: {s.decision}" + (f" ({r.run_id})" if len(runs) > 1 else "")
              for r, s in decided if s.decision != "pass"]
    return GateSummary(passed=not failed, checks=len(decided), failed=failed)
