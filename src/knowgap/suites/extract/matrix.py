"""The summarizer x judge configuration matrix: one run of the extract suite per pair, compared on the key
metrics with the cost (when prices are given) and the wall time of each configuration."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from knowgap.engine.runner import RunResult
from knowgap.suites.extract.specs import KEY_METRICS


def run_matrix(summarizers: Sequence[str], judges: Sequence[str], *, run: Callable[..., RunResult],
               options: Mapping[str, Any] | None = None, prices: Mapping[str, tuple[float, float]] | None = None,
               runs_root: str | Path | None = None, seed: int = 0,
               providers: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """One row per (summarizer, judge): the key metrics (first configuration), cost in USD when prices are
    given for the models, wall time in seconds, and the run id. ``run`` runs one suite: ``knowgap.run`` (a
    suite sits below the API, so the caller hands it down)."""
    rows = []
    for summarizer in summarizers:
        for judge in judges:
            started = time.perf_counter()
            result = run("extract", models={"target": summarizer, "judge": judge},
                         options={k: v for k, v in (options or {}).items() if v is not None},
                         prices=dict(prices or {}), runs_root=runs_root, seed=seed, providers=providers)
            seconds = time.perf_counter() - started
            costs = [u.cost_usd for specs in result.manifest.usage.values() for u in specs.values()
                     if u.cost_usd is not None]
            row: dict[str, Any] = {"summarizer": summarizer, "judge": judge}
            for name in KEY_METRICS:
                values = [m.value for m in result.metrics if m.name == name and m.value is not None]
                row[name] = values[0] if values else "-"
            row["cost_usd"] = sum(costs) if costs else "-"
            row["seconds"] = round(seconds, 1)
            row["run"] = result.run_id
            rows.append(row)
    return rows
