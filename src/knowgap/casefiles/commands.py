"""CLI: ``knowgap data schema SUITE`` and ``knowgap data check SUITE FILE``. Thin over :mod:`knowgap.casefiles`.

``data_app`` is the ``knowgap data`` group: other modules of this package add their commands to it
(``import`` / ``inject``)."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console

from knowgap.command_groups import CommandGroups

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

data_app = typer.Typer(no_args_is_help=True, help="Case files you bring: their format (schema), a strict check "
                                                   "without running anything, import from a spreadsheet, injected "
                                                   "cases.")

SuiteArg = Annotated[str, typer.Argument(help="The suite whose case format to use (knowgap suites).")]
ScenarioOpt = Annotated[str | None, typer.Option(
    help="Another kind of case file the suite reads, by name. abstain: a --scenario question file (unknowable, "
         "false-premise, unanswerable-context): knowgap's JSONL, or SelfAware JSON / FalseQA CSV / SQuAD 2.0 JSON.")]


@data_app.command("schema")
def schema_command(suite: SuiteArg, scenario: ScenarioOpt = None) -> None:
    """Print the JSON Schema of one line of SUITE's case file (JSONL: one JSON object per line).

    Fields, types and allowed values; docs/SUITE.md shows one full example of each kind of case.

    Example: knowgap data schema extract

    Example: knowgap data schema abstain --scenario false-premise
    """
    from knowgap.casefiles.schema import case_schema

    print(json.dumps(case_schema(suite, scenario), indent=2, ensure_ascii=False))


@data_app.command("check")
def check_command(suite: SuiteArg,
                  file: Annotated[str, typer.Argument(help="The case file (JSONL) to check.")],
                  scenario: ScenarioOpt = None) -> None:
    """Check FILE strictly as SUITE's case file, without running anything.

    The same check as knowgap run SUITE --data FILE (abstain: --kb FILE, a .jsonl, .json or .csv knowledge base).

    Refused, each problem on its own line (file, line, field): an unknown field (with a did-you-mean);
    a value of the wrong type ("true" for a boolean, "3" for a number: nothing is coerced); a missing field;
    a duplicate id; a CSV, Excel or JSON-array file where JSONL is expected; the suite's own rules.
    Blank lines are fine.

    Exit codes: 0 the file is fine ("N cases OK (kinds...)"); 1 it has problems (up to 20 listed, then how many
    more); 2 an unknown suite.

    Example: knowgap data check extract my_reviews.jsonl

    Example: knowgap data check abstain falseqa/test.csv --scenario false-premise
    """
    from knowgap.casefiles.strict import check
    from knowgap.strictjsonl import format_problems

    result = check(suite, file, scenario)
    if result.problems:
        err.print(format_problems(result.problems), markup=False)
        err.print(f"{len(result.problems)} problem{'s' if len(result.problems) != 1 else ''} in {file}",
                  markup=False)
        raise typer.Exit(1)
    out.print(result.summary(), markup=False)


def register(app: typer.Typer, groups: CommandGroups) -> None:
    from knowgap.casefiles.io_commands import add_commands

    add_commands(data_app)
    app.add_typer(data_app, name="data")
