"""What a module that adds commands receives: ``register(app, groups)`` with the command line's shared groups.

Every such module (``knowgap.report.commands``, ``knowgap.labels.commands``, ``knowgap.web.commands``,
``knowgap.evaluation.commands``, ``knowgap.suites.NAME.commands``) exposes ``register(app: typer.Typer,
groups: CommandGroups) -> None``: it adds top-level commands or groups to ``app`` and judges or generators to
``groups.judge`` / ``groups.generate``. It imports its heavy dependencies inside its commands, so
``knowgap --help`` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import typer


@dataclass(frozen=True)
class CommandGroups:
    judge: typer.Typer
    """``knowgap judge NAME FILE``: a judge over any JSONL file of responses."""
    generate: typer.Typer
    """``knowgap generate SUITE``: build a suite's dataset from sources."""
    run: Callable[..., Any]
    """``knowgap.run``, handed down by the command line: a command of a layer below the API (a suite's) runs a
    suite through it (extract's ``extract-matrix``), so no module below the API imports it."""
