"""experiments/abstain_real_replies.py: the labelling sheet of real abstain answers holds one item per distinct
(model, case, answer) with the question, the expected answer and the answer text the judges are given, and nothing a
judge decided."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import knowgap
from tests.helpers import scripted
from tests.test_experiments import _load

FACTS = [("F1", "What is the fee for a permit?", "The fee is 30 dollars."),
         ("F2", "How long does processing take?", "About two weeks."),
         ("F3", "Where do I apply?", "Online at the e-Service.")]
REPLY = '{"response": "The fee is 99 dollars.", "citation": "no citation"}'


@pytest.mark.slow
def test_the_sheet_holds_each_distinct_answer_once_with_its_question_and_no_verdict(tmp_path: Path) -> None:
    kb = tmp_path / "kb.jsonl"
    kb.write_text("".join(json.dumps({"identifier": i, "question": q, "answer": a}) + "\n" for i, q, a in FACTS),
                  encoding="utf-8")
    target = scripted(tmp_path, REPLY)
    judge = scripted(tmp_path, '{"outcome": "tier_3"}')
    result = knowgap.run("abstain", models={"target": target, "judge": judge}, runs_root=tmp_path / "runs",
                         options={"kb": str(kb), "retrieval": ["direct"], "prompts": ["conservative", "opinion"],
                                  "factuality_judge": "llm"}, use_cache=False)
    assert result.manifest.trials_ok == 6
    out = tmp_path / "sheet.jsonl"
    script = _load("abstain_real_replies")
    assert script.main([str(tmp_path / "runs" / result.manifest.run_id), "--kb", str(kb), "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    # the same answer to a question under both prompts is one item listing both trials
    assert len(rows) == 3 and all(len(r["origins"]) == 2 for r in rows)
    assert {o["prompt"] for r in rows for o in r["origins"]} == {"conservative", "opinion"}
    facts = {i: (q, a) for i, q, a in FACTS}
    for row in rows:
        assert (row["question"], row["expected_answer"]) == facts[row["case_id"]]
        assert row["reply"] == "The fee is 99 dollars." and row["raw"] == REPLY and row["lang"] == "en"
        _, case_id, digest = row["id"].rsplit("/", 2)
        assert row["model"] == target and case_id == row["case_id"] and len(digest) == 8
        assert row["origins"][0]["run"] == result.manifest.run_id and row["origins"][0]["retrieval"] == "direct"
        # what the labeller may see, and nothing a judge decided
        assert not {"output", "scores", "verdicts", "abstained", "tier", "abstention", "factuality_llm"} & set(row)
        assert "tier_3" not in json.dumps(row)


@pytest.mark.slow
def test_a_scenario_run_is_refused(tmp_path: Path) -> None:
    target = scripted(tmp_path, "I do not know.")
    result = knowgap.run("abstain", models={"target": target}, runs_root=tmp_path / "runs",
                         options={"scenario": "unknowable", "sample": 2}, use_cache=False)
    with pytest.raises(SystemExit, match="not a leave-one-out abstain run"):
        _load("abstain_real_replies").main([str(tmp_path / "runs" / result.manifest.run_id), "-o",
                                            str(tmp_path / "sheet.jsonl")])
