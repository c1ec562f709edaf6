"""experiments/extract_real_summaries.py: the labelling sheet of real extract summaries holds one item per distinct
(model, case, summary) of a normal review, with the review the judge checks it against, and nothing a judge decided
(the run below has the claims judge score every summary: none of it reaches the sheet)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import knowgap
from tests.helpers import scripted
from tests.test_experiments import _load

CASES = [
    {"id": "n-en", "kind": "normal", "lang": "en", "review": "The soup was cold but the staff were kind.",
     "expected_sentiment": "neutral", "expected_conflicting": True, "label_source": "test"},
    {"id": "n-zh", "kind": "normal", "lang": "zh", "review": "面条很好吃，就是价格有点贵。",
     "expected_sentiment": "neutral", "expected_conflicting": True, "label_source": "test"},
]
SUMMARY = "The reviewer liked it."


@pytest.mark.slow
def test_the_sheet_holds_each_distinct_summary_once_with_its_review_and_no_verdict(tmp_path: Path) -> None:
    data = tmp_path / "cases.jsonl"
    data.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in CASES), encoding="utf-8")
    target = scripted(tmp_path, json.dumps({"summary": SUMMARY, "overall_sentiment": "positive",
                                            "contains_conflicting_signals": False}))
    judge = scripted(tmp_path, '{"claims": ["The reviewer liked it."]}',
                     '{"verdicts": [{"claim": 1, "verdict": "not_supported"}]}')
    result = knowgap.run("extract", models={"target": target, "judge": judge}, runs_root=tmp_path / "runs",
                         options={"data": str(data), "kinds": ["normal"], "prompts": ["default"], "runs": 2,
                                  "faithfulness_runs": 1, "offline_checker": False, "coverage": False},
                         use_cache=False)
    assert result.manifest.trials_ok == 2
    outputs = [t.output for t in knowgap.iter_trials(result.manifest.run_id, tmp_path / "runs")]
    # the judge did check the first run of each case (the script's two answers cycle between the trials, so one
    # may read the wrong answer): the sheet must say nothing of it
    assert all("judge_outcome" in o["clean"][0] for o in outputs)
    assert any(o["clean"][0]["judge_score"] == 0.0 for o in outputs)
    out = tmp_path / "sheet.jsonl"
    assert _load("extract_real_summaries").main([str(tmp_path / "runs" / result.manifest.run_id), "-o",
                                                 str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    # the same summary in a case's two runs is one item listing both calls
    assert len(rows) == 2 and all([o["call"] for o in r["origins"]] == [0, 1] for r in rows)
    reviews = {c["id"]: (c["review"], c["lang"]) for c in CASES}
    for row in rows:
        assert (row["review"], row["lang"]) == reviews[row["case_id"]] and row["summary"] == SUMMARY
        _, case_id, digest = row["id"].rsplit("/", 2)
        assert row["model"] == target and case_id == row["case_id"] and len(digest) == 8
        assert row["origins"][0]["run"] == result.manifest.run_id
        # what the labeller may see, and nothing a judge decided (the judge scored the first run of each case)
        assert not {"output", "scores", "verdicts", "judge_score", "sentiment", "unfaithful"} & set(row)
        assert "judge" not in json.dumps(row) and "supported" not in json.dumps(row)
