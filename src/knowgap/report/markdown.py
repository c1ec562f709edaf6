"""A markdown report of one run: what ran, on which models, and every metric with its 95% CI."""

from __future__ import annotations

from pathlib import Path

from knowgap.engine.outcome import error_report, status_text
from knowgap.engine.records import Manifest, MetricValue
from knowgap.engine.store import write_atomic
from knowgap.errors import KnowgapError
from knowgap.redaction import redact
from knowgap.report.injection import RunMetrics, injection_markdown
from knowgap.report.judging import OLD_RUN, Judgements, card_summary
from knowgap.suites.dataset_cards import reference_data_line

REPORT = "report.md"


def format_metric(m: MetricValue) -> tuple[str, str]:
    """(value, 95% CI) as text."""
    if m.value is None:
        return ("n/a", "")
    if m.kind == "count":
        return (f"{m.value:.0f}", "")
    value = f"{m.value:.1%}" if m.kind == "proportion" else f"{m.value:.3f}"
    if m.ci_low is None or m.ci_high is None:
        return (value, "")
    if m.kind == "proportion":
        return (value, f"[{m.ci_low:.1%}, {m.ci_high:.1%}]")
    return (value, f"[{m.ci_low:.3f}, {m.ci_high:.3f}]")


METRICS_COLUMNS = ("group", "metric", "value", "95% CI", "n cases / trials", "corrected (95% CI)", "judge")
"""The columns of :func:`metrics_table_rows`; ``n cases / trials``: the clusters the interval counts and the
trials behind the value (one number when they are equal, and for counts); ``corrected``: the rate corrected for
the judge (Rogan-Gladen)."""


def metrics_table_rows(metrics: list[MetricValue], manifest: Manifest, *,
                       reasons: bool = True) -> list[tuple[str, ...]]:
    """One row per metric (:data:`METRICS_COLUMNS`): the number, and the judge that decided it with its card's
    balanced accuracy, ``SCREEN`` (and why, unless ``reasons`` is off), or ``computed``."""
    rows: list[tuple[str, ...]] = []
    judged = Judgements.for_run(manifest)
    for m in metrics:
        value, ci = format_metric(m)
        j = judged.of(m)
        rows.append((m.group, m.name, value, ci, m.n_text(), j.corrected_text(), j.cell(reason=reasons)))
    return rows


def judges_markdown(manifest: Manifest) -> list[str]:
    """The "Judges" section: each judge of the run with its validity card (or that it has none)."""
    lines = ["## Judges", ""]
    if manifest.metric_judges is None:
        return [*lines, f"Judges unknown: {OLD_RUN}.", ""]
    judged = Judgements.for_run(manifest)
    found = judged.judges()
    if not found:
        return [*lines, "No judge decided any metric of this run: every metric is computed.", ""]
    for judge, card, names in found:
        model = f" on `{judge.judge_model}`" if judge.judge_model else ""
        what = card_summary(card) if card is not None else "**no validity card**: every metric it decides is a SCREEN"
        a = judged.assessment(judge)
        status = f"**SCREEN** ({a.reason}) · " if card is not None and a.status == "screen" else ""
        lines.append(f"- **{judge.judge}** `{judge.version}`{model} ({', '.join(names)}): {status}{what}")
    return [*lines, ""]


def suite_tables(suite: str, metrics: list[MetricValue]) -> str | None:
    """The suite's own markdown layout of its metrics (``Suite.render_tables``); None when it has none or is
    not installed (or its plugin cannot be loaded now). Only that suite is imported."""
    from knowgap.suites import get_suite

    try:
        suite_cls = get_suite(suite)
    except KnowgapError:  # not installed, or a plugin that no longer loads: the report goes without its layout
        return None
    return suite_cls.render_tables(metrics)


def scorecard_lines(manifest: Manifest, metrics: list[MetricValue]) -> list[str]:
    """The run's scorecard (its suite's headline metrics; :mod:`knowgap.report.scorecard`), first in report.md."""
    from knowgap.report.data import RunData
    from knowgap.report.scorecard import scorecard
    from knowgap.report.scorecard_markdown import scorecard_markdown

    run = RunData(path=Path("."), manifest=manifest, metrics=metrics, records=[])
    return [*scorecard_markdown(scorecard([run]), level=2), ""]


def render_markdown(manifest: Manifest, metrics: list[MetricValue]) -> str:
    cfg = manifest.config
    lines = [f"# knowgap run {manifest.run_id}", "",
             f"- suite: `{cfg.suite}`  options: `{cfg.options or {}}`  repeats: {cfg.repeats}  seed: {cfg.seed}",
             f"- status: {status_text(manifest)}; trials: {manifest.trials_ok} ok, {manifest.trials_error} errors "
             f"of {manifest.trials_total}",
             f"- started {manifest.started_at}, ended {manifest.ended_at or '-'}; knowgap {manifest.knowgap_version}"
             + (f" (git {manifest.git_commit[:10]})" if manifest.git_commit else "")]
    problem = error_report(manifest)
    if problem:
        lines[2:2] = ["> **" + problem[0] + "**", ">"] + [f"> - {line.strip()}" for line in problem[1:]] + [""]
    if manifest.judges:
        lines.append("- judges: " + ", ".join(f"{name} `{version}`" for name, version in manifest.judges.items()))
    lines.append("- " + reference_data_line(cfg.suite, manifest.dataset_hashes, cfg.options))
    lines += ["", *scorecard_lines(manifest, metrics)]
    lines += ["## Models", "", "| role | model | calls | cached | retries | tokens in / out | cost |",
              "|---|---|---:|---:|---:|---:|---:|"]
    for role, spec in cfg.models.items():
        u = manifest.usage.get(role, {}).get(spec)
        if u is None:
            lines.append(f"| {role} | `{spec}` | 0 | 0 | 0 | 0 / 0 | - |")
            continue
        cost = f"${u.cost_usd:.4f}" if u.cost_usd is not None else "-"
        lines.append(f"| {role} | `{spec}` | {u.calls} | {u.cached_calls} | {u.retries} | "
                     f"{u.prompt_tokens} / {u.completion_tokens} | {cost} |")
    lines += ["", "## Metrics (95% confidence intervals)", "",
              "A SCREEN comes from a judge without a validity card, a card below balanced accuracy 0.80, one not "
              "measured on real replies of at least two models, or one that holds no items in the run's language "
              "(`no card for zh`): for screening, not for reporting. `corrected`: the rate corrected for the "
              "judge's sensitivity and specificity (Rogan-Gladen).", "",
              "| " + " | ".join(METRICS_COLUMNS) + " |", "|---|---|---:|---|---:|---|---|"]
    for row in metrics_table_rows(metrics, manifest):
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
    if manifest.sequential is not None:  # --until: each sequence beside the fixed-n interval
        from knowgap.report.sequential import sequential_markdown
        lines += ["", *sequential_markdown(manifest, metrics)]
    tables = suite_tables(cfg.suite, metrics)
    if tables is not None:
        lines += ["", tables]
    injected = injection_markdown([RunMetrics(cfg.suite, manifest.run_id, metrics)])
    if injected:
        lines += ["", *injected]
    described = {m.name: m.description for m in metrics if m.description}
    if described:
        lines += ["", "Metric definitions:", ""] + [f"- **{k}**: {v}" for k, v in described.items()]
    lines += ["", *judges_markdown(manifest)]
    return "\n".join(lines).rstrip("\n") + "\n"


def write_report(run_path: Path, manifest: Manifest, metrics: list[MetricValue]) -> Path:
    path = run_path / REPORT
    write_atomic(path, redact(render_markdown(manifest, metrics)))
    return path
