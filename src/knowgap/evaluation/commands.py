"""CLI: ``knowgap eval FILE.yaml`` (a whole evaluation from one file). Thin over
:mod:`knowgap.evaluation.eval_file`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from knowgap.command_groups import CommandGroups
from knowgap.report.commands import RunsDir, out, print_gate


def eval_command(file: Annotated[str | None, typer.Argument(help="Evaluation YAML file.")] = None,
                 schema: Annotated[bool, typer.Option("--schema", help="Print the file's JSON Schema.")] = False,
                 check: Annotated[bool, typer.Option("--check", help="Only validate the file: suites, options, roles, "
                                                           "and that each threshold's metric and group can exist "
                                                           "under the options given. No model is called.")] = False,
                 runs_dir: RunsDir = None,
                 out_dir: Annotated[str | None, typer.Option(help="Where the reports go (default: the runs "
                                                                  "folder).")] = None,
                 quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
                 otel: Annotated[bool, typer.Option("--otel", help="Export each run's spans to an OpenTelemetry "
                                                                   "collector, as knowgap run --otel (or the file's "
                                                                   "otel: true).")] = False,
                 otel_content: Annotated[bool, typer.Option("--otel-content", help="With --otel: the prompts, "
                                                                                   "answers and verdict reasons "
                                                                                   "too.")] = False) -> None:
    """Run a whole evaluation from one YAML file: every suite, one combined report, the thresholds.

    Exit codes: 0 every trial ok and every threshold holds; 1 a threshold fails; 3 a trial errored (the
    causes are printed; it wins over 1: the gate then judged incomplete numbers); 2 bad input.

    Example: knowgap eval knowgap.yaml --runs-dir runs
    """
    from knowgap.engine.outcome import EXIT_TRIAL_ERRORS, error_report
    from knowgap.errors import KnowgapError
    from knowgap.evaluation.eval_file import load_eval, run_eval, schema_json

    if schema:
        print(schema_json())
        return
    if file is None:
        raise KnowgapError("give an evaluation file (or --schema)")
    if check:
        config, _ = load_eval(file)
        out.print(f"{file}: valid ({len(config.suites)} suites, {len(config.thresholds)} thresholds)",
                  highlight=False)
        return
    result = run_eval(file, runs_root=runs_dir, out_dir=out_dir, progress=not quiet, otel=otel,
                      otel_content=otel_content)
    for label, run in result.runs:
        out.print(f"{label}: {run.manifest.trials_ok} ok / {run.manifest.trials_error} errors, run {run.path}",
                  markup=False, highlight=False)
    if result.gate is not None:
        print_gate(out, result.gate)
    for kind, path in result.outputs.items():
        out.print(f"{kind}: {path.resolve()}", markup=False, highlight=False)
    errored = [run for _, run in result.runs if not run.ok]
    err = Console(stderr=True, width=out.width)
    for run in errored:
        for line in error_report(run.manifest):
            err.print(f"{run.run_id}: {line}" if not line.startswith(" ") else line, markup=False,
                      highlight=False, soft_wrap=True)
    if errored:
        raise typer.Exit(EXIT_TRIAL_ERRORS)
    if not result.passed:
        raise typer.Exit(1)


def register(app: typer.Typer, groups: CommandGroups) -> None:
    app.command("eval")(eval_command)
