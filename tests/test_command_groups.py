"""``knowgap --help`` lists the commands group by group, as a user meets them (run and inspect, reports and CI, data,
judges and labels, admin), each registered command exactly once: a new command without a group fails here. The
README's list of the groups is the same."""

from __future__ import annotations

import re
from collections import Counter

import typer
from typer.testing import CliRunner

from knowgap.cli import app
from knowgap.command_groups import HELP_GROUPS
from tests.helpers import REPO

PANEL = re.compile(r"^╭─ (.+?) ─")
ROW = re.compile(r"^│ ([a-z][\w-]*) ")


def _panels(output: str) -> list[tuple[str, list[str]]]:
    """The help's panels in order: (title, the names its rows start with)."""
    panels: list[tuple[str, list[str]]] = []
    for line in output.splitlines():
        if found := PANEL.match(line):
            panels.append((found.group(1), []))
        elif (row := ROW.match(line)) and panels:
            panels[-1][1].append(row.group(1))
    return panels


def test_help_lists_every_command_once_in_its_group() -> None:
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    panels = _panels(result.output)
    assert [title for title, _ in panels] == ["Options", *HELP_GROUPS]  # no group for leftovers
    registered = {name for name, command in typer.main.get_command(app).commands.items()  # type: ignore[attr-defined]
                  if not command.hidden}
    listed = [name for title, names in panels[1:] for name in names]
    assert Counter(listed) == Counter(registered)  # each registered command exactly once
    for title, names in panels[1:]:
        assert names == list(HELP_GROUPS[title])  # in the group's order
    assert panels[1][1][0] == "run"


def test_the_readme_lists_the_same_groups() -> None:
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    groups = ", ".join(f"**{title[0].lower()}{title[1:]}** ({', '.join(f'`{n}`' for n in names)})"
                       for title, names in HELP_GROUPS.items())
    assert f"`knowgap --help` lists the commands in five groups, as you meet them: {groups}." in readme
