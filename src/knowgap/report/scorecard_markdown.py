"""The scorecard and where each run fails most, as markdown: the top of the pull-request summary and of a run's
report.md (:mod:`knowgap.report.scorecard`, :mod:`knowgap.report.causes`)."""

from __future__ import annotations

from collections.abc import Sequence

from knowgap.report.causes import RunCauses
from knowgap.report.mdtext import md_text
from knowgap.report.scorecard import Scorecard


def scorecard_markdown(sc: Scorecard, *, level: int = 3) -> list[str]:
    """The scorecard as markdown: the gate's verdict, then one row per run, headline metric and configuration with
    value [95% CI], n, the gate's mark (when a gate was given) and the judge's badge (and the change from the
    baseline)."""
    lines = [f"{'#' * level} Scorecard", ""]
    if sc.gate is not None:
        lines += [f"**gate: passed ✅** ({sc.gate.checks} checks)" if sc.gate.passed else
                  f"**gate: FAILED ❌** ({len(sc.gate.failed)} of {sc.gate.checks} checks): "
                  + md_text("; ".join(sc.gate.failed[:5]) + (f"; … {len(sc.gate.failed) - 5} more"
                                                               if len(sc.gate.failed) > 5 else ""), 1500), ""]
    against = any(c.baseline for c in sc.cards)
    gated = sc.gate is not None or bool(sc.marks())
    head = ("| suite | metric | configuration | value [95% CI] | n |" + (" gate |" if gated else "") + " judge |"
            + (" change vs baseline |" if against else ""))
    lines += [head, "|---|---|---|---|---:|" + ("---|" if gated else "") + "---|" + ("---|" if against else "")]
    for card in sc.cards:
        suite = f"{md_text(card.suite)} `{card.run_id}`"
        if not card.rows:
            lines.append(f"| {suite} | {md_text(card.note, 300)} | | | |" + (" |" if gated else "") + " |"
                         + (" |" if against else ""))
        for row in card.rows:
            judge = {"screen": "**SCREEN**", "reportable": "✓", "computed": "computed"}.get(row.judge_status,
                                                                                          "judge unknown")
            name = f"{md_text(row.metric)} {'↓' if row.lower_is_better else '↑'}"
            for cell in (c for c in row.cells if c is not None):
                gate = " ".join(("✅" if g.passed else "❌" if g.passed is False else "❔") + " "
                                + md_text(" ".join(g.threshold.split()[-2:]).replace(">=", "≥").replace("<=", "≤"))
                                for g in cell.gate) + " |"
                change = ""
                if against:
                    c = cell.change
                    sig = {True: "**significant**", False: "not significant", None: "no test"}
                    change = f" {md_text(c.text)} ({sig[c.significant]}) |" if c is not None else " |"
                lines.append(f"| {suite} | {name} | {md_text(cell.group)} | {cell.value_text} {cell.ci_text} | "
                             f"{cell.n} |{f' {gate}' if gated else ''} {judge} |{change}")
                suite = name = judge = ""
    lines += ["", "↑↓: which way is better. SCREEN: the judge's accuracy is not established (no validity card, or one "
                  "below the bar): for screening, not for reporting."]
    return lines


def causes_markdown(found: Sequence[RunCauses], limit: int = 3) -> list[str]:
    """Where each run fails most: its largest causes of wrong verdicts, one line each."""
    lines = ["### Where it fails most", ""]
    for rc in found:
        head = f"- **{md_text(rc.suite)}** `{rc.run_id}`"
        if not rc.causes:
            lines.append(head + (": no failed verdict" if rc.judged else ": no per-trial verdicts"))
            continue
        lines.append(f"{head}: {rc.failed} of {rc.trials} trials failed a verdict")
        for c in rc.causes[:limit]:
            where = ", ".join(f"{g} {n}" for g, n in c.groups[:2])
            was = f" (baseline: {c.baseline_trials})" if c.baseline_trials is not None else ""
            lines.append(f"  - {c.trials} trials{was}: {md_text(c.cause, 200)} ({md_text(', '.join(c.metrics))}; most "
                         f"in {md_text(where)}; e.g. {md_text(c.example, 100)})")
    return lines
