"""The report commands: ``knowgap report``, ``knowgap compare``, ``knowgap gate`` (thin over the functions
of :mod:`knowgap.report`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from knowgap.command_groups import CommandGroups

out = Console(width=None if sys.stdout.isatty() else 160)
RunsDir = Annotated[str | None, typer.Option(help="Where runs are stored (default ./runs).")]


def register(app: typer.Typer, groups: CommandGroups) -> None:
    @app.command()
    def report(runs: Annotated[list[str], typer.Argument(help="Run ids or folders (several: one combined report).")],
               html: Annotated[bool, typer.Option("--html", help="Self-contained HTML (the default).")] = False,
               md: Annotated[bool, typer.Option("--md", help="Markdown summary for a pull-request comment.")] = False,
               csv: Annotated[bool, typer.Option("--csv", help="Every trial as CSV.")] = False,
               parquet: Annotated[bool, typer.Option("--parquet", help="Every trial as Parquet (needs pyarrow).")]
               = False,
               inspect: Annotated[bool, typer.Option("--inspect", help="inspect_ai log (.eval) for inspect view "
                                                     "(needs knowgap[inspect]).")] = False,
               out_path: Annotated[str | None, typer.Option("--out", "-o", help="Output file (one format only; "
                                   "default: beside the run, or stdout for --md).")] = None,
               examples: Annotated[int, typer.Option(help="Worst examples per run.")] = 20,
               link_template: Annotated[str | None, typer.Option(
                   help="Link each example, e.g. into knowgap serve: "
                        "http://127.0.0.1:8765/#/run/{run_id}/{trial_id}")] = None,
               runs_dir: RunsDir = None) -> None:
        """Write a run's report: HTML (default), markdown summary, CSV or Parquet of all trials, inspect_ai log.

        Example: knowgap report RUN --csv --out trials.csv
        """
        from knowgap.errors import KnowgapError
        from knowgap.report import load_run_data, summary_markdown, write_csv, write_html, write_parquet

        formats = [f for f, on in (("html", html), ("md", md), ("csv", csv), ("parquet", parquet),
                                   ("inspect", inspect)) if on] or ["html"]
        if out_path and len(formats) > 1:
            raise KnowgapError("--out takes one format at a time")
        data = [load_run_data(r, runs_dir) for r in runs]
        single = data[0].path if len(data) == 1 else Path.cwd()
        defaults = {"html": "report.html" if len(data) == 1 else "knowgap-report.html",
                    "csv": "trials.csv", "parquet": "trials.parquet"}
        for fmt in formats:
            if fmt == "md":
                text = summary_markdown(data, examples=min(examples, 5))
                if out_path:
                    Path(out_path).write_text(text, encoding="utf-8")
                    out.print(f"markdown summary: {out_path}")
                else:
                    print(text, end="")
                continue
            if fmt == "inspect":
                from knowgap.report.inspect_log import write_inspect_log

                for run in data:
                    target = Path(out_path) if out_path and len(data) == 1 else run.path / f"{run.run_id}.eval"
                    write_inspect_log(run, target)
                    out.print(f"inspect log: {target.resolve()} (inspect view --log-dir {target.parent.resolve()})",
                              highlight=False)
                continue
            target = Path(out_path) if out_path else single / defaults[fmt]
            if fmt == "html":
                write_html(data, target, max_examples=examples, link_template=link_template)
            elif fmt == "csv":
                write_csv(data, target)
            else:
                write_parquet(data, target)
            out.print(f"{fmt}: {target.resolve()}", highlight=False)

    @app.command()
    def compare(run_a: Annotated[str, typer.Argument(help="Baseline run (id or folder).")],
                run_b: Annotated[str, typer.Argument(help="Candidate run (id or folder).")],
                runs_dir: RunsDir = None,
                md: Annotated[str | None, typer.Option("--md", help="Also write the comparison as markdown.")]
                = None,
                html: Annotated[str | None, typer.Option("--html", help="Also write an HTML page: the comparison "
                                                         "and both runs.")] = None,
                as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
                reps: Annotated[int, typer.Option(min=100, help="Bootstrap resamples.")] = 1000,
                seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
                flips: Annotated[int, typer.Option(help="Flipped trials to print.")] = 10,
                fail_on_regression: Annotated[bool, typer.Option(
                    help="Exit 1 when a group has significantly more regressed than fixed trials (McNemar, "
                         "counting clusters: a case with its repeats, or cases on one source).")]
                = False) -> None:
        """Per metric the change B - A, its 95% CI and significance (a bootstrap over cases, or the sources
        they share; paired case by case when the runs share cases), and the trials that flipped.

        Example: knowgap compare RUN_MAIN RUN_PR --md compare.md
        """
        from knowgap.report import compare_markdown, compare_runs, load_run_data

        data = [load_run_data(run_a, runs_dir), load_run_data(run_b, runs_dir)]
        result = compare_runs(data[0], data[1], reps=reps, seed=seed)
        if html:
            from knowgap.report.html import write_html

            write_html(data, Path(html), comparison=result, max_examples=5)
        if md:
            Path(md).write_text(compare_markdown(result) + "\n", encoding="utf-8")
        if as_json:
            print(json.dumps(result.model_dump(mode="json"), ensure_ascii=False, indent=2))
        else:
            _print_comparison(out, result, flips)
        if fail_on_regression and any(t.net_regressed > t.net_fixed and t.p_value < 0.05
                                      for t in result.mcnemar):
            raise typer.Exit(1)

    @app.command()
    def gate(runs: Annotated[list[str], typer.Argument(help="Run ids or folders.")],
             thresholds: Annotated[str, typer.Option("--thresholds", "-t", help="YAML file of thresholds.")],
             junit: Annotated[str | None, typer.Option("--junit", help="Write JUnit XML here.")] = None,
             md: Annotated[str | None, typer.Option("--md", help="Write the result as markdown here.")] = None,
             runs_dir: RunsDir = None) -> None:
        """Exit 0 when every threshold holds, 1 otherwise (also when the file lists none, unless it says
        allow_empty: true); optionally JUnit XML for CI.

        Example: knowgap gate RUN --thresholds gate.yaml --junit gate.xml
        """
        from knowgap.report import evaluate_gate, gate_markdown, load_run_data, write_junit
        from knowgap.report.gate import load_gate_file

        limits = load_gate_file(thresholds)
        result = evaluate_gate([load_run_data(r, runs_dir) for r in runs], limits.thresholds, source=thresholds,
                               allow_empty=limits.allow_empty)
        print_gate(out, result)
        if junit:
            write_junit(result, Path(junit))
            out.print(f"JUnit XML: {junit}", highlight=False)
        if md:
            Path(md).write_text(gate_markdown(result) + "\n", encoding="utf-8")
        if not result.passed:
            raise typer.Exit(1)


def _print_comparison(out: Console, c: object, flips: int) -> None:
    from knowgap.report.compare import Comparison
    from knowgap.report.summary import format_metric_value

    assert isinstance(c, Comparison)
    table = Table(title=f"{c.run_a} → {c.run_b}", title_justify="left", caption=c.method, caption_justify="left")
    for col in ("group", "metric", "A", "B", "change", "95% CI", "p", "significant"):
        table.add_column(col, justify="right" if col in ("A", "B", "change", "p") else "left")
    for ch in c.changes:
        scale = 100 if ch.kind == "proportion" else 1
        unit = " pp" if ch.kind == "proportion" else ""
        delta = f"{ch.delta * scale:+.1f}{unit}" if ch.delta is not None else "n/a"
        ci = (f"[{ch.ci_low * scale:+.1f}, {ch.ci_high * scale:+.1f}]{unit}"
              if ch.ci_low is not None and ch.ci_high is not None else "")
        sig = {True: "[bold red]yes[/bold red]", False: "no", None: "-"}[ch.significant]
        table.add_row(ch.group, ch.name + (" †" if ch.judge_changed else ""), format_metric_value(ch.a, ch.kind),
                      format_metric_value(ch.b, ch.kind), delta, ci,
                      f"{ch.p_value:.3g}" if ch.p_value is not None else "", sig)
    if c.changes:
        out.print(table)
    else:
        out.print("the runs have no metric (group, name) in common", highlight=False)
    for note in c.judge_notes():
        out.print(f"† {note}", style="yellow", markup=False, highlight=False)
    for note in c.screen_notes():
        out.print(note, style="yellow", markup=False, highlight=False, soft_wrap=True)
    for note in c.dataset_notes:
        out.print(note, style="yellow", markup=False, highlight=False, soft_wrap=True)
    for t in c.mcnemar:
        out.print(f"{t.group}: {t.text()}",
                  markup=False, highlight=False)
    if c.flips:
        out.print(f"{len(c.flips)} flipped trials" + (f" (first {flips})" if len(c.flips) > flips else "") + ":")
        for f in c.flips[:flips]:
            out.print(f"  {f.direction:9} {f.trial_id}: {f.response_a[:70]!r} -> {f.response_b[:70]!r}",
                      markup=False, highlight=False)
    elif c.paired_trials:
        out.print(f"no flipped trials among {c.paired_trials} matched")
    else:
        out.print("no trials match by id: unpaired comparison")


def print_gate(out: Console, result: object) -> None:
    """Each threshold check (PASS / FAIL) and the verdict."""
    from knowgap.report.gate import GateResult

    assert isinstance(result, GateResult)
    for c in result.checks:
        mark = "[green]PASS[/green]" if c.passed else "[red]FAIL[/red]"
        out.print(f"{mark} ", end="")
        out.print(f"{c.suite} {c.run_id}: {c.threshold}: {c.message}", markup=False, highlight=False)
    if not result.checks:
        out.print("no thresholds (allow_empty: true)", highlight=False)
    verdict = "[green]gate passed[/green]" if result.passed else \
        f"[red]gate failed: {len(result.failures)} of {len(result.checks)} checks[/red]"
    out.print(verdict)
