"""Stored runs of every suite (tests/fixtures/metric_identity/runs, made by the real engine with a python: system as
every model) copied into a test's runs folder with their metrics computed by this code, for reports of real runs
without a model: a single run, a comparison, and a demo-style report of several suites."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from knowgap.engine.store import RunStore
from knowgap.report.data import RunData, held, load_run_data
from tests.stats.metric_identity import FIXTURES

DEMO = ("starter", "abstain-loo", "clarify", "partial", "extract")
"""One stored run per built-in suite, in ``knowgap demo``'s order (its suites' order)."""


def stored_run(name: str, runs_root: Path) -> RunData:
    """Stored run ``name`` copied under ``runs_root`` into a folder named by its run id (trials unzipped), its metrics
    written, loaded for reporting."""
    source = FIXTURES / "runs" / name
    target = runs_root / json.loads((source / "manifest.json").read_text(encoding="utf-8"))["run_id"]
    target.mkdir(parents=True)
    shutil.copy(source / "manifest.json", target / "manifest.json")
    with gzip.open(source / "trials.jsonl.gz", "rb") as src, (target / "trials.jsonl").open("wb") as dst:
        shutil.copyfileobj(src, dst)
    run = held(load_run_data(target))
    assert run.suite is not None, f"{name}: its suite did not load"
    RunStore(target).write_metrics(run.suite.metrics(run.records))
    return load_run_data(target)
