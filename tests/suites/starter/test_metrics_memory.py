"""The starter suite's metrics, the injection driver's too, are counted in one pass over a finished run: the run's
snapshot is read as a stream rather than held as a list of trial records, so the metrics phase does not grow with
the run."""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

import knowgap
from knowgap.engine.records import MetricValue, TrialRecord
from knowgap.suites.starter import suite as starter_suite
from tests.fakes.models import Fixed


def test_metrics_hold_no_list_of_the_runs_records(runs_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alive: list[int] = []
    original = starter_suite.count_metrics

    def counting(records: Iterable[TrialRecord], *args: Any, **kwargs: Any) -> list[MetricValue]:
        def read() -> Iterator[TrialRecord]:
            yield from records
            gc.collect()  # at the end of the pass: what it kept alive
            alive.append(sum(isinstance(o, TrialRecord) for o in gc.get_objects()))

        return original(read(), *args, **kwargs)

    monkeypatch.setattr(starter_suite, "count_metrics", counting)
    result = knowgap.run("starter", models={"target": Fixed.spec}, providers={Fixed.spec: Fixed("I don't know.")},
                         runs_root=runs_root, repeats=10, progress=False)
    trials = result.manifest.trials_ok
    assert trials >= 300 and result.manifest.trials_error == 0
    assert len(alive) == 1 and alive[0] < trials // 10, f"{alive} of {trials} trial records alive after the pass"
    # the metrics are those of the records the store holds
    assert {m.value for m in result.metrics if m.name == "abstention_unanswerable"} == {1.0}
