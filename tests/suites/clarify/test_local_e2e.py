"""clarify end to end on the embedded 0.5B model (target, judge and simulated user), multi-turn, offline."""

from __future__ import annotations

from pathlib import Path

import pytest

import knowgap
from tests.helpers import scripted

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


def test_simulated_user_answers_from_the_hidden_facts_on_the_embedded_model(small_pack_home: Path, runs_root: Path,
                                                                            tmp_path: Path) -> None:
    """The embedded models rarely ask, so a scripted target asks once; the simulated user (generator role) and
    both judges are the real 0.5B model. The user's reply reaches the target as a user turn, the final answer
    is judged, and the trial records the whole conversation."""
    script = scripted(tmp_path, "Before I can answer: did you sign a written labour contract, and what reason did "
                                "your employer give?",
                      "Thank you. On those facts the dismissal is unlawful and you can claim compensation.")
    result = knowgap.run("clarify", models={"target": script, "generator": "local:qwen2.5-0.5b",
                                            "judge": "local:qwen2.5-0.5b"},
                         options={"sample": 1, "lang": "en", "turns": 2, "prompts": ["plain"], "max_tokens": 48,
                                  "data": str(_one_deficient_case(tmp_path))}, runs_root=runs_root)
    [record] = knowgap.iter_trials(result.run_id, runs_root)
    assert record.status == "ok", record.error
    assert record.scores["turns_used"] == 1 and record.scores["resolved"] is True
    roles = [m["role"] for m in record.output["conversation"]]
    assert roles == ["user", "assistant", "user", "assistant"]
    user_reply = record.output["conversation"][2]["content"]
    assert user_reply.strip() and user_reply != record.output["conversation"][0]["content"]
    generator_calls = [c for c in record.calls if c.role == "generator"]
    assert len(generator_calls) == 1 and generator_calls[0].response is not None
    assert "final_verdict" in record.scores or record.scores.get("correctness_parse_failure") is True


def _one_deficient_case(tmp_path: Path) -> Path:
    from knowgap.suites.clarify.dataset import load_cases

    case = next(c for c in load_cases() if c.id == "en-labour-001")
    path = tmp_path / "one.jsonl"
    path.write_text(case.model_dump_json() + "\n", encoding="utf-8")
    return path
