"""Every suite test also checks that each metric name a suite produced is one the suite declares
(``Suite.metric_names``), so the declaration eval files are validated against cannot drift from the code."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from knowgap.engine.records import MetricValue, TrialRecord
from knowgap.suites import available


@pytest.fixture(autouse=True)
def produced_metrics_are_declared(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """Records (suite, metric name) of every ``metrics()`` call in the test; fails the test on an undeclared one."""
    produced: list[tuple[str, str]] = []
    for cls in available().values():
        def recording(self: Any, records: Iterable[TrialRecord], _original: Any = cls.metrics,
                      _name: str = cls.name) -> list[MetricValue]:
            out: list[MetricValue] = _original(self, records)
            produced.extend((_name, m.name) for m in out)
            return out

        monkeypatch.setattr(cls, "metrics", recording)
    yield produced
    suites = available()
    undeclared = sorted({(s, n) for s, n in produced if not suites[s].declares_metric(n)})
    assert not undeclared, f"metrics produced but not declared in the suite's metric_names: {undeclared}"
