"""End to end on the embedded 0.5B model: a real run writes an HTML report whose worst examples are exactly its
failed trials, with the real responses; two runs with the same seed compare as identical (the second is cached)."""

from __future__ import annotations

import html as htmllib
import re
from pathlib import Path

import pytest

import knowgap
from knowgap.report import compare_runs, load_run_data, render_csv


@pytest.mark.slow
@pytest.mark.local_model
def test_real_model_report_and_compare(small_pack_home: Path, runs_root: Path) -> None:
    options = {"sample": 2, "prompts": ["grounded"]}
    first = knowgap.run("starter", models={"target": "local:qwen2.5-0.5b"}, options=options, runs_root=runs_root)
    second = knowgap.run("starter", models={"target": "local:qwen2.5-0.5b"}, options=options, runs_root=runs_root)
    assert second.provider_calls == 0  # served from the response cache
    run = load_run_data(first.path)
    assert len(run.records) == 2 and all(r.status == "ok" for r in run.records)
    page = (first.path / "report.html").read_text(encoding="utf-8")
    assert page.count('class="chart bar-chart"') == 4
    shown = sorted(htmllib.unescape(t) for t in re.findall(r'<pre class="response">(.*?)</pre>', page, re.S))
    failed = sorted(str(r.output["response"]) for r in run.records if run.trial_failed(r))  # starter stores it
    assert shown == failed
    assert len(render_csv([run]).strip().splitlines()) >= 3  # header + 2 trials (responses may span lines)
    c = compare_runs(run, load_run_data(second.path), reps=200)
    assert c.paired_trials == 2 and c.flips == [] and not c.significant_changes
