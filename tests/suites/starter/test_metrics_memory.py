"""The starter suite's metrics go over a finished run twice (its own metrics, then the injection metrics): they
read the run's snapshot again rather than hold every trial record in a list, so the metrics phase does not grow
with the run."""

from __future__ import annotations

import gc
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

import knowgap
from knowgap.engine.records import MetricValue, TrialRecord
from knowgap.suites.starter import injection
from tests.fakes.models import Fixed


def test_metrics_hold_no_list_of_the_runs_records(runs_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alive: list[int] = []
    original = injection.injection_metrics

    def counting(records: Iterable[TrialRecord], *args: Any, **kwargs: Any) -> list[MetricValue]:
        gc.collect()  # between the two passes: what the first one left alive
        alive.append(sum(isinstance(o, TrialRecord) for o in gc.get_objects()))
        return original(records, *args, **kwargs)

    monkeypatch.setattr(injection, "injection_metrics", counting)
    result = knowgap.run("starter", models={"target": Fixed.spec}, providers={Fixed.spec: Fixed("I don't know.")},
                         runs_root=runs_root, repeats=10, progress=False)
    trials = result.manifest.trials_ok
    assert trials >= 300 and result.manifest.trials_error == 0
    assert len(alive) == 1 and alive[0] < trials // 10, f"{alive} of {trials} trial records alive between passes"
    # the metrics are those of the records the store holds
    assert {m.value for m in result.metrics if m.name == "abstention_unanswerable"} == {1.0}
