"""Checks shared by the suites' verdict tests: the verdicts stored in a run's trials count to the k of n its
metrics report, and a run read as if recorded before verdicts existed derives the same ones."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import knowgap
from knowgap.engine.verdicts import hits
from knowgap.report import load_run_data


def assert_verdicts_count_as_metrics(result: knowgap.RunResult, runs_root: Path, lower_is_better: frozenset[str],
                                     names: set[str]) -> Counter[str]:
    """For every metric in ``names`` of every configuration group: (k, n) counted from the stored verdicts equals
    the metric's; the verdicts derived now from each record equal the stored ones. Returns the verdicts by kind."""
    records = list(knowgap.iter_trials(result.run_id, runs_root))
    configs = {r.config_id for r in records}
    checked = set()
    for m in result.metrics:
        if m.name not in names or m.group not in configs:
            continue
        k, n = hits(records, m.name, lower_is_better=m.name in lower_is_better, config_id=m.group)
        assert (k, n) == (round((m.value or 0.0) * m.n), m.n), (m.group, m.name, k, n, m.value, m.n)
        checked.add(m.name)
    assert checked == names, names - checked
    run = load_run_data(result.path)
    assert run.suite is not None
    for r in records:
        assert run.suite.verdicts(r) == r.verdicts, r.trial_id
    return Counter(v.verdict for r in records for v in r.verdicts)
