"""A self-contained HTML report of one or more runs: inline CSS, inline SVG charts, no script, no network.

Everything that came from a dataset or a model is HTML-escaped (and a Content-Security-Policy forbids any
script), so a response holding ``<script>`` shows as text. Secrets are redacted from model text.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from knowgap.engine.outcome import describe_causes, status_text
from knowgap.engine.records import MetricValue, TrialRecord
from knowgap.engine.store import write_atomic
from knowgap.engine.suite import ReportSection, Suite
from knowgap.redaction import redact
from knowgap.report.causes import against, failure_causes
from knowgap.report.charts import confusion_charts, headline_charts, metric_charts
from knowgap.report.compare import Comparison
from knowgap.report.data import RunData, load_run_data
from knowgap.report.examples import exhibit_html, failed_trials, trial_exhibits
from knowgap.report.gate import GateResult
from knowgap.report.injection import RunMetrics, injection_html
from knowgap.report.judges_html import CSS as JUDGES_CSS
from knowgap.report.judges_html import judge_cell, judges_section
from knowgap.report.judging import Judgements
from knowgap.report.markdown import format_metric
from knowgap.report.scorecard import by, folded_zero, is_breakdown, scorecard, suite_specs
from knowgap.report.scorecard_html import CSS as SCORECARD_CSS
from knowgap.report.scorecard_html import causes_html, scorecard_html
from knowgap.report.svg import Bar, bar_chart, esc
from knowgap.suites.dataset_cards import reference_data_line

HTML_REPORT = "report.html"
MAX_TEXT = 2000
log = logging.getLogger(__name__)

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC",sans-serif;margin:0;
 color:#1b1b1b;background:#fafafa;line-height:1.4}
header{background:#253858;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;font-size:13px;opacity:.85}
main{padding:8px 24px 40px;max-width:1400px}
section.run{background:#fff;border:1px solid #ddd;border-radius:6px;margin:18px 0;padding:6px 18px 18px}
h2{font-size:18px;margin:14px 0 6px}h3{font-size:15px;margin:18px 0 6px;border-bottom:1px solid #eee}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f0f2f5}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.facts{font-size:13px;color:#333}.facts code{background:#f3f3f3;padding:0 3px}
.charts{display:flex;flex-wrap:wrap;gap:14px}.charts svg{background:#fff;border:1px solid #eee}
.example{border:1px solid #e3e3e3;border-left:4px solid #c0392b;margin:10px 0;padding:6px 10px;background:#fffdfd}
.example.err{border-left-color:#e67e22}.example.good{border-left-color:#1e8449;background:#fbfffc}
.example pre{white-space:pre-wrap;word-break:break-word;background:#f7f7f7;padding:6px;margin:4px 0;
 font-size:12px;max-height:320px;overflow:auto}
.label{font-size:12px;color:#666}.bad{color:#c0392b}.ok{color:#1e8449}
nav a{margin-right:12px;font-size:13px}
.banner{margin:10px 0;padding:8px 12px;border-radius:4px;font-size:14px;background:#fdecea;color:#7b1d12;
 border:1px solid #c0392b}.banner.warn{background:#fff6e0;color:#6b4a00;border-color:#e6a700}
.banner ul{margin:4px 0 0;padding-left:20px;font-size:13px}
"""


def _fmt_scores(scores: Mapping[str, object]) -> str:
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in scores.items())


def _clip(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more characters]"


def _facts(run: RunData) -> str:
    m, cfg = run.manifest, run.manifest.config
    commit = f" (git {esc(m.git_commit[:10])})" if m.git_commit else ""
    options = json.dumps(cfg.options, ensure_ascii=False) if cfg.options else "{}"
    return (f'<p class="facts">suite <code>{esc(cfg.suite)}</code> · options <code>{esc(options)}</code> · '
            f"repeats {cfg.repeats} · seed {cfg.seed}<br>status <b>{esc(status_text(m))}</b> · trials "
            f"{m.trials_ok} ok, {m.trials_error} errors of {m.trials_total} · started {esc(m.started_at)} · ended "
            f"{esc(m.ended_at or '-')} · knowgap {esc(m.knowgap_version)}{commit}{_judges(m.judges)}</p>")


def _status_banner(run: RunData) -> str:
    """A red banner when trials errored (status and counts, then the first causes); an amber one when the
    run did not finish (interrupted, or still running)."""
    m = run.manifest
    if m.trials_error:
        causes = "".join(f"<li>{esc(redact(line))}</li>" for line in describe_causes(m.error_causes, m.trials_error))
        return (f'<div class="banner" role="alert" id="run-status"><b>{esc(m.status)}</b>: {m.trials_error} of '
                f"{m.trials_total} trials errored and are left out of the metrics; {m.trials_ok} ok."
                f"<ul>{causes}</ul></div>")
    if m.status in ("interrupted", "running", "failed"):
        return (f'<div class="banner warn" role="status" id="run-status"><b>{esc(status_text(m))}</b>: '
                f"{m.trials_ok + m.trials_error} of {m.trials_total} trials stored; the metrics cover only what "
                "finished.</div>")
    return ""


def _judges(judges: dict[str, str] | None) -> str:
    if not judges:
        return ""
    return "<br>judges " + " · ".join(f"{esc(name)} <code>{esc(version)}</code>" for name, version in judges.items())


def _models_table(run: RunData) -> str:
    cfg, usage = run.manifest.config, run.manifest.usage
    rows = ["<table><tr><th>role</th><th>model</th><th>calls</th><th>cached</th><th>retries</th>"
            "<th>tokens in / out</th><th>latency s</th><th>cost</th></tr>"]
    for role, spec in cfg.models.items():
        u = usage.get(role, {}).get(spec)
        if u is None:
            rows.append(f"<tr><td>{esc(role)}</td><td><code>{esc(spec)}</code></td>" + "<td>-</td>" * 6 + "</tr>")
            continue
        cost = f"${u.cost_usd:.4f}" if u.cost_usd is not None else "-"
        rows.append(f"<tr><td>{esc(role)}</td><td><code>{esc(spec)}</code></td><td class=num>{u.calls}</td>"
                    f"<td class=num>{u.cached_calls}</td><td class=num>{u.retries}</td>"
                    f"<td class=num>{u.prompt_tokens} / {u.completion_tokens}</td>"
                    f"<td class=num>{u.latency_s:.1f}</td><td class=num>{esc(cost)}</td></tr>")
    rows.append("</table>")
    return "".join(rows)


def _metrics_table(run: RunData, metrics: Sequence[MetricValue] | None = None, *, css: str = "metrics") -> str:
    """The table of ``metrics`` (default: every metric of the run) with their definitions under it."""
    metrics = run.metrics if metrics is None else metrics
    rows = [f"<table class={css}><tr><th>group</th><th>metric</th><th>value</th><th>95% CI</th>"
            "<th>n cases / trials</th><th>corrected (95% CI)</th><th>judge</th></tr>"]
    judged = Judgements.for_run(run.manifest)
    for m in metrics:
        value, ci = format_metric(m)
        j = judged.of(m)
        rows.append(f"<tr data-judge=\"{j.status}\"><td>{esc(m.group)}</td>"
                    f"<td title=\"{esc(m.description)}\">{esc(m.name)}</td>"
                    f"<td class=num>{esc(value)}</td><td>{esc(ci)}</td><td class=num>{m.n_text()}</td>"
                    f"<td class=corrected>{esc(j.corrected_text())}</td>{judge_cell(j)}</tr>")
    rows.append("</table>")
    described = {m.name: m.description for m in metrics if m.description}
    if described and css == "metrics":
        rows.append("<ul class=facts>" + "".join(f"<li><b>{esc(k)}</b>: {esc(v)}</li>"
                                                  for k, v in described.items()) + "</ul>")
    return "".join(rows)


def _metrics_sections(run: RunData) -> str:
    """The run's metrics: a table of its configurations' numbers and their charts; housekeeping rows that are all
    zero folded into one line; the per-group breakdowns (knowledge base, family, language...) collapsed."""
    folded = set(folded_zero(run.metrics, suite_specs(run.manifest.config.suite, run)))
    kept = [m for m in run.metrics if m.name not in folded]
    main = [m for m in kept if not is_breakdown(m)]
    broken = [m for m in kept if is_breakdown(m)]
    parts = [_metrics_table(run, main) if main else ""]
    if folded:
        parts.append(f'<p class="folded" id="folded-{esc(run.run_id)}">0 in every group (housekeeping, lower is '
                     f"better): {esc(', '.join(sorted(folded)))}</p>")
    parts.append('<div class="charts">' + "".join(metric_charts(main)) + "</div>")
    if broken:
        rows = "row" if len(broken) == 1 else "rows"
        parts.append(f'<details class="fold breakdowns"><summary>per-group breakdowns ({esc(", ".join(by(broken)))}): '
                     f"{len(broken)} {rows}</summary>{_metrics_table(run, broken, css='metrics breakdown')}"
                     f'<div class="charts">{"".join(metric_charts(broken))}</div></details>')
    return "".join(parts)


def _example(run: RunData, r: TrialRecord, link_template: str | None) -> str:
    cls = "example err" if r.status != "ok" else "example"
    head = esc(r.trial_id)
    if link_template:
        url = link_template.format(run_id=run.run_id, trial_id=r.trial_id, case_id=r.case_id)
        head = f'<a href="{esc(url)}">{head}</a>'
    parts = [f'<div class="{cls}"><div><b>{head}</b> <span class="label">repeat {r.repeat}</span></div>']
    if r.scores:
        parts.append(f'<div class="label">scores: {esc(_fmt_scores(r.scores))}</div>')
    if r.error:
        parts.append(f'<div class="bad">error: {esc(redact(r.error))}</div>')
    parts += [exhibit_html(shown, verdicts) for shown, verdicts in trial_exhibits(run, r)]  # what each verdict saw
    extra = {k: v for k, v in r.output.items() if k != "response"}
    if extra:
        parts.append(f'<div class="label">output: {esc(_clip(redact(json.dumps(extra, ensure_ascii=False)), 600))}'
                     "</div>")
    parts.append("</div>")
    return "".join(parts)


def _suite_sections(run: RunData) -> list[ReportSection]:
    if run.suite is None:
        return []
    try:
        return list(run.suite.report_sections(run.records, run.metrics))
    except Exception as exc:  # a bug in a suite's report code must not lose the report
        log.warning("suite %s: report_sections failed: %s", run.manifest.config.suite, exc)
        return [ReportSection(title="suite sections", html=f'<p class="bad">the suite\'s report sections failed: '
                                                            f"{esc(type(exc).__name__)}: {esc(exc)}</p>")]


def _reference_data(run: RunData) -> str:
    """The suite's dataset card line (measured reference error rate; shipped units the run left out)."""
    m = run.manifest
    return reference_data_line(m.config.suite, m.dataset_hashes, m.config.options)


def render_run(run: RunData, *, anchor: str, max_examples: int = 20, link_template: str | None = None) -> str:
    m = run.manifest
    parts = [f'<section class="run" id="{esc(anchor)}"><h2>{esc(m.config.suite)} · {esc(run.target)} '
             f'<span class="label">{esc(m.run_id)}</span></h2>', _status_banner(run), _facts(run),
             f'<p class="facts reference-data">{esc(_reference_data(run))}</p>',
             f'<p class="facts dataset-note">{esc(note)}</p>' if (note := run.dataset_note()) else "",
             "<h3>Models</h3>", _models_table(run)]
    parts += ["<h3>Metrics (95% confidence intervals)</h3>"]
    if run.metrics:
        parts.append(_metrics_sections(run))
        if m.sequential is not None:  # --until: each sequence over the cases beside the fixed-n interval
            from knowgap.report.sequential import sequential_html
            parts.append(sequential_html(m, run.metrics))
    else:
        parts.append("<p>no metrics (the run did not finish)</p>")
    parts += ["<h3>Judges</h3>", judges_section(m)]
    confusions = confusion_charts(run.records, run.suite.score_tables if run.suite is not None else None)
    if confusions:
        parts += ["<h3>Score tables</h3>", '<div class="charts">' + "".join(confusions) + "</div>"]
    for section in _suite_sections(run):
        parts += [f"<h3>{esc(section.title)}</h3>", section.html]
    found = failed_trials(run, max_examples)
    examples, judged, counts = found.examples, found.judged, found.counts
    parts.append("<h3>Worst examples</h3>")
    if counts:
        parts.append("<p class=facts>failed trials per group: " + ", ".join(
            f"{esc(g)}: {k} of {n}" for g, (k, n) in counts.items()) + "</p>")
    if not judged:
        parts.append("<p class=facts>this suite gives no pass/fail verdict per trial; only errored trials are "
                     "listed.</p>")
    if examples:
        parts += [_example(run, r, link_template) for r in examples]
    else:
        parts.append('<p class="ok">no failed trials</p>')
    parts.append("</section>")
    return "".join(parts)


def render_gate(gate: GateResult) -> str:
    verdict = ('<span class="ok">passed</span>' if gate.passed else
               f'<span class="bad">FAILED ({len(gate.failures)} of {len(gate.checks)} checks)</span>')
    rows = ["<table><tr><th></th><th>threshold</th><th>run</th><th>group</th><th>actual</th><th>result</th></tr>"]
    for c in sorted(gate.checks, key=lambda c: c.passed):
        mark = '<span class="ok">✓</span>' if c.passed else '<span class="bad">✗</span>'
        actual = f"{c.actual:.4g}" if c.actual is not None else "n/a"
        rows.append(f"<tr><td>{mark}</td><td>{esc(c.threshold)}</td><td>{esc(c.suite)} <span class=label>"
                    f"{esc(c.run_id)}</span></td><td>{esc(c.group)}</td><td class=num>{esc(actual)}</td>"
                    f"<td>{esc(c.message)}</td></tr>")
    rows.append("</table>")
    return f'<section class="run" id="gate"><h2>Gate: {verdict}</h2>{"".join(rows)}</section>'


def _signed(x: float | None, kind: str) -> str:
    if x is None:
        return "n/a"
    return f"{x * 100:+.1f} pp" if kind == "proportion" else f"{x:+.3g}"


def render_comparison(c: Comparison, *, flips: int = 30) -> str:
    from knowgap.report.summary import format_metric_value

    parts = [f'<section class="run" id="compare"><h2>Compare {esc(c.run_a)} → {esc(c.run_b)}</h2>',
             f'<p class="facts">{esc(c.method)}; change = B − A; significant: p &lt; 0.05 and the 95% CI excludes 0'
             "</p>", "<table><tr><th>group</th><th>metric</th><th>A</th><th>B</th><th>change</th><th>95% CI</th>"
             "<th>p</th><th>significant</th></tr>"]
    for ch in c.changes:
        ci = f"[{_signed(ch.ci_low, ch.kind)}, {_signed(ch.ci_high, ch.kind)}]" if ch.ci_low is not None else ""
        sig = {True: '<b class="bad">yes</b>', False: "no", None: "-"}[ch.significant]
        p = f"{ch.p_value:.3g}" if ch.p_value is not None else ""
        parts.append(f"<tr><td>{esc(ch.group)}</td><td>{esc(ch.name + (' †' if ch.judge_changed else ''))}</td>"
                     f"<td class=num>{esc(format_metric_value(ch.a, ch.kind))}</td>"
                     f"<td class=num>{esc(format_metric_value(ch.b, ch.kind))}</td>"
                     f"<td class=num>{esc(_signed(ch.delta, ch.kind))}</td><td>{esc(ci)}</td>"
                     f"<td class=num>{esc(p)}</td><td>{sig}</td></tr>")
    parts.append("</table>")
    parts += [f'<p class="banner warn">† {esc(note)}</p>' for note in c.judge_notes()]
    parts += [f'<p class="banner warn">{esc(note)}</p>' for note in c.screen_notes()]
    parts += [f'<p class="banner warn">{esc(note)}</p>' for note in c.dataset_notes]
    by_name: dict[str, tuple[str, list[Bar]]] = {}
    for ch in c.changes:
        if ch.kind != "count":
            kind = "delta_pp" if ch.kind == "proportion" else "delta"
            by_name.setdefault(ch.name, (kind, []))[1].append(
                Bar(label=ch.group, value=ch.delta, low=ch.ci_low, high=ch.ci_high))
    parts.append('<div class="charts">' + "".join(bar_chart(f"change in {name} (B − A, 95% CI)", bars, kind)
                                                  for name, (kind, bars) in by_name.items()) + "</div>")
    if c.mcnemar:
        parts.append("<h3>Flipped trials (McNemar)</h3><table><tr><th>group</th><th>fixed</th><th>regressed</th>"
                     "<th>p</th><th>clusters fixed / regressed</th></tr>" + "".join(
                         f"<tr><td>{esc(t.group)}</td><td class=num>{t.fixed}</td><td class=num>{t.regressed}</td>"
                         f"<td class=num>{t.p_value:.3g}</td><td class=num>{t.net_fixed} / {t.net_regressed} of "
                         f"{t.clusters}</td></tr>" for t in c.mcnemar) + "</table><p class=facts>p: the exact "
                     "McNemar test over clusters (a case with its repeats, or cases on one source), each fixed or "
                     "regressed by its trials' net change; over trials when each cluster holds one.</p>")
    for f in c.flips[:flips]:
        parts.append(f'<div class="example{" good" if f.direction == "fixed" else ""}"><b>{esc(f.direction)}</b> '
                     f'{esc(f.trial_id)}<div class="label">A: {esc(_fmt_scores(f.scores_a))}</div>'
                     f'<pre class="response">{esc(_clip(redact(f.response_a)))}</pre>'
                     f'<div class="label">B: {esc(_fmt_scores(f.scores_b))}</div>'
                     f'<pre class="response">{esc(_clip(redact(f.response_b)))}</pre></div>')
    if len(c.flips) > flips:
        parts.append(f"<p class=facts>… and {len(c.flips) - flips} more flipped trials</p>")
    parts.append("</section>")
    return "".join(parts)


def _opening(runs: Sequence[RunData], gate: GateResult | None, comparison: Comparison | None,
             link_template: str | None) -> str:
    """What the page opens on: the scorecard, where each run fails most, and the headline plots."""
    sc = scorecard(runs, gate=gate, comparison=comparison)
    anchors = {r.run_id: f"run-{i}" for i, r in enumerate(runs)}
    shown = {c.run_id for c in sc.cards}
    found = [failure_causes(r) for r in runs if r.run_id in shown]
    baseline = next((r for r in runs if comparison is not None and r.run_id == comparison.run_a), None)
    if comparison is not None and baseline is not None:  # each cause's trials in the baseline beside B's
        found = [against(rc, baseline) if rc.run_id == comparison.run_b else rc for rc in found]
    links = {(rc.run_id, c.example): link_template.format(run_id=rc.run_id, trial_id=c.example, case_id=c.example_case)
             for rc in found for c in rc.causes} if link_template else {}
    charts = "".join(chart for card in sc.cards for chart in headline_charts(card))
    plots = (f'<section id="headline-plots"><h2>Headline metrics across configurations</h2>'
             f'<div class="charts">{charts}</div></section>' if charts else "")
    return scorecard_html(sc, anchors) + causes_html(found, links) + plots


def render_html(runs: Sequence[RunData], *, title: str | None = None, max_examples: int = 20,
                link_template: str | None = None, gate: GateResult | None = None,
                comparison: Comparison | None = None) -> str:
    """One page for ``runs`` (and a gate result and a comparison when given). ``link_template`` (e.g.
    ``http://127.0.0.1:8765/#/run/{run_id}/{trial_id}``) links each example into the web app when it runs."""
    if title is None:
        title = f"knowgap run {runs[0].run_id}" if len(runs) == 1 else f"knowgap report ({len(runs)} runs)"
        if comparison is not None:
            title = f"knowgap compare {comparison.run_a} → {comparison.run_b}"
    nav = ""
    if len(runs) > 1:
        suites = [r.manifest.config.suite for r in runs]
        nav = "<nav>" + "".join(f'<a href="#run-{i}" title="{esc(r.run_id)}">{esc(suites[i])}'
                                f'{f" · {esc(r.run_id)}" if suites.count(suites[i]) > 1 else ""}</a>'
                                for i, r in enumerate(runs)) + "</nav>"
    body = "".join(render_run(r, anchor=f"run-{i}", max_examples=max_examples, link_template=link_template)
                   for i, r in enumerate(runs))
    body = injection_html([RunMetrics.of(r) for r in runs]) + body
    if comparison is not None:
        body = render_comparison(comparison) + body
    if gate is not None:
        body = render_gate(gate) + body
    body = _opening(runs, gate, comparison, link_template) + body
    targets = list(dict.fromkeys(r.target for r in runs))
    subtitle = (", ".join(r.manifest.config.suite for r in runs) + f" on {targets[0]}" if len(targets) == 1 else
                ", ".join(f"{r.manifest.config.suite} on {r.target}" for r in runs))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><style>{CSS}{JUDGES_CSS}{SCORECARD_CSS}</style></head>"
            f"<body><header><h1>{esc(title)}</h1><p>{esc(subtitle)}</p></header><main>{nav}{body}</main>"
            "</body></html>\n")


def write_html(runs: Sequence[RunData], out: Path, *, title: str | None = None, max_examples: int = 20,
               link_template: str | None = None, gate: GateResult | None = None,
               comparison: Comparison | None = None) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, render_html(runs, title=title, max_examples=max_examples, link_template=link_template,
                                  gate=gate, comparison=comparison))
    return out


def write_html_report(run_path: Path, suite: Suite | None = None) -> Path:
    """``report.html`` in a run's folder (called by the runner when a run finishes)."""
    run = load_run_data(run_path)
    if suite is not None:
        run.suite = suite
    return write_html([run], run_path / HTML_REPORT)
