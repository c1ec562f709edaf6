"""experiments/starter_real_replies.py: the labelling sheet of real starter replies holds one item per distinct
(model, answerable case, reply), with the case's context, question and accepted answers, and nothing the suite
scored (the run below scores every reply: correct, abstained, the abstention phrase; none of it reaches the sheet)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import knowgap
from knowgap.suites.starter.answer_match_card import StarterReply
from tests.helpers import scripted
from tests.test_experiments import _load

CASES = [
    {"id": "a-en", "lang": "en", "context": "The shop opens at 9:00.", "question": "When does the shop open?",
     "answerable": True, "answers": ["9:00"]},
    {"id": "a-zh", "lang": "zh", "context": "门票10元。", "question": "门票多少钱？", "answerable": True,
     "answers": ["10元"]},
    {"id": "u-en", "lang": "en", "context": "The shop opens at 9:00.", "question": "When does it close?",
     "answerable": False, "answers": []},
]


@pytest.mark.slow
def test_the_sheet_holds_each_distinct_reply_to_an_answerable_case_once_and_no_score(tmp_path: Path) -> None:
    data = tmp_path / "cases.jsonl"
    data.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in CASES), encoding="utf-8")
    # one reply for every call: under the two prompts each answerable case gets the same reply twice
    target = scripted(tmp_path, "It opens at 9:00.")
    result = knowgap.run("starter", models={"target": target}, runs_root=tmp_path / "runs",
                         options={"data": str(data), "prompts": ["plain", "grounded"]}, use_cache=False)
    assert result.manifest.trials_ok == 6
    scored = [t.scores for t in knowgap.iter_trials(result.manifest.run_id, tmp_path / "runs")]
    assert any(s["correct"] is True for s in scored) and any(s["correct"] is False for s in scored)
    out = tmp_path / "sheet.jsonl"
    assert _load("starter_real_replies").main([str(tmp_path / "runs" / result.manifest.run_id), "-o",
                                               str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    # the unanswerable case is left out; each answerable case's one reply is one item listing both trials
    assert sorted(r["case_id"] for r in rows) == ["a-en", "a-zh"]
    cases = {c["id"]: c for c in CASES}
    for row in rows:
        StarterReply.model_validate(row)  # the labelled set's fields, the labels aside
        case = cases[row["case_id"]]
        assert (row["lang"], row["context"], row["question"], row["answers"]) == (
            case["lang"], case["context"], case["question"], case["answers"])
        assert row["reply"] == "It opens at 9:00." and row["model"] == target
        assert sorted(o["prompt"] for o in row["origins"]) == ["grounded", "plain"]
        assert {o["defence"] for o in row["origins"]} == {"none"}
        assert row["id"].rsplit("/", 1)[1] == hashlib.sha256(row["reply"].encode("utf-8")).hexdigest()[:8]
        # nothing the suite decided
        assert not {"output", "scores", "verdicts", "correct", "abstained", "abstention_phrase"} & set(row)
