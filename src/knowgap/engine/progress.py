"""Progress display: a rich bar with rate and ETA on a terminal, a line every 10% elsewhere (CI logs)."""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text


class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        if not speed:
            return Text("  -- trials/s", style="progress.data.speed")
        unit = f"{speed:.1f} trials/s" if speed >= 1 else f"{60 * speed:.1f} trials/min"
        return Text(unit, style="progress.data.speed")


class TrialProgress:
    def __init__(self, description: str, total: int, done: int = 0, *, enabled: bool = True,
                 console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.total, self.done, self.enabled = total, done, enabled
        self.description = description
        self.live = enabled and self.console.is_terminal
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._start = time.monotonic()
        self._next_report = 0.1
        self.errors = 0

    def __enter__(self) -> TrialProgress:
        if self.live:
            self._progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      _RateColumn(), TextColumn("errors: {task.fields[errors]}"),
                                      TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                      console=self.console, transient=False)
            self._progress.__enter__()
            self._task = self._progress.add_task(self.description, total=self.total, completed=self.done,
                                                 errors=0)
        elif self.enabled:
            self.console.print(f"{self.description}: {self.done}/{self.total} trials done, running the rest")
        return self

    def advance(self, error: bool = False) -> None:
        self.done += 1
        self.errors += int(error)
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=1, errors=self.errors)
        elif self.enabled and self.total and self.done / self.total >= self._next_report:
            elapsed = time.monotonic() - self._start
            self.console.print(f"{self.description}: {self.done}/{self.total} trials "
                               f"({self.errors} errors, {elapsed:.0f}s)")
            while self._next_report <= self.done / self.total:
                self._next_report += 0.1

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.__exit__(exc_type, exc, tb)
