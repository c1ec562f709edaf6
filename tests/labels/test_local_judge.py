"""End to end on the embedded 0.5B model: a real starter run, a stratified sample, labels, an LLM judge spec
version run by the same model on the labelled set, and the agreement report naming both judges."""

from __future__ import annotations

from pathlib import Path

import pytest

import knowgap
from knowgap.judges.spec import load_spec
from knowgap.labels import LabelStore, agreement_report, sample_run
from knowgap.labels.judge_spec import run_spec

pytestmark = [pytest.mark.slow, pytest.mark.local_model]


def test_judge_spec_on_a_real_run(small_pack_home: Path, runs_root: Path, tmp_path: Path) -> None:
    result = knowgap.run("starter", models={"target": "local:qwen2.5-0.5b"}, options={"sample": 2},
                         runs_root=runs_root)
    assert result.manifest.trials_ok == 4
    sample, _ = sample_run(result.run_id, "abstained", runs_root=runs_root, n=3, seed=0)
    store = LabelStore.open(result.run_id, runs_root)
    records = store.records()
    for trial_id in sample.trial_ids:  # a person who always agrees with the case's ground truth
        store.add(records[trial_id], "abstained", "oracle", not records[trial_id].scores["answerable"])
    spec_file = tmp_path / "judge.yaml"
    spec_file.write_text(
        "name: declines\nversion: '1'\nfield: abstained\nkind: llm\nmax_tokens: 4\n"
        "prompt: |\n  Question: {question}\n  Answer: {response}\n"
        "  Does the answer say it does not know or that the context does not say? Reply yes or no.\n",
        encoding="utf-8")
    verdicts, path = run_spec(store, load_spec(spec_file), model="local:qwen2.5-0.5b")
    assert path.exists() and len(verdicts) == 3
    assert all(v.raw and v.model == "local:qwen2.5-0.5b" for v in verdicts)
    report = agreement_report(store, "abstained", reps=200)
    assert report.judges == ["run:abstained", "declines@1"]
    assert {(p.a, p.b): p.n for p in report.pairs if p.kind == "judge-person"}[("run:abstained", "oracle")] == 3
