"""experiments/abstain_scenario_replies.py: the labelling sheet of real replies to the abstain scenarios holds one
item per (model, question) with the question, its paragraph and the reply as the detector gets it, and nothing the
detector or the answer check decided; a leave-one-out run, or a second different reply to one question, stops it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import knowgap
from knowgap.suites.abstain.scenario_data import load_scenario
from tests.helpers import scripted
from tests.test_experiments import _load


def _run(tmp_path: Path, scenario: str, reply: str) -> Path:
    target = scripted(tmp_path, reply)
    result = knowgap.run("abstain", models={"target": target}, runs_root=tmp_path / "runs",
                         options={"scenario": scenario, "sample": 3}, use_cache=False)
    assert result.manifest.trials_ok == 3
    return tmp_path / "runs" / result.manifest.run_id


@pytest.mark.slow
def test_the_sheet_holds_each_reply_with_its_question_and_paragraph_and_no_verdict(tmp_path: Path) -> None:
    run = _run(tmp_path, "unanswerable-context", "  The passage does not say.\n")
    out = tmp_path / "sheet.jsonl"
    assert _load("abstain_scenario_replies").main([str(run), "--id-prefix", "05", "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    cases = {c.id: c for c in load_scenario("unanswerable-context")}
    assert len(rows) == 3
    for row in rows:
        prefix, scenario, case_id = row["id"].split("/")
        case = cases[case_id]
        assert (prefix, scenario) == ("05", "unanswerable-context")
        assert (row["question"], row["context"], row["lang"]) == (case.question, case.context, case.lang)
        assert row["response"] == "The passage does not say."  # stripped, as the detector is given it
        assert row["source"].startswith(f"{row['model']}, knowgap run abstain --scenario unanswerable-context "
                                        f"--sample 3 --seed 0 (run {run.name}, ")
        # what the labeller may see, and nothing the detector or the answer check decided
        assert not {"output", "scores", "abstained", "abstention", "answer_check", "label_a"} & set(row)
        assert "phrase" not in json.dumps(row)


@pytest.mark.slow
def test_a_leave_one_out_run_or_two_replies_to_one_question_stop_it(tmp_path: Path) -> None:
    script = _load("abstain_scenario_replies")
    first = _run(tmp_path / "a", "unknowable", "Nobody knows.")
    second = _run(tmp_path / "b", "unknowable", "It is forty-two.")
    with pytest.raises(SystemExit, match="two different replies"):
        script.main([str(first), str(second), "--id-prefix", "05", "-o", str(tmp_path / "sheet.jsonl")])
    target = scripted(tmp_path, '{"response": "The fee is 99 dollars.", "citation": "no citation"}')
    kb = tmp_path / "kb.jsonl"
    kb.write_text(json.dumps({"identifier": "F1", "question": "What is the fee?", "answer": "30 dollars."}) + "\n",
                  encoding="utf-8")
    loo = knowgap.run("abstain", models={"target": target}, runs_root=tmp_path / "runs",
                      options={"kb": str(kb), "retrieval": ["direct"], "prompts": ["conservative"]}, use_cache=False)
    with pytest.raises(SystemExit, match="not a run of a shipped --scenario question set"):
        script.main([str(tmp_path / "runs" / loo.manifest.run_id), "--id-prefix", "05", "-o",
                     str(tmp_path / "sheet.jsonl")])
