"""Runs that stop when their gate is decided (``--until decided``): the rule built from a gate's thresholds, the
gate's checks read from the sequences, and the report pieces (a markdown section, an SVG plot of each sequence
over the cases beside the final fixed-n interval). The statistics: :mod:`knowgap.stats.sequential`; the engine's
part: :mod:`knowgap.engine.stopping`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from knowgap.engine.records import Manifest, MetricValue
from knowgap.engine.stopping_rule import ComparedMetric, GatedMetric, MetricSequence, StoppingRule
from knowgap.errors import KnowgapError, first_validation_error
from knowgap.report.gate import Threshold, load_gate_file, parse_thresholds
from knowgap.report.svg import esc

ThresholdsArg = str | Path | Sequence[str | dict[str, Any] | Threshold]


def read_thresholds(thresholds: ThresholdsArg) -> list[Threshold]:
    """Thresholds from a file (``--thresholds gate.yaml``) or given as strings, dicts or Threshold objects."""
    if isinstance(thresholds, str | Path):
        return load_gate_file(thresholds).thresholds
    return parse_thresholds(list(thresholds))


def gated(thresholds: Sequence[Threshold], label: str, suite: str) -> list[GatedMetric]:
    """The thresholds of a run labelled ``label`` of suite ``suite`` (those naming another suite or eval entry are
    left out), as the rule decides them. A bound of the interval (``use: ci_low``) asks about cases beyond the
    set, which no sequence over the set decides: refused."""
    out = []
    for t in thresholds:
        if t.suite is not None and t.suite not in (label, suite):
            continue
        if t.use != "value":
            raise KnowgapError(f"threshold '{t.describe()}': --until decides the value the whole set of cases would "
                               f"give, not a bound of its interval (use: {t.use}); write the threshold on the value "
                               "(the sequence holds it at the level --alpha), or run every case")
        out.append(GatedMetric(metric=t.metric, group=t.group, op=t.op, value=t.value, text=t.describe()))
    return out


def compared(names: Sequence[str], suite: str) -> list[ComparedMetric]:
    """``METRIC`` or ``METRIC[GROUP]`` as compared metrics, each with its direction from the suite's metric specs."""
    from knowgap.engine.metric_spec import spec_of
    from knowgap.suites import get_suite

    specs = get_suite(suite).metric_specs or ()
    out = []
    for name in names:
        metric, _, group = name.partition("[")
        spec = spec_of(specs, metric)
        out.append(ComparedMetric(metric=metric, group=group.rstrip("]") or None,
                                  lower_is_better=bool(spec and spec.lower_is_better)))
    return out


def stopping_rule(until: str | None, thresholds: ThresholdsArg | None, *, suite: str, label: str | None = None,
                  seed: int = 0, alpha: float = 0.05, max_calls: int | None = None,
                  max_cost: float | None = None, against: str | None = None, compare: Sequence[str] = (),
                  margin: float = 0.0) -> StoppingRule | None:
    """The run's stopping rule from the run's options; None when no ``until`` is given (budgets need one)."""
    if until is None and (against is not None or compare):
        raise KnowgapError("--against and --compare stop a run when the difference is decided: give --until decided")
    if until is None:
        if thresholds is not None:
            raise KnowgapError("--thresholds is what --until decided decides: give --until decided too, or gate a "
                               "finished run with knowgap gate RUN --thresholds FILE")
        if max_calls is not None or max_cost is not None:
            raise KnowgapError("--max-calls and --max-cost stop a run whose cases run in a random order: give "
                               "--until decided (with thresholds), --until width=W or --until all")
        return None
    items = gated(read_thresholds(thresholds), label or suite, suite) if thresholds is not None else []
    try:
        return StoppingRule(until=until, thresholds=items, alpha=alpha, order_seed=seed, max_calls=max_calls,
                            max_cost=max_cost, against=against, compare=compared(compare, suite), margin=margin)
    except ValidationError as exc:
        field, message = first_validation_error(exc)
        raise KnowgapError(f"bad --{field.replace('_', '-')}: {message}") from None


# report pieces ------------------------------------------------------------------------------------------
def _fmt(v: float | None) -> str:
    return "-" if v is None else "∞" if math.isinf(v) else f"{v:.3g}"


def sequential_markdown(manifest: Manifest, metrics: Sequence[MetricValue]) -> list[str]:
    """The rule, where the run stopped and why, and per sequence its decision, interval and the fixed-n interval
    of the trials that ran."""
    record = manifest.sequential
    if record is None:
        return []
    fixed = {(m.name, m.group): m for m in metrics}
    lines = ["## Stopping rule", "", record.says(), "",
             "| metric | group | threshold | decision | sequence (anytime-valid) | value | fixed-n 95% CI | cases |",
             "|---|---|---|---|---|---:|---|---:|"]
    for s in record.sequences:
        m = fixed.get((s.metric, s.group))
        ci = f"[{_fmt(m.ci_low)}, {_fmt(m.ci_high)}]" if m is not None and m.ci_low is not None else "-"
        seq = f"[{_fmt(s.low)}, {_fmt(s.high)}]" if s.low is not None else f"not sequential: {s.why}"
        lines.append(f"| {s.metric} | {s.group} | {s.threshold or '-'} | {s.decision} | {seq} | {_fmt(s.estimate)} "
                     f"| {ci} | {s.path[-1].units if s.path else 0} |")
    lines += ["", "The sequence holds the whole set's value at every stop with probability at least "
              f"{1 - record.rule.alpha:g}; the fixed-n interval is that of the trials that ran, read as if their "
              "number had been fixed in advance (docs/statistics.md)."]
    if record.stopped_early:
        lines += ["", f"Continue to every case: `knowgap resume {manifest.run_id} --until all`."]
    return lines


def sequence_chart(s: MetricSequence, total: int, fixed: MetricValue | None, width: int = 520,
                   height: int = 170) -> str:
    """The sequence's interval after each batch (a band), its running value (a line), the threshold (dashed) and,
    at the right, the final fixed-n interval of the trials that ran."""
    left, right, top, bottom = 44, 70, 24, 26
    pw, ph = width - left - right, height - top - bottom
    title = f"{s.metric} [{s.group}]" + (f" · {s.threshold} · {s.decision}" if s.threshold else "")

    def x(units: float) -> float:
        return left + pw * units / max(total, 1)

    lo, hi = (-1.0, 1.0) if s.kind == "difference" else (0.0, 1.0)  # a difference from a baseline: -1 to 1

    def y(v: float) -> float:
        return top + ph * (1 - (min(max(v, lo), hi) - lo) / (hi - lo))

    parts = [f'<svg class="chart sequence-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{esc(title)}">',
             f"<title>{esc(title)}</title>",
             f'<text x="4" y="15" font-weight="bold" font-size="12">{esc(title)}</text>',
             f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#bbb"/>']
    for v in (lo, (lo + hi) / 2, hi):
        parts.append(f'<text x="{left - 4}" y="{y(v) + 4:.1f}" font-size="10" text-anchor="end">{v:g}</text>')
    parts.append(f'<text x="{left}" y="{height - 6}" font-size="10">cases run (of {total})</text>')
    points = [p for p in s.path if math.isfinite(p.high)]
    if points:
        upper = " ".join(f"{x(p.units):.1f},{y(p.high):.1f}" for p in points)
        lower = " ".join(f"{x(p.units):.1f},{y(p.low):.1f}" for p in reversed(points))
        parts.append(f'<polygon class="band" points="{upper} {lower}" fill="#4c78a8" fill-opacity="0.25" '
                     'stroke="#4c78a8"/>')
        line = " ".join(f"{x(p.units):.1f},{y(p.estimate):.1f}" for p in points if p.estimate is not None)
        if line:
            parts.append(f'<polyline class="estimate" points="{line}" fill="none" stroke="#222"/>')
    if s.kind == "difference":
        parts.append(f'<line class="threshold" x1="{left}" x2="{left + pw}" y1="{y(0.0):.1f}" y2="{y(0.0):.1f}" '
                     'stroke="#c0392b" stroke-dasharray="4,3"/>')
    elif s.threshold is not None:
        try:
            level = float(s.threshold.rsplit(" ", 1)[1])
        except (IndexError, ValueError):
            level = None
        if level is not None and 0 <= level <= 1:
            parts.append(f'<line class="threshold" x1="{left}" x2="{left + pw}" y1="{y(level):.1f}" '
                         f'y2="{y(level):.1f}" stroke="#c0392b" stroke-dasharray="4,3"/>')
    if fixed is not None and fixed.ci_low is not None and fixed.ci_high is not None:
        fx = left + pw + 24
        parts.append(f'<g class="fixed-n" stroke="#e67e22" stroke-width="2"><line x1="{fx}" x2="{fx}" '
                     f'y1="{y(fixed.ci_low):.1f}" y2="{y(fixed.ci_high):.1f}"/><title>fixed-n 95% CI of the trials '
                     f'that ran: [{fixed.ci_low:.3g}, {fixed.ci_high:.3g}]</title></g>')
        parts.append(f'<text x="{fx + 4}" y="{top + ph + 14}" font-size="9" text-anchor="middle">fixed n</text>')
    parts.append("</svg>")
    return "".join(parts)


def sequential_html(manifest: Manifest, metrics: Sequence[MetricValue]) -> str:
    """The stopping rule's section of a run's HTML report: where it stopped and why, and one plot per sequence."""
    record = manifest.sequential
    if record is None:
        return ""
    fixed = {(m.name, m.group): m for m in metrics}
    charts = "".join(sequence_chart(s, record.units_total,
                                    None if s.kind == "difference" else fixed.get((s.metric, s.group)))
                     for s in record.sequences if s.kind != "count")
    rows = "".join(f"<tr><td>{esc(s.metric)}</td><td>{esc(s.group)}</td><td>{esc(s.threshold or '-')}</td>"
                   f"<td>{esc(s.decision)}</td><td>{esc(_fmt(s.low))} – {esc(_fmt(s.high))}</td>"
                   f"<td>{esc(s.why)}</td></tr>" for s in record.sequences)
    more = (f"<p>Continue to every case: <code>knowgap resume {esc(manifest.run_id)} --until all</code></p>"
            if record.stopped_early else "")
    return (f'<section class="stopping"><h3>Stopping rule</h3><p>{esc(record.says())}</p>'
            "<table><tr><th>metric</th><th>group</th><th>threshold</th><th>decision</th><th>sequence</th>"
            f"<th>not sequential because</th></tr>{rows}</table>{more}<div class=\"charts\">{charts}</div></section>")
