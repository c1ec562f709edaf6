"""One real end-to-end run of the abstain suite on the embedded 0.5B model (offline)."""

from __future__ import annotations

from pathlib import Path

import pytest

import knowgap

pytestmark = [pytest.mark.slow, pytest.mark.local_model]


def test_abstain_on_the_small_local_model(small_pack_home: Path, small_kb: Path, runs_root: Path) -> None:
    result = knowgap.run("abstain", models={"target": "local:qwen2.5-0.5b"},
                         options={"kb": str(small_kb), "sample": 2, "retrieval": ["rag"], "prompts": ["conservative"],
                                  "max_tokens": 48}, runs_root=runs_root)
    assert result.manifest.trials_ok == 2 and result.manifest.trials_error == 0
    rate = next(m for m in result.metrics if m.name == "abstention_rate")
    assert rate.n == 2 and rate.value is not None and rate.ci_low is not None and rate.ci_low <= rate.value
    for record in knowgap.iter_trials(result.run_id, runs_root):
        assert record.calls[0].response is not None and record.calls[0].response.text.strip()
        assert record.case_id not in record.output["experiment"]["context_ids"]
    assert "| conservative |" in (result.path / "report.md").read_text(encoding="utf-8")
