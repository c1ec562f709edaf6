"""Every interval knowgap reports, recomputed from stored runs of every suite, equals the snapshot taken when
the numbers were last changed on purpose (:mod:`tests.stats.metric_identity`)."""

from __future__ import annotations

import json

import pytest

from tests.stats.metric_identity import SNAPSHOT, differences, measure


@pytest.mark.slow
def test_every_number_of_the_stored_runs_is_unchanged() -> None:
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    actual = json.loads(json.dumps(measure()))
    moved = differences(expected, actual)
    assert not moved, (f"{len(moved)} of {len(expected)} entries moved, e.g. "
                       + "; ".join(f"{k}: {a} -> {b}" for k, a, b in moved[:5])
                       + ". If that is intended, say by how much in the commit and run "
                         "`python -m tests.stats.metric_identity snapshot`")
    assert len(expected) > 10_000  # every suite's runs, subsets, compare, labels and judges are in it
