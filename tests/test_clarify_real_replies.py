"""experiments/clarify_real_replies.py: the labelling sheet of real clarify replies holds one item per distinct
(model, case, reply) with what a labeller may see, and no judge verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import knowgap
from knowgap.suites.clarify.dataset import load_cases
from tests.suites.clarify.test_suite_engine import FakeLawyer
from tests.test_experiments import _load


@pytest.mark.slow
def test_the_sheet_holds_each_distinct_reply_once_with_its_case_and_no_verdict(tmp_path: Path) -> None:
    fake = FakeLawyer(load_cases())
    result = knowgap.run("clarify", models={"target": fake.spec}, providers={fake.spec: fake},
                         options={"sample": 3, "prompts": ["plain", "cautious"], "no_rubric": True,
                                  "no_correctness": True, "no_silent_failure": True},
                         runs_root=tmp_path / "runs", use_cache=False)
    assert result.manifest.trials_ok == 6
    script = _load("clarify_real_replies")
    out = tmp_path / "sheet.jsonl"
    assert script.main([str(tmp_path / "runs" / result.manifest.run_id), "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    # the fake answers each case the same under both prompts: one item per case, both trials among its origins
    assert len(rows) == 3 and all(len(r["origins"]) == 2 for r in rows)
    assert {o["prompt"] for r in rows for o in r["origins"]} == {"plain", "cautious"}
    cases = {c.id: c for c in load_cases()}
    for row in rows:
        case = cases[row["case_id"]]
        assert row["model"] == fake.spec and row["lang"] == case.lang and row["query"] == case.query
        assert row["missing_information"] == [m.text for m in case.missing_information]
        assert row["id"].startswith(f"lawyer/{case.id}/")
        # what the labeller may see, and nothing a judge decided
        assert not {"output", "scores", "verdicts", "asked_question", "dangerous_assertions"} & set(row)
