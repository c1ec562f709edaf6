"""Markdown for pull-request comments: a short summary of runs, a comparison, a gate result.

Text from models is shortened, stripped of markdown/HTML specials and redacted, so a comment renders as
text whatever a model said.
"""

from __future__ import annotations

from collections.abc import Sequence

from knowgap.engine.outcome import status_text
from knowgap.engine.records import Manifest
from knowgap.report.causes import against, failure_causes
from knowgap.report.compare import Comparison, MetricChange
from knowgap.report.data import RunData
from knowgap.report.examples import example_line, failed_trials
from knowgap.report.gate import GateResult
from knowgap.report.injection import RunMetrics, injection_markdown
from knowgap.report.judging import Judgements
from knowgap.report.markdown import format_metric
from knowgap.report.mdtext import md_text
from knowgap.report.scorecard import folded_zero, is_breakdown, scorecard, suite_specs
from knowgap.report.scorecard_markdown import causes_markdown, scorecard_markdown
from knowgap.suites.dataset_cards import reference_data_line


def _pct(x: float | None, kind: str) -> str:
    if x is None:
        return "n/a"
    if kind == "proportion":
        return f"{x * 100:+.1f} pp"
    return f"{x:+.3g}"


def _status(m: Manifest) -> str:
    """The status, in bold with the first error cause when the run is not clean."""
    if m.status == "finished":
        return m.status
    text = status_text(m) + (f"; first cause: {m.error_causes[0].message}" if m.error_causes else "")
    return f"**{md_text(text, 300)}**"


def run_summary(run: RunData, *, examples: int = 5) -> str:
    m = run.manifest
    lines = [f"### {md_text(m.config.suite)} · {md_text(run.target, 80)}", "",
             f"run `{m.run_id}` · {_status(m)} · {m.trials_ok} ok / {m.trials_error} errors of {m.trials_total} "
             "trials", "", md_text(reference_data_line(m.config.suite, m.dataset_hashes, m.config.options), 1200), "",
             *([md_text(note, 1200), ""] if (note := run.dataset_note()) else []),
             "| group | metric | value | 95% CI | n cases / trials | corrected | judge |",
             "|---|---|---:|---|---:|---|---|"]
    judged = Judgements.for_run(m)
    folded = folded_zero(run.metrics, suite_specs(m.config.suite, run))
    broken = [x for x in run.metrics if is_breakdown(x) and x.name not in folded]
    for metric in (x for x in run.metrics if x.name not in folded and not is_breakdown(x)):
        value, ci = format_metric(metric)
        j = judged.of(metric)
        lines.append(f"| {md_text(metric.group)} | {md_text(metric.name)} | {value} | {ci} | {metric.n_text()} | "
                     f"{j.corrected_text()} | {md_text(j.cell(), 300)} |")
    if folded:
        lines += ["", f"0 in every group (housekeeping, lower is better): {md_text(', '.join(sorted(folded)), 600)}"]
    if broken:
        lines += ["", f"{len(broken)} per-group breakdown rows (knowledge base, family, language...): report.html "
                      f"and `knowgap show {m.run_id}`."]
    found = failed_trials(run, examples)
    counts = found.counts
    if counts:
        lines += ["", "failed trials: " + ", ".join(f"{md_text(g)} {k}/{n}" for g, (k, n) in counts.items())]
    worst = found.examples
    if worst:
        lines += ["", "<details><summary>worst examples</summary>", ""]
        for r in worst:
            lines.append(f"- {md_text(r.trial_id, 100)}: {md_text(example_line(run, r), 400)}")
        lines += ["", "</details>"]
    if run.suite is not None:
        try:
            sections = run.suite.report_sections(run.records, run.metrics)
        except Exception:  # a suite's report bug must not lose the summary
            sections = []
        for s in sections:
            if s.markdown:
                lines += ["", f"#### {md_text(s.title)}", "", s.markdown]
    return "\n".join(lines)


def summary_markdown(runs: Sequence[RunData], *, gate: GateResult | None = None,
                     comparison: Comparison | None = None, examples: int = 5) -> str:
    """Scorecard first, then where each run fails most, then the details (gate checks, the comparison, injection
    tables, each run's metrics and examples) folded."""
    sc = scorecard(runs, gate=gate, comparison=comparison)
    shown = {c.run_id for c in sc.cards}
    found = [failure_causes(r) for r in runs if r.run_id in shown]
    baseline = next((r for r in runs if comparison is not None and r.run_id == comparison.run_a), None)
    if comparison is not None and baseline is not None:  # each cause's trials in the baseline beside B's
        found = [against(rc, baseline) if rc.run_id == comparison.run_b else rc for rc in found]
    lines = ["## knowgap", "", *scorecard_markdown(sc), "", *causes_markdown(found), ""]
    if gate is not None:
        lines += ["<details><summary>every gate check</summary>", "", gate_markdown(gate), "", "</details>", ""]
    if comparison is not None:  # its headline changes are on the scorecard; every metric's here
        lines += [f"<details><summary>every metric compared ({len(comparison.changes)})</summary>", "",
                  compare_markdown(comparison), "", "</details>", ""]
    lines += injection_markdown([RunMetrics.of(r) for r in runs], level=3)
    for run in runs:
        lines += [f"<details><summary>{md_text(run.manifest.config.suite)} {run.run_id}: every metric and the "
                  "worst examples</summary>", "", run_summary(run, examples=examples), "", "</details>", ""]
    return "\n".join(lines).rstrip() + "\n"


def _change_row(c: MetricChange) -> str:
    ci = f"[{_pct(c.ci_low, c.kind)}, {_pct(c.ci_high, c.kind)}]" if c.ci_low is not None else ""
    p = f"{c.p_value:.3g}" if c.p_value is not None else ""
    sig = {True: "**yes**", False: "no", None: "-"}[c.significant]
    fa = format_metric_value(c.a, c.kind)
    fb = format_metric_value(c.b, c.kind)
    name = md_text(c.name) + (" †" if c.judge_changed else "")
    return f"| {md_text(c.group)} | {name} | {fa} | {fb} | {_pct(c.delta, c.kind)} | {ci} | {p} | {sig} |"


def format_metric_value(x: float | None, kind: str) -> str:
    if x is None:
        return "n/a"
    if kind == "proportion":
        return f"{x:.1%}"
    if kind == "count":
        return f"{x:.0f}"
    return f"{x:.3f}"


def compare_markdown(c: Comparison, *, flips: int = 20) -> str:
    lines = [f"### compare `{c.run_a}` → `{c.run_b}`", "", f"method: {c.method}", "",
             "| group | metric | A | B | change | 95% CI | p | significant |", "|---|---|---:|---:|---:|---|---:|---|"]
    lines += [_change_row(ch) for ch in c.changes]
    if notes := c.judge_notes():
        lines += [""] + [f"† {md_text(note, 1000)}" for note in notes]
    if screens := c.screen_notes():
        lines += [""] + [md_text(note, 1000) for note in screens]
    if c.dataset_notes:
        lines += [""] + [md_text(note, 1200) for note in c.dataset_notes]
    if c.only_a or c.only_b:
        lines += ["", f"only in A: {', '.join(c.only_a) or '-'}; only in B: {', '.join(c.only_b) or '-'}"]
    if c.mcnemar:
        lines += ["", "| group | fixed | regressed | McNemar p | clusters fixed / regressed |",
                  "|---|---:|---:|---:|---:|"]
        lines += [f"| {md_text(t.group)} | {t.fixed} | {t.regressed} | {t.p_value:.3g} | {t.net_fixed} / "
                  f"{t.net_regressed} of {t.clusters} |" for t in c.mcnemar]
        lines += ["", "McNemar p counts clusters (a case with its repeats, or cases on one source), each fixed or "
                      "regressed by its trials' net change."]
    if c.flips:
        lines += ["", f"<details><summary>{len(c.flips)} flipped trials</summary>", ""]
        for f in c.flips[:flips]:
            lines.append(f"- **{f.direction}** {md_text(f.trial_id, 100)}: {md_text(f.response_a, 80)} → "
                         f"{md_text(f.response_b, 80)}")
        if len(c.flips) > flips:
            lines.append(f"- … and {len(c.flips) - flips} more")
        lines += ["", "</details>"]
    return "\n".join(lines)


def gate_markdown(result: GateResult) -> str:
    head = "### gate: passed ✅" if result.passed else f"### gate: FAILED ❌ ({len(result.failures)} of " \
                                                      f"{len(result.checks)} checks)"
    lines = [head, "", "| | threshold | run | group | actual |", "|---|---|---|---|---:|"]
    for ch in sorted(result.checks, key=lambda x: x.passed):
        actual = f"{ch.actual:.4g}" if ch.actual is not None else "n/a"
        lines.append(f"| {'✅' if ch.passed else '❌'} | {md_text(ch.threshold)} | {md_text(ch.suite)} | "
                     f"{md_text(ch.group)} | {actual} |")
    return "\n".join(lines)
