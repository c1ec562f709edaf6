"""The judge of each metric in the HTML report: a judge cell per metric row (name, version, balanced accuracy
with its CI, a SCREEN badge with the reason) and the "Judges" section listing each judge's validity card."""

from __future__ import annotations

from knowgap.engine.records import Manifest
from knowgap.report.judging import OLD_RUN, Judgements, MetricJudgement, rule_summary
from knowgap.report.svg import esc

CSS = """
.badge{display:inline-block;font-size:11px;font-weight:600;padding:0 5px;border-radius:3px;margin-right:4px}
.badge.screen{background:#fdecea;color:#7b1d12;border:1px solid #c0392b}
.badge.unknown{background:#fff6e0;color:#6b4a00;border:1px solid #e6a700}
.badge.reportable{background:#eaf7ee;color:#1e5631;border:1px solid #1e8449}
td.judge{font-size:12px}td.judge .why{color:#7b1d12}
"""


def judge_cell(j: MetricJudgement) -> str:
    """The ``<td>`` of one metric's judge."""
    if j.status == "computed":
        return '<td class="judge"><span class="label" title="no judge: an exact rule">computed</span></td>'
    if j.status == "unknown":
        return (f'<td class="judge"><span class="badge unknown" title="{esc(j.reason)}">judge unknown</span>'
                f'<div class="why">{esc(j.reason)}</div></td>')
    label = esc(j.judge_label)
    accuracy = f" · {esc(j.accuracy)}" if j.accuracy else ""
    if j.status == "screen":
        return (f'<td class="judge"><span class="badge screen" title="{esc(j.reason)}">SCREEN</span>{label}'
                f'{accuracy}<div class="why">{esc(j.reason)}</div></td>')
    return f'<td class="judge"><span class="badge reportable" title="{esc(j.reason)}">✓</span>{label}{accuracy}</td>'


def judges_section(manifest: Manifest) -> str:
    """Each judge of the run with its card: labelled set, n, BA / kappa / sensitivity / specificity with CIs,
    the date; or that it has none."""
    if manifest.metric_judges is None:
        return f'<p class="facts" id="judges-unknown">Judges unknown: {esc(OLD_RUN)}.</p>'
    judged = Judgements.for_run(manifest)
    found = judged.judges()
    if not found:
        return '<p class="facts">No judge decided any metric of this run: every metric is computed.</p>'
    from knowgap.judges.cards import fmt

    rows = ["<table class=judges><tr><th>judge</th><th>version</th><th>judge model</th><th>metrics</th>"
            "<th>labelled set</th><th>n</th><th>balanced accuracy</th><th>kappa</th><th>sensitivity</th>"
            "<th>specificity</th><th>measured</th></tr>"]
    for judge, card, names in found:
        head = (f"<tr><td>{esc(judge.judge)}</td><td><code>{esc(judge.version)}</code></td>"
                f"<td>{esc(judge.judge_model or '-')}</td><td>{esc(', '.join(names))}</td>")
        if card is None:
            rows.append(head + '<td colspan=7><span class="badge screen">SCREEN</span>no validity card: every '
                               "metric it decides is for screening, not for reporting</td></tr>")
            continue
        a = judged.assessment(judge)
        status = (f'<div class="why"><span class="badge screen">SCREEN</span>{esc(a.reason)}</div>'
                  if a.status == "screen" else "")
        rule = "".join(f"<div class=label>{esc(part)}</div>" for part in rule_summary(card))
        rows.append(head + f"<td>{esc(card.dataset)}<div class=label>positive: {esc(card.positive)}</div>{rule}"
                           f"{status}</td>"
                           f"<td class=num>{card.n}</td><td>{esc(fmt(card.balanced_accuracy))}</td>"
                           f"<td>{esc(fmt(card.kappa))}</td><td>{esc(fmt(card.sensitivity))}</td>"
                           f"<td>{esc(fmt(card.specificity))}</td><td>{esc(card.measured)}</td></tr>")
    rows.append("</table>")
    return "".join(rows)
