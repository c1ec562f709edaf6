"""``knowgap plan SUITE``: cases needed to detect a difference, and whether repeats help (thin over
:func:`knowgap.report.plan.make_plan`)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from knowgap.command_groups import CommandGroups

out = Console(width=None if sys.stdout.isatty() else 160)


def register(app: typer.Typer, groups: CommandGroups) -> None:
    @app.command()
    def plan(suite: Annotated[str, typer.Argument(help="The suite to plan a comparison on.")],
             detect: Annotated[float, typer.Option(help="The difference in a proportion to detect, e.g. 0.05 "
                                                        "(5 percentage points).")],
             baseline_rate: Annotated[float | None, typer.Option(
                 help="The metric's rate under the first configuration (default: measured by --from-run, else "
                      "0.5, the worst case).")] = None,
             repeats: Annotated[int, typer.Option(help="Trials per case you mean to run (--repeats of knowgap run; "
                                                       "extract's --runs).")] = 1,
             from_run: Annotated[list[str] | None, typer.Option(
                 "--from-run", help="A stored run of the suite that measures the baseline rate, the ICC of repeated "
                                    "trials and (given twice: two models) the paired correlation. Repeatable (2).")]
             = None,
             metric: Annotated[str | None, typer.Option(help="The proportion metric of the run to plan for, e.g. "
                                                             "flip_rate.")] = None,
             group: Annotated[str | None, typer.Option(help="The metric's group (configuration) in the run.")] = None,
             versus: Annotated[str | None, typer.Option(
                 help="Another group of the same run: measures how the two configurations' verdicts on one case "
                      "agree (the paired design's discordance).")] = None,
             icc: Annotated[float | None, typer.Option(
                 help="Assume this within-case correlation of repeated trials instead of measuring it "
                      "(0: independent, 1: copies).")] = None,
             discordance: Annotated[float | None, typer.Option(
                 help="Assume this share of cases whose verdict differs between the two configurations "
                      "(paired design).")] = None,
             power: Annotated[float, typer.Option(help="The chance to detect the difference when it is real.")]
             = 0.8,
             alpha: Annotated[float, typer.Option(help="Two-sided significance level.")] = 0.05,
             data: Annotated[str | None, typer.Option(help="Count the cases of this JSONL file instead of the "
                                                           "shipped dataset.")] = None,
             runs_dir: Annotated[str | None, typer.Option(help="Where runs are stored (default ./runs).")] = None,
             as_json: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False) -> None:
        """How many cases it takes to detect a difference between two models or configurations, and whether repeats help at all.

        Two designs: paired (the same cases under both, McNemar's test; the usual one) and independent groups (other cases for each). Cases needed with one trial per case and with --repeats, the cases available, and a verdict in words. What no run measures is assumed, and the plan says what it assumed. Details: docs/plan.md.

        Example: knowgap plan extract --detect 0.10 --from-run RUN --metric flip_rate --repeats 3
        """  # noqa: E501 - one line per paragraph, so --help wraps it to the terminal
        from knowgap.report.plan import make_plan

        result = make_plan(suite, detect=detect, baseline_rate=baseline_rate, repeats=repeats, runs=from_run or [],
                           metric=metric, group=group, versus=versus, icc=icc, discordance=discordance, power=power,
                           alpha=alpha, data=data, runs_root=runs_dir)
        if as_json:
            out.print_json(result.model_dump_json())
            return
        what = f"{result.metric} ({result.group})" if result.metric else "a proportion"
        lines = [f"plan for {suite}: detect a difference of {result.detect:.2f} in {what}, two-sided alpha "
                 f"{result.alpha:g}, power {result.power:.0%}",
                 f"baseline rate {result.baseline_rate:.3f}: {result.baseline_source}",
                 f"within-case correlation of repeats (ICC) {result.icc:.2f}: {result.icc_source}",
                 f"paired discordance {result.discordance:.3f}: {result.discordance_source}",
                 f"available: {result.available_cases} cases ({result.available_source})"]
        for line in lines:
            out.print(line, markup=False, highlight=False, soft_wrap=True)
        table = Table(title_justify="left")
        table.add_column("design")
        table.add_column("cases, 1 trial each", justify="right")
        table.add_column(f"cases, {result.repeats} trial{'s' if result.repeats > 1 else ''} each", justify="right")
        table.add_column("smallest detectable with the available cases", justify="right")
        for d in (result.paired, result.independent):
            table.add_row(d.name, _number(d.cases_one_repeat), _number(d.cases_with_repeats),
                          f"{d.smallest_detectable:.2f} ({d.cases_available} cases)" if d.smallest_detectable
                          else f"none ({d.cases_available} cases)")
        out.print(table)
        for line in result.verdict:
            out.print(f"verdict: {line}", markup=False, highlight=False, soft_wrap=True)


def _number(n: int | None) -> str:
    return "unreachable" if n is None else str(n)
