"""What a module that adds commands receives: ``register(app, groups)`` with the command line's shared groups; and
the groups ``knowgap --help`` lists the top-level commands in.

Every such module (``knowgap.report.commands``, ``knowgap.labels.commands``, ``knowgap.web.commands``,
``knowgap.evaluation.commands``, ``knowgap.suites.NAME.commands``) exposes ``register(app: typer.Typer,
groups: CommandGroups) -> None``: it adds top-level commands or groups to ``app`` and judges or generators to
``groups.judge`` / ``groups.generate``. It imports its heavy dependencies inside its commands, so
``knowgap --help`` stays fast. A new top-level command also gets its place in :data:`HELP_GROUPS` (a test fails
until it has one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

HELP_GROUPS: dict[str, tuple[str, ...]] = {
    "Run and inspect": ("run", "demo", "runs", "show", "resume", "suites", "extract-matrix"),
    "Reports and CI": ("report", "compare", "gate", "eval", "ci", "serve", "plan"),
    "Data": ("data", "generate", "partial"),
    "Judges and labels": ("judges", "judge", "label", "clarify", "abstain"),
    "Admin": ("models", "cache", "repair", "version"),
}
"""The top-level commands by group, as a user meets them: the help lists the groups and their commands in this
order (``partial``: its scenarios' evidence; ``clarify``: review queue and judge thresholds; ``abstain``: the
paper's table of judges)."""
OTHER = "More commands"
"""The group of a top-level command :data:`HELP_GROUPS` does not name (a plugin's), listed last."""


def help_group(name: str) -> str:
    """The help group of top-level command ``name``."""
    return next((group for group, names in HELP_GROUPS.items() if name in names), OTHER)


class GroupedCommands(TyperGroup):
    """The top level of ``knowgap``: its help lists the commands group by group (:data:`HELP_GROUPS`, each a rich
    help panel), not in the order the modules registered them."""

    def list_commands(self, ctx: Any) -> list[str]:  # typer vendors click's Context
        order = [name for names in HELP_GROUPS.values() for name in names]
        return sorted(super().list_commands(ctx), key=lambda n: order.index(n) if n in order else len(order))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if isinstance(command, TyperCommand | TyperGroup):
            command.rich_help_panel = help_group(cmd_name)
        return command


@dataclass(frozen=True)
class CommandGroups:
    judge: typer.Typer
    """``knowgap judge NAME FILE``: a judge over any JSONL file of responses."""
    generate: typer.Typer
    """``knowgap generate SUITE``: build a suite's dataset from sources."""
    run: Callable[..., Any]
    """``knowgap.run``, handed down by the command line: a command of a layer below the API (a suite's) runs a
    suite through it (extract's ``extract-matrix``), so no module below the API imports it."""
