"""experiments/partial_real_replies.py: the labelling sheet of real partial replies holds one item per distinct
(model, case, reply) with what a labeller may see (hidden values, expected missing fields, the prompt, the parsed
missing items) and no judge verdict."""

from __future__ import annotations

import json
from pathlib import Path

import knowgap
from tests.helpers import scripted
from tests.test_experiments import _load

REPLY = ('{"answer": "cannot decide", "sufficient": false, "missing": ["the customer\'s VIP level"], '
         '"evidence_used": [], "reasoning": "Customer 张三, order 1500."}')


def test_the_sheet_holds_each_reply_with_its_case_and_no_verdict(tmp_path: Path) -> None:
    target = scripted(tmp_path, REPLY)
    runs = tmp_path / "runs"
    result = knowgap.run("partial", models={"target": target}, runs_root=runs,
                         options={"families": ["customer_support"], "no_rubric": True, "sample": 3,
                                  "views": ["authorized"]})
    assert result.manifest.trials_ok == 3
    out = tmp_path / "sheet.jsonl"
    assert _load("partial_real_replies").main([str(runs / result.manifest.run_id), "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 3 and len({r["id"] for r in rows}) == 3
    for row in rows:
        assert row["replies"] == [REPLY] and row["missing"] == ["the customer's VIP level"] and row["parsed"]
        assert row["hidden"] and all({"path", "value", "op", "shown"} <= set(h) for h in row["hidden"])
        assert row["prompt"] and row["system"] and row["lang"] in ("en", "zh")
        # what the rubric judge is shown: the prompt's evidence block (the view as rendered), between title and task
        assert row["evidence"].startswith(("Evidence (JSON):", "证据（JSON）：")) and row["evidence"] in row["prompt"]
        assert row["prompt"].index(row["evidence"]) < row["prompt"].index(row["question"])
        assert "Task:" not in row["evidence"] and "任务：" not in row["evidence"]
        assert isinstance(row["sufficient"], bool)
        assert row["origins"][0]["run"] == result.manifest.run_id
        assert not {"scores", "output", "verdicts", "leak", "leaked_paths", "gap_precision"} & set(row)
        assert "leaked_paths" not in json.dumps(row) and "gap_precision" not in json.dumps(row)
