"""Who writes a run's reports: the engine runs the suite class it is given and writes none of them;
``knowgap.run`` and ``knowgap.resume`` write report.md and report.html when a run ends (also with errored
trials), and an interrupted run keeps only what it wrote before."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

import pytest

import knowgap
from knowgap.engine.records import MetricValue, RunConfig, TrialRecord
from knowgap.engine.runner import RunInterrupted, RunResult, start_run
from knowgap.engine.suite import Case, Configuration, Suite, Trial, TrialContext, TrialResult
from knowgap.errors import KnowgapError
from knowgap.models.types import ChatRequest, Message
from tests.fakes.models import Echo, Failing

REPORTS = ("report.md", "report.html")


class Tiny(Suite):
    """A suite known to no registry: only the engine sees it."""

    name: ClassVar[str] = "tiny-unregistered"
    description: ClassVar[str] = "two cases, one configuration"

    def cases(self) -> list[Case]:
        return [Case(id="a"), Case(id="b")]

    def configurations(self) -> list[Configuration]:
        return [Configuration(id="only")]

    async def run_trial(self, trial: Trial, ctx: TrialContext) -> TrialResult:
        response = await ctx.generate("target", ChatRequest(messages=[Message(role="user", content=trial.case.id)]))
        echoed = response.text == f"echo: {trial.case.id}"
        return TrialResult(output={"response": response.text}, scores={"echoed": echoed})

    def metrics(self, records: Iterable[TrialRecord]) -> list[MetricValue]:
        done = [r for r in records if r.status == "ok"]
        return [MetricValue.proportion("echoed", "only", sum(bool(r.scores["echoed"]) for r in done), len(done))]


def _config(suite: str) -> RunConfig:
    return RunConfig(suite=suite, models={"target": Echo.spec})


def test_the_engine_runs_the_suite_class_it_is_given_and_writes_no_report(runs_root: Path) -> None:
    result = start_run(_config(Tiny.name), Tiny, runs_root=runs_root, providers={Echo.spec: Echo()}, progress=False)
    assert result.status == "finished" and result.manifest.trials_ok == 2
    assert [(m.name, m.value) for m in result.metrics] == [("echoed", 1.0)]
    assert json.loads((result.path / "metrics.json").read_text(encoding="utf-8"))
    assert not [name for name in REPORTS if (result.path / name).exists()]


def test_after_run_gets_the_finished_run_and_the_suite_with_its_options(runs_root: Path) -> None:
    seen: list[tuple[RunResult, Suite]] = []
    result = start_run(_config(Tiny.name), Tiny, runs_root=runs_root, providers={Echo.spec: Echo()},
                       progress=False, after_run=lambda r, s: seen.append((r, s)))
    [(given, suite)] = seen
    assert given is result and given.manifest.ended_at is not None
    assert isinstance(suite, Tiny) and suite.options.sample is None


def test_a_suite_class_that_is_not_the_runs_suite_is_refused(runs_root: Path) -> None:
    with pytest.raises(KnowgapError, match="the run is of suite 'starter' but was given suite 'tiny-unregistered'"):
        start_run(_config("starter"), Tiny, runs_root=runs_root, providers={Echo.spec: Echo()}, progress=False)
    assert not runs_root.exists() or not any(runs_root.iterdir())


def test_run_and_resume_write_both_reports(runs_root: Path) -> None:
    providers = {Echo.spec: Echo()}
    result = knowgap.run("starter", models={"target": Echo.spec}, providers=providers, options={"sample": 2},
                         runs_root=runs_root)
    assert all((result.path / name).exists() for name in REPORTS)
    for name in REPORTS:
        (result.path / name).unlink()
    resumed = knowgap.resume(result.run_id, runs_root=runs_root, providers=providers)
    assert resumed.provider_calls == 0
    assert f"# knowgap run {result.run_id}" in (result.path / "report.md").read_text(encoding="utf-8")
    assert result.run_id in (result.path / "report.html").read_text(encoding="utf-8")


def test_an_interrupted_run_writes_no_report(runs_root: Path) -> None:
    # Ctrl-C arrives while the first call is in flight (as the KeyboardInterrupt Python raises for it)
    interrupted = Failing(KeyboardInterrupt(), spec="test:ctrl-c")
    with pytest.raises(RunInterrupted, match="knowgap resume"):
        knowgap.run("starter", models={"target": interrupted.spec}, providers={interrupted.spec: interrupted},
                    options={"sample": 2}, runs_root=runs_root)
    [run_dir] = list(runs_root.iterdir())
    assert json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))["status"] == "interrupted"
    assert not [name for name in REPORTS if (run_dir / name).exists()]


class StoppedWhileCounting(Tiny):
    """Ctrl-C (or SIGTERM, which the command line hands to the same handler) arrives while the metrics are
    computed, after every trial is stored: a long judge pass is where a user gives up waiting."""

    name: ClassVar[str] = "tiny-stopped-while-counting"
    stop = True

    def metrics(self, records: Iterable[TrialRecord]) -> list[MetricValue]:
        if StoppedWhileCounting.stop:
            raise KeyboardInterrupt
        return super().metrics(records)


def test_a_stop_while_the_metrics_are_computed_leaves_an_interrupted_run_that_resumes_without_calls(
        runs_root: Path) -> None:
    echo = Echo()
    config = RunConfig(suite=StoppedWhileCounting.name, models={"target": Echo.spec})
    with pytest.raises(RunInterrupted, match="continue with knowgap resume"):
        start_run(config, StoppedWhileCounting, runs_root=runs_root, providers={Echo.spec: echo}, progress=False)
    (run,) = runs_root.iterdir()
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert (manifest["status"], manifest["trials_ok"]) == ("interrupted", 2)  # was left 'running'
    assert not (run / "metrics.json").exists()
    calls = echo.calls
    StoppedWhileCounting.stop = False
    result = start_run(config, StoppedWhileCounting, runs_root=runs_root, providers={Echo.spec: echo},
                       progress=False, resume=run.name)
    assert result.status == "finished" and echo.calls == calls  # the metrics now, no model called again
    assert [(m.name, m.value) for m in result.metrics] == [("echoed", 1.0)]
