"""The injection table's noise floor says how it is made, on real stored runs: extract's from its clean re-runs
(``--runs``; not ``--repeats 2``), noted when measured at temperature 0, where a deterministic model makes it 0 by
construction; the other suites' from repeats 0 and 1 (``--repeats 2``)."""

from __future__ import annotations

from pathlib import Path

import knowgap
from knowgap.report.data import load_run_data
from knowgap.report.injection import (
    AT_ZERO,
    NO_FLOOR,
    NO_RERUN_FLOOR,
    READING,
    RunMetrics,
    attack_rows,
    injection_markdown,
)
from tests.report.injected_runs import RunCounter, extract_cases
from tests.suites.starter.test_injection import MARKER_FAMILIES, Ignorer


def _extract(tmp_path: Path, runs_root: Path, **options: object) -> RunMetrics:
    data, cases = extract_cases(tmp_path)
    target = RunCounter({c.injected_review or "" for c in cases})
    result = knowgap.run("extract", models={"target": target.spec}, providers={target.spec: target},
                         options={"data": str(data), "kinds": ["adversarial"], **options}, runs_root=runs_root,
                         use_cache=False)
    return RunMetrics.of(load_run_data(result.run_id, runs_root))


def test_the_floor_names_the_option_that_makes_it(tmp_path: Path, runs_root: Path) -> None:
    once = _extract(tmp_path, runs_root, runs=1)
    twice = _extract(tmp_path, runs_root, runs=2)
    warm = _extract(tmp_path, runs_root, runs=2, temperature=0.7)
    target = Ignorer()
    starter = knowgap.run("starter", models={"target": target.spec}, providers={target.spec: target},
                          options={"prompts": ["grounded"], "inject": True, "attack_families": MARKER_FAMILIES,
                                   "sample": 4}, runs_root=runs_root, use_cache=False)
    plain = RunMetrics.of(load_run_data(starter.run_id, runs_root))
    rows = {r.run_id: r for r in attack_rows([once, twice, warm, plain])}
    assert rows[once.run_id].noise_floor is None and rows[plain.run_id].noise_floor is None
    floor = rows[twice.run_id].noise_floor
    assert floor is not None and floor.value == 0.0 and floor.n == 2  # the clean re-runs agree: run 2 of 2 reviews
    lines = {line.split(" | ")[0].lstrip("| "): line for line in injection_markdown([once, twice, warm, plain])
             if line.startswith("| ") and "(" in line.split(" | ")[0]}
    by_run = {run_id: next(v for k, v in lines.items() if run_id in k) for run_id in rows}
    assert by_run[once.run_id].endswith(f"| {NO_RERUN_FLOOR} |")  # extract without re-runs: --runs, not --repeats
    assert by_run[twice.run_id].endswith(f"0.0% [0.0%, 65.8%] 0/2{AT_ZERO} |")
    assert by_run[warm.run_id].endswith("0.0% [0.0%, 65.8%] 0/2 |")  # measured at 0.7: no note
    assert by_run[plain.run_id].endswith(f"| {NO_FLOOR} |")
    assert "`--runs`" in READING and "`--temperature 0`" in READING and "`--repeats 2`" in READING
