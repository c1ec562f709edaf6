"""clarify end to end on the embedded 0.5B model (target, judge and simulated user), multi-turn, offline."""

from __future__ import annotations

from pathlib import Path

import pytest

import knowgap

pytestmark = [pytest.mark.local_model, pytest.mark.slow]


def test_multi_turn_on_the_embedded_model(small_pack_home: Path, runs_root: Path) -> None:
    result = knowgap.run("clarify", models={"target": "local:qwen2.5-0.5b"},
                         options={"sample": 1, "lang": "en", "prompts": ["clarify-first"], "turns": 1,
                                  "max_tokens": 48}, runs_root=runs_root, seed=3)
    assert result.manifest.trials_ok == 1 and result.manifest.trials_error == 0
    [record] = knowgap.iter_trials(result.run_id, runs_root)
    assert record.output["response"].strip()
    assert record.scores["screen"] in {"pass", "fail", "uncertain"}
    assert record.scores["turns_used"] in {0, 1}
    assert isinstance(record.scores["final_correct_approx"], bool)
    # the judge either gave a verdict or its reply was counted as a parse failure
    assert "final_verdict" in record.scores or record.scores.get("correctness_parse_failure") is True
    names = {m.name for m in result.metrics if m.group == "prompt=clarify-first"}
    assert {"final_correctness_approx", "turns_used", "resolved_rate", "review_queue", "errors"} <= names
    for m in result.metrics:
        if m.kind == "proportion" and m.value is not None:
            assert 0.0 <= m.value <= 1.0
