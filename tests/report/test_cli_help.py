"""Each report command explains itself with an example."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from knowgap.cli import app


@pytest.mark.parametrize(("command", "example"), [
    ("report", "Example: knowgap report RUN --csv --out trials.csv"),
    ("compare", "Example: knowgap compare RUN_MAIN RUN_PR --md compare.md"),
    ("gate", "Example: knowgap gate RUN --thresholds gate.yaml --junit gate.xml"),
    ("eval", "Example: knowgap eval knowgap.yaml --runs-dir runs"),
])
def test_help_has_an_example(command: str, example: str) -> None:
    result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert example in " ".join(result.output.split())
