"""What a run holds while it runs, counted rather than timed: its cases are freed once their trials have run
(before the metrics and the reports), and a model that answers without ever suspending does not leave one
scheduled timer per call in the event loop."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from knowgap.engine.records import MetricValue, RunConfig, TrialRecord
from knowgap.engine.runner import YIELD_EVERY, start_run
from knowgap.engine.suite import Case, Configuration, Suite, Trial, TrialContext, TrialResult
from knowgap.models.types import ChatRequest, Message
from tests.fakes.models import Fixed

TRIALS = 4 * YIELD_EVERY


class Counted(Suite):
    """Notes how many of its cases are alive when metrics() starts, and the most timers the loop held."""

    name: ClassVar[str] = "counted-unregistered"
    description: ClassVar[str] = "many cases, one configuration"
    made: ClassVar[list[weakref.ref[Case]]] = []
    alive_at_metrics: ClassVar[int | None] = None
    most_timers: ClassVar[int] = 0

    def cases(self) -> list[Case]:
        cases = [Case(id=f"c{i:05d}") for i in range(TRIALS)]
        Counted.made = [weakref.ref(c) for c in cases]
        return cases

    def configurations(self) -> list[Configuration]:
        return [Configuration(id="only")]

    async def run_trial(self, trial: Trial, ctx: TrialContext) -> TrialResult:
        await ctx.generate("target", ChatRequest(messages=[Message(role="user", content=trial.case.id)]))
        scheduled = getattr(asyncio.get_running_loop(), "_scheduled", [])  # CPython's heap of timers
        Counted.most_timers = max(Counted.most_timers, len(scheduled))
        return TrialResult(scores={"answered": True})

    def metrics(self, records: Iterable[TrialRecord]) -> list[MetricValue]:
        Counted.alive_at_metrics = sum(ref() is not None for ref in Counted.made)
        n = sum(1 for r in records if r.status == "ok")
        return [MetricValue.proportion("answered", "only", n, n)]


def test_cases_are_freed_before_metrics_and_timers_do_not_pile_up(runs_root: Path) -> None:
    result = start_run(RunConfig(suite=Counted.name, models={"target": Fixed.spec}, concurrency=2), Counted,
                       runs_root=runs_root, providers={Fixed.spec: Fixed("ok")}, progress=False)
    assert result.manifest.trials_ok == TRIALS and len(Counted.made) == TRIALS
    assert Counted.alive_at_metrics == 0
    # Fixed answers without suspending; each call's time-out is a timer the loop drops only when it runs
    assert 0 < Counted.most_timers <= 2 * YIELD_EVERY < TRIALS
