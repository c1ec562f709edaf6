"""The top of the HTML report: the scorecard (each run's headline metrics with value, 95% interval, n, the gate's
verdict and the judge's badge; the change from a baseline) and where each run fails most. Everything from a
model or a dataset is escaped."""

from __future__ import annotations

from collections.abc import Sequence

from knowgap.report.causes import RunCauses
from knowgap.report.scorecard import Cell, GateMark, HeadlineRow, RunCard, Scorecard
from knowgap.report.svg import esc

CSS = """
#scorecard{margin:10px 0}#scorecard h2{margin:4px 0}
.legend{font-size:12px;color:#555;margin:2px 0 6px}
#scorecard .head{display:flex;gap:14px;align-items:baseline;flex-wrap:wrap}
.verdict{font-size:15px;font-weight:600;padding:2px 10px;border-radius:4px}
.verdict.pass{background:#eaf7ee;color:#1e5631;border:1px solid #1e8449}
.verdict.fail{background:#fdecea;color:#7b1d12;border:1px solid #c0392b}
.failed-checks{font-size:12px;color:#7b1d12;margin:2px 0;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.cards{display:flex;flex-wrap:wrap;gap:10px;align-items:flex-start}
.card{background:#fff;border:1px solid #ccd;border-radius:6px;padding:4px 10px 6px}
.card h3{font-size:14px;margin:2px 0 4px;border:0}.card .note{font-size:12px;color:#666}
table.score{font-size:12px;margin:0;line-height:1.25}table.score th,table.score td{padding:2px 6px;white-space:nowrap}
table.score th.metric{background:#fff;font-weight:600}
.cell .v{font-weight:700;font-size:13px}.cell .ci,.cell .n{color:#555}
.gate{font-weight:700;margin-left:4px}.gate.pass{color:#1e8449}.gate.fail{color:#c0392b}.gate.undecided{color:#b7791f}
.chg{font-size:11px}.chg.better{color:#1e8449}.chg.worse{color:#c0392b}.chg.sig{font-weight:700}
.dir{color:#888;font-weight:400}
.status-note{font-size:12px;color:#7b1d12}
table.causes td.why{white-space:normal;max-width:560px}
details.fold>summary{cursor:pointer;font-size:13px;color:#253858;margin:6px 0}
p.folded{font-size:12px;color:#555}
"""


def _compact(threshold: str) -> str:
    """``>= 0.6`` from ``starter: accuracy[prompt=plain] >= 0.6``, with ``≥``/``≤``."""
    parts = threshold.split()
    short = " ".join(parts[-2:]) if len(parts) >= 2 else threshold
    return short.replace(">=", "≥").replace("<=", "≤")


def _gate(marks: Sequence[GateMark]) -> str:
    out = []
    for g in marks:
        cls, sign = {True: ("pass", "✓"), False: ("fail", "✗"), None: ("undecided", "?")}[g.passed]
        out.append(f'<span class="gate {cls}" title="{esc(g.threshold)}: {esc(g.message)}">{sign} '
                   f"{esc(_compact(g.threshold))}</span>")
    return "".join(out)


def _cell(cell: Cell | None, row: HeadlineRow) -> str:
    if cell is None:
        return '<td class="cell empty">–</td>'
    ci = f' <span class="ci">{esc(cell.ci_text)}</span>' if cell.ci_text else ""
    state = {True: "pass", False: "fail", None: "undecided" if cell.gate else "none"}[cell.gate_passed]
    parts = [f'<td class="cell" data-metric="{esc(row.metric)}" data-group="{esc(cell.group)}" data-gate="{state}">'
             f'<span class="v">{esc(cell.value_text)}</span>{ci} <span class="n">n={esc(cell.n)}</span>'
             f"{_gate(cell.gate)}"]
    c = cell.change
    if c is not None:
        cls = "chg" + ({True: " better", False: " worse", None: ""}[c.better] + " sig" if c.significant else "")
        sig = {True: "significant", False: "not significant", None: "no test"}[c.significant]
        parts.append(f'<div class="{cls}" title="B − A against baseline {esc(c.baseline)}; p='
                     f'{esc(f"{c.p_value:.3g}" if c.p_value is not None else "-")}">{esc(c.text)} · {sig}</div>')
    parts.append("</td>")
    return "".join(parts)


def _badge(row: HeadlineRow) -> str:
    title = esc(f"{row.judge} — {row.judge_reason}" if row.judge else row.judge_reason)
    if row.judge_status == "screen":
        return f'<span class="badge screen" title="{title}">SCREEN</span>'
    if row.judge_status == "unknown":
        return f'<span class="badge unknown" title="{title}">judge unknown</span>'
    if row.judge_status == "reportable":
        return f'<span class="badge reportable" title="{title}">✓ judge</span>'
    return f'<span class="label" title="{title}">computed</span>'


def _metric_head(row: HeadlineRow, tag: str) -> str:
    arrow = "↓" if row.lower_is_better else "↑"
    return (f'<{tag} class="metric" data-metric="{esc(row.metric)}" data-judge="{esc(row.judge_status)}" '
            f'title="{esc(row.description)}">{esc(row.metric)} <span class="dir" title="'
            f'{"lower" if row.lower_is_better else "higher"} is better">{arrow}</span> {_badge(row)}</{tag}>')


def _table(card: RunCard) -> str:
    if len(card.groups) > max(3, len(card.rows)):  # many configurations, few metrics: a row per configuration
        head = "<tr><th>configuration</th>" + "".join(_metric_head(r, "th") for r in card.rows) + "</tr>"
        body = "".join(f"<tr><th>{esc(g)}</th>" + "".join(_cell(r.cells[i], r) for r in card.rows) + "</tr>"
                       for i, g in enumerate(card.groups))
    else:
        head = "<tr><th>metric</th>" + "".join(f"<th>{esc(g)}</th>" for g in card.groups) + "</tr>"
        body = "".join(f"<tr>{_metric_head(r, 'th')}" + "".join(_cell(c, r) for c in r.cells) + "</tr>"
                       for r in card.rows)
    return f'<table class="score">{head}{body}</table>'


def _card(card: RunCard, anchor: str | None, target: bool) -> str:
    link = f'<a href="#{esc(anchor)}">{esc(card.suite)}</a>' if anchor else esc(card.suite)
    against = f' <span class="label">against baseline {esc(card.baseline)}</span>' if card.baseline else ""
    model = f'<div class="label target">{esc(card.target)}</div>' if target else ""
    status = ""
    if card.status != "finished":
        status = (f'<div class="status-note">{esc(card.status_text)}: {card.trials_error} of {card.trials_total} '
                  "trials errored</div>" if card.trials_error else
                  f'<div class="status-note">{esc(card.status_text)}</div>')
    body = _table(card) if card.rows else f'<p class="note">{esc(card.note)}</p>'
    return (f'<div class="card" data-run="{esc(card.run_id)}" data-suite="{esc(card.suite)}"><h3>{link} '
            f'<span class="label">{esc(card.run_id)}</span>{against}</h3>{model}{status}{body}</div>')


def scorecard_html(sc: Scorecard, anchors: dict[str, str] | None = None) -> str:
    """The scorecard section; ``anchors``: run id -> the id of its details section."""
    anchors = anchors or {}
    verdict = failed = ""
    if sc.gate is not None:
        if sc.gate.passed:
            verdict = f'<span class="verdict pass" id="gate-verdict">Gate passed: {sc.gate.checks} checks</span>'
        else:
            verdict = (f'<span class="verdict fail" id="gate-verdict">Gate FAILED: {len(sc.gate.failed)} of '
                       f"{sc.gate.checks} checks</span>")
            lines = "; ".join(sc.gate.failed)
            failed = f'<p class="failed-checks" title="{esc(lines)}">failed: {esc(lines)}</p>'

    targets = list(dict.fromkeys(c.target for c in sc.cards))
    legend = ("Each suite's headline metrics: value [95% CI] n (cases / trials) · ↑↓ better · ✓✗ the gate · "
              "SCREEN: the judge's accuracy is not established: not for reporting (hover for why).")
    if any(c.baseline for c in sc.cards):
        legend += " Under each number: the change from the baseline (B − A, 95% CI) and whether it is significant."
    if sc.gate is None and not sc.marks():
        legend += " No gate was given."
    cards = "".join(_card(c, anchors.get(c.run_id), len(targets) > 1) for c in sc.cards)
    return (f'<section id="scorecard"><div class="head"><h2>Scorecard</h2>{verdict}</div>{failed}'
            f'<p class="legend">{esc(legend)}</p><div class="cards">{cards}</div></section>')


def causes_html(found: Sequence[RunCauses], link: dict[tuple[str, str], str] | None = None) -> str:
    """Where each run fails most: its largest causes of wrong verdicts. ``link``: (run id, trial id) -> the URL of an
    example."""
    link = link or {}
    parts = ['<section id="fails"><h2>Where it fails most</h2>']
    for rc in found:
        parts.append(f'<h3>{esc(rc.suite)} <span class="label">{esc(rc.run_id)}</span></h3>')
        if not rc.judged and not rc.causes:
            parts.append('<p class="facts">this suite gives no per-trial verdicts (nor did any trial error)</p>')
            continue
        if not rc.causes:
            parts.append(f'<p class="ok">no failed verdict in {rc.trials} trials</p>')
            continue
        base = (f'<th title="the trials of this cause in baseline {esc(rc.baseline)}, of {rc.baseline_of}">'
                "baseline</th>" if rc.baseline else "")
        parts.append(f'<p class="facts">{rc.failed} of {rc.trials} trials failed at least one verdict; by cause '
                     "(a trial counts once per cause):</p>"
                     f'<table class="causes"><tr><th>trials</th>{base}<th>cause</th><th>metrics</th>'
                     "<th>most in</th><th>example</th></tr>")
        for c in rc.causes:
            where = ", ".join(f"{g} ({n})" for g, n in c.groups[:3])
            example = esc(c.example)
            if (rc.run_id, c.example) in link:
                example = f'<a href="{esc(link[(rc.run_id, c.example)])}">{example}</a>'
            was = f'<td class="num baseline">{c.baseline_trials}</td>' if rc.baseline else ""
            parts.append(f'<tr class="cause"><td class="num">{c.trials}</td>{was}<td class="why">{esc(c.cause)}</td>'
                         f"<td>{esc(', '.join(c.metrics))}</td><td>{esc(where)}</td>"
                         f'<td title="{esc(c.example_why)}">{example}</td></tr>')
        parts.append("</table>")
        if rc.more:
            parts.append(f'<p class="facts">… and {rc.more} smaller causes (knowgap show {esc(rc.run_id)} '
                         "--failed lists every one)</p>")
    parts.append("</section>")
    return "".join(parts)
