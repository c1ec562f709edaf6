"""The garbage collector's first threshold is raised while trials execute and put back afterwards; a run makes a
fraction of the collector passes it made at CPython's default."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from knowgap.engine.collector import RUN_THRESHOLD, fewer_collections
from knowgap.engine.records import MetricValue, RunConfig, TrialRecord
from knowgap.engine.runner import start_run
from knowgap.engine.suite import Case, Configuration, Suite, Trial, TrialContext, TrialResult
from knowgap.models.types import ChatRequest, Message
from tests.fakes.models import Fixed

TRIALS = 1500


@pytest.fixture(autouse=True)
def default_collector() -> Iterator[None]:
    saved, enabled = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(700, 10, 10)
    gc.enable()
    yield
    gc.set_threshold(*saved)
    if not enabled:
        gc.disable()


class Passes:
    """Counts the collector's passes while on."""

    def __init__(self) -> None:
        self.count = 0
        self.on = False

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start" and self.on:
            self.count += 1


class Watched(Suite):
    """One call per trial; notes the threshold seen inside trials and counts the passes between first and last."""

    name: ClassVar[str] = "collector-watched-unregistered"
    description: ClassVar[str] = "many cases, one configuration"
    thresholds: ClassVar[set[int]] = set()
    passes: ClassVar[Passes] = Passes()

    def cases(self) -> list[Case]:
        return [Case(id=f"c{i:05d}") for i in range(TRIALS)]

    def configurations(self) -> list[Configuration]:
        return [Configuration(id="only")]

    async def run_trial(self, trial: Trial, ctx: TrialContext) -> TrialResult:
        Watched.passes.on = True
        Watched.thresholds.add(gc.get_threshold()[0])
        await ctx.generate("target", ChatRequest(messages=[Message(role="user", content=trial.case.id)]))
        return TrialResult(scores={"answered": True})

    def metrics(self, records: Iterable[TrialRecord]) -> list[MetricValue]:
        Watched.passes.on = False
        n = sum(1 for r in records if r.status == "ok")
        return [MetricValue.proportion("answered", "only", n, n)]


def test_a_run_raises_the_threshold_while_trials_run_and_puts_it_back(runs_root: Path) -> None:
    Watched.thresholds, Watched.passes = set(), Passes()
    gc.callbacks.append(Watched.passes)
    try:
        result = start_run(RunConfig(suite=Watched.name, models={"target": Fixed.spec}, concurrency=8), Watched,
                           runs_root=runs_root, providers={Fixed.spec: Fixed("ok")}, progress=False)
    finally:
        gc.callbacks.remove(Watched.passes)
    assert result.manifest.trials_ok == TRIALS
    assert Watched.thresholds == {RUN_THRESHOLD}
    assert gc.get_threshold() == (700, 10, 10)
    # at CPython's 700 this run made 23 passes (the objects trials keep alive for a while outnumber the ones
    # they free by about 700 every 65 trials); at RUN_THRESHOLD one or two
    assert Watched.passes.count <= 5


def test_nested_and_concurrent_blocks_share_one_raise() -> None:
    entered, leave = threading.Event(), threading.Event()

    def other_run() -> None:
        with fewer_collections():
            entered.set()
            leave.wait(10)

    with fewer_collections():
        assert gc.get_threshold()[0] == RUN_THRESHOLD
        thread = threading.Thread(target=other_run)
        thread.start()
        assert entered.wait(10)
    assert gc.get_threshold()[0] == RUN_THRESHOLD  # the other run still executes
    leave.set()
    thread.join(10)
    assert gc.get_threshold() == (700, 10, 10)


def test_a_failing_block_puts_the_threshold_back() -> None:
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("trial loop failed")
    assert gc.get_threshold() == (700, 10, 10)


def test_a_collector_that_is_off_or_already_lazier_is_left_alone() -> None:
    gc.set_threshold(50_000, 10, 10)
    with fewer_collections():
        assert gc.get_threshold() == (50_000, 10, 10)
    assert gc.get_threshold() == (50_000, 10, 10)
    gc.set_threshold(700, 10, 10)
    gc.disable()
    with fewer_collections():
        assert gc.get_threshold() == (700, 10, 10) and not gc.isenabled()
    gc.enable()
