"""Runs that stop when their gate is decided (``--until decided``): the rule built from a gate's thresholds, the
gate's checks read from the sequences, and the report pieces (a markdown section, an SVG plot of each sequence
over the cases beside the final fixed-n interval). The statistics: :mod:`knowgap.stats.sequential`; the engine's
part: :mod:`knowgap.engine.stopping`."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from knowgap.engine.records import Manifest, MetricJudge, MetricValue
from knowgap.engine.stopping_rule import ComparedMetric, GatedMetric, JudgeCorrection, MetricSequence, StoppingRule
from knowgap.engine.suite import Suite
from knowgap.errors import KnowgapError, first_validation_error
from knowgap.report.gate import Threshold, load_gate_file, parse_thresholds
from knowgap.report.svg import esc

log = logging.getLogger("knowgap.run")
ThresholdsArg = str | Path | Sequence[str | dict[str, Any] | Threshold]


def read_thresholds(thresholds: ThresholdsArg) -> list[Threshold]:
    """Thresholds from a file (``--thresholds gate.yaml``) or given as strings, dicts or Threshold objects."""
    if isinstance(thresholds, str | Path):
        return load_gate_file(thresholds).thresholds
    return parse_thresholds(list(thresholds))


def gated(thresholds: Sequence[Threshold], label: str, suite: str) -> list[GatedMetric]:
    """The thresholds of a run labelled ``label`` of suite ``suite`` (those naming another suite or eval entry are
    left out), as the rule decides them. A bound of the interval (``use: ci_low``) asks about cases beyond the
    set, which no sequence over the set decides: refused. One on the judge-corrected rate (``use: corrected``) gets
    its card when the run starts (:func:`judge_corrected`)."""
    out = []
    for t in thresholds:
        if t.suite is not None and t.suite not in (label, suite):
            continue
        if t.use == "corrected":
            out.append(GatedMetric(metric=t.metric, group=t.group, op=t.op, value=t.value, text=t.describe(),
                                   use="corrected"))
            continue
        if t.use != "value":
            raise KnowgapError(f"threshold '{t.describe()}': --until decides the value the whole set of cases would "
                               f"give, not a bound of its interval (use: {t.use}); write the threshold on the value "
                               "(the sequence holds it at the level --alpha), or run every case")
        out.append(GatedMetric(metric=t.metric, group=t.group, op=t.op, value=t.value, text=t.describe()))
    return out


def judge_corrected(rule: StoppingRule, judges: dict[str, MetricJudge], suite: Suite) -> StoppingRule:
    """``rule`` with the card of each threshold on a judge-corrected rate (``use: corrected``): the card the reports
    show beside the metric (:func:`knowgap.judges.cards.find_card` for the judge the run records). Refused before
    any call, naming the card, when none can correct it or no run could decide it (the card's box holds a judge no
    better than chance, or is too wide for the threshold even at an exactly known observed rate)."""
    from knowgap.judges.cards import find_card, no_card_text, uncovered
    from knowgap.report.run_languages import languages_of, metric_languages
    from knowgap.stats.judge_correction import alpha_split, card_box, reachable

    thresholds = []
    for t in rule.thresholds:
        if t.use != "corrected" or t.correction is not None:
            thresholds.append(t)
            continue
        where = f"cannot decide '{t.label}'"
        judge = judges.get(t.metric) or judges.get(t.metric.split(":", 1)[0])
        if judge is None or judge.counts is None:
            raise KnowgapError(f"{where}: {t.metric} is no rate of one judge's verdicts, so no judge's card corrects "
                               "it (use: corrected is for a proportion of a judge's positive or negative verdicts); "
                               "gate its value")
        model = f" on {judge.judge_model}" if judge.judge_model else ""
        card = find_card(judge.judge, judge.version, judge.judge_model)
        if card is None:
            raise KnowgapError(f"{where}: the judge {judge.judge} {judge.version}{model} has no validity card to "
                               "correct by (knowgap judge validate measures one)")
        if card.confusion is None:
            raise KnowgapError(f"{where}: the judge's card {card.key} ({card.dataset}) has no confusion counts to "
                               "correct by")
        try:
            run = languages_of(suite.cases())
        except Exception:  # noqa: BLE001 - cases that do not load now fail the run itself, with their own message
            run = None
        langs = metric_languages(MetricValue(name=t.metric, group=t.group or "", value=None), run)
        if langs and (missing := uncovered(card, langs)):
            raise KnowgapError(f"{where}: the judge's {no_card_text(card, missing)}")
        c = card.confusion
        alpha_card = alpha_split(rule.alpha)[1]
        box = card_box(c.tp, c.fn, c.fp, c.tn, alpha_card)
        point = (c.tp / max(1, c.tp + c.fn), c.tn / max(1, c.tn + c.fp))
        reached = reachable(box, t.op, t.value, judge.counts, point=point)
        if len(reached) == 1:
            log.warning("'%s' can only %s: with the judge's card %s (n=%d) no true rate %s it (docs/statistics.md)",
                        t.label, *reached, card.key, card.n, "fails" if reached == {"pass"} else "passes")
        if not reached:
            se, sp = box.sensitivity, box.specificity
            why = (f"se + sp - 1 is too close to 0 there: at any true rate from 0 to 1, observed exactly as this "
                   f"judge would give it, the corrected rate's range holds both sides of {t.value:g}"
                   if box.youden_low > 0 else "sensitivity + specificity - 1 may be 0 or below there (a judge no "
                                               "better than chance): the corrected rate is unbounded")
            raise KnowgapError(f"{where}: the judge's card {card.key} ({card.dataset}, n={card.n}) gives sensitivity "
                               f"[{se[0]:.3f}, {se[1]:.3f}] and specificity [{sp[0]:.3f}, {sp[1]:.3f}] (each at "
                               f"{1 - alpha_card / 2:g}, with --alpha {rule.alpha:g}); {why}, so no run can decide "
                               "it: measure the judge on more labelled items, or gate the observed value")
        correction = JudgeCorrection(card=card.key, dataset=card.dataset, n=card.n, measured=card.measured,
                                     counts=judge.counts, tp=c.tp, fn=c.fn, fp=c.fp, tn=c.tn)
        thresholds.append(t.model_copy(update={"correction": correction}))
    return rule.model_copy(update={"thresholds": thresholds})


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
    fixed = _fixed_n(manifest, record.sequences, metrics)
    lines = ["## Stopping rule", "", record.says(), "",
             "| metric | group | threshold | decision | sequence (anytime-valid) | value | fixed-n 95% CI | cases |",
             "|---|---|---|---|---|---:|---|---:|"]
    for s in record.sequences:
        m = fixed.get(_key(s))
        ci = f"[{_fmt(m.ci_low)}, {_fmt(m.ci_high)}]" if m is not None and m.ci_low is not None else "-"
        seq = f"[{_fmt(s.low)}, {_fmt(s.high)}]" if s.low is not None else f"not sequential: {s.why}"
        lines.append(f"| {_name(s)} | {s.group} | {s.threshold or '-'} | {s.decision} | {seq} | {_fmt(s.estimate)} "
                     f"| {ci} | {s.path[-1].units if s.path else 0} |")
    alpha = record.rule.alpha
    held = (f"Each end of a sequence is a one-sided bound of the whole set's value at every stop, each holding with "
            f"probability at least {1 - alpha:g}: a decision needs only the end on its side, so it is wrong with "
            f"probability at most {alpha:g} (the two ends together hold the value with probability at least "
            f"{1 - 2 * alpha:g})" if record.sides == "each" else
            f"The sequence holds the whole set's value at every stop with probability at least {1 - alpha:g}")
    lines += ["", f"{held}; the fixed-n interval is that of the trials that ran, read as if their number had been "
              "fixed in advance (docs/statistics.md)."]
    corrected = [s for s in record.sequences if s.corrected is not None]
    if corrected:
        lines += ["", "Judge-corrected sequences (their value and fixed-n interval are the corrected rate's):", ""]
        lines += [f"- {s.metric} [{s.group}]: {s.corrected.says()}" for s in corrected if s.corrected is not None]
    if record.stopped_early:
        lines += ["", f"Continue to every case: `knowgap resume {manifest.run_id} --until all`."]
    return lines


def _key(s: MetricSequence) -> tuple[str, str, bool]:
    return s.metric, s.group, s.corrected is not None


def _name(s: MetricSequence) -> str:
    return f"{s.metric} (corrected)" if s.corrected is not None else s.metric


def _fixed_n(manifest: Manifest, sequences: Sequence[MetricSequence],
             metrics: Sequence[MetricValue]) -> dict[tuple[str, str, bool], MetricValue]:
    """The fixed-n interval shown beside each sequence: the metric's own, or for a corrected sequence its corrected
    rate's (the reports' "corrected" column, :mod:`knowgap.report.judging`)."""
    out = {(m.name, m.group, False): m for m in metrics}
    wanted = {(s.metric, s.group) for s in sequences if s.corrected is not None}
    if wanted:
        from knowgap.report.judging import Judgements

        judged = Judgements.for_run(manifest)
        for m in metrics:
            if (m.name, m.group) in wanted:
                e = judged.of(m).corrected
                out[(m.name, m.group, True)] = m.model_copy(update={
                    "value": None if e is None else e.value, "ci_low": None if e is None else e.ci_low,
                    "ci_high": None if e is None else e.ci_high})
    return out


def sequence_chart(s: MetricSequence, total: int, fixed: MetricValue | None, width: int = 520,
                   height: int = 170) -> str:
    """The sequence's interval after each batch (a band), its running value (a line), the threshold (dashed) and,
    at the right, the final fixed-n interval of the trials that ran."""
    left, right, top, bottom = 44, 70, 24, 26
    pw, ph = width - left - right, height - top - bottom
    title = f"{_name(s)} [{s.group}]" + (f" · {s.threshold} · {s.decision}" if s.threshold else "")

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
    fixed = _fixed_n(manifest, record.sequences, metrics)
    charts = "".join(sequence_chart(s, record.units_total,
                                    None if s.kind == "difference" else fixed.get(_key(s)))
                     for s in record.sequences if s.kind != "count")
    notes = "".join(f"<p class=\"corrected\">{esc(s.metric)} [{esc(s.group)}]: {esc(s.corrected.says())}</p>"
                    for s in record.sequences if s.corrected is not None)
    rows = "".join(f"<tr><td>{esc(_name(s))}</td><td>{esc(s.group)}</td><td>{esc(s.threshold or '-')}</td>"
                   f"<td>{esc(s.decision)}</td><td>{esc(_fmt(s.low))} – {esc(_fmt(s.high))}</td>"
                   f"<td>{esc(s.why)}</td></tr>" for s in record.sequences)
    more = (f"<p>Continue to every case: <code>knowgap resume {esc(manifest.run_id)} --until all</code></p>"
            if record.stopped_early else "")
    return (f'<section class="stopping"><h3>Stopping rule</h3><p>{esc(record.says())}</p>'
            "<table><tr><th>metric</th><th>group</th><th>threshold</th><th>decision</th><th>sequence</th>"
            f"<th>not sequential because</th></tr>{rows}</table>{notes}{more}"
            f"<div class=\"charts\">{charts}</div></section>")
