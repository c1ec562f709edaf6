"""The command line (``knowgap partial view``, ``knowgap generate partial``, ``knowgap run partial``) and one
real end-to-end run on the embedded 0.5B model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import knowgap
from knowgap.errors import KnowgapError
from knowgap.suites.partial.commands import view_text
from knowgap.suites.partial.generate import dataset_text
from tests.helpers import REPO, knowgap_cli

EXAMPLES = REPO / "examples" / "partial"


def test_view_command_prints_the_seed_view() -> None:
    result = knowgap_cli("partial", "view", str(EXAMPLES / "scenario_001_customer_complaint.json"),
                         "--policy", str(EXAMPLES / "policy_agent_tier1.json"))
    assert result.returncode == 0, result.stderr
    body = result.stdout.split("\n", 1)[1]
    assert json.loads(body)["customer"] == {"id": "cust_123", "name": "张*"}
    for hidden in ("张三", "13800138000", "gold", "1500", "智能音箱", "B202310"):
        assert hidden not in result.stdout


def test_view_command_prompt_and_errors(tmp_path: Path) -> None:
    data = tmp_path / "one.json"
    from knowgap.suites.partial.dataset import DATA
    data.write_text(DATA.read_text(encoding="utf-8").splitlines()[0], encoding="utf-8")
    ok = knowgap_cli("partial", "view", str(data), "--role", "tier1_support_agent", "--task", "urgency")
    assert ok.returncode == 0, ok.stderr
    assert "[system]" in ok.stdout and "评估该客户投诉的紧急程度" in ok.stdout and "张*" in ok.stdout
    native = knowgap_cli("partial", "view", str(data), "--role", "tier1_support_agent", "--task", "urgency",
                         "--budget", "5", "--tool-protocol", "native")
    assert native.returncode == 0, native.stderr
    tools = json.loads(native.stdout.split("[tools]\n", 1)[1])
    assert tools[0]["name"] == "request_evidence" and tools[0]["parameters"]["required"] == ["path"]
    assert "调用工具 request_evidence(path)" in native.stdout and '"action": "request_evidence"' not in native.stdout
    stepwise = knowgap_cli("partial", "view", str(data), "--role", "tier1_support_agent", "--task", "urgency",
                           "--prompt", "stepwise")
    assert stepwise.returncode == 0, stepwise.stderr
    assert "分四步" in stepwise.stdout and "分四步" not in ok.stdout
    assert stepwise.stdout.split("[user]", 1)[1] == ok.stdout.split("[user]", 1)[1]  # only the system prompt differs
    with pytest.raises(KnowgapError, match="--prompt must be one of strict, plain, stepwise"):
        view_text(data, None, "tier1_support_agent", task="urgency", prompt="chatty")
    several = knowgap_cli("partial", "view", str(data))
    assert several.returncode != 0 and "pick one with --role" in several.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"role": "x", "allowed_evidence": {"nope": ["a"]}}', encoding="utf-8")
    refused = knowgap_cli("partial", "view", str(data), "--policy", str(bad))
    assert refused.returncode != 0
    assert "'nope' is neither a record type nor an endpoint" in refused.stderr


def test_generate_command_writes_the_dataset(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    result = knowgap_cli("generate", "partial", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_text(encoding="utf-8") == dataset_text()


@pytest.mark.slow
@pytest.mark.local_model
def test_real_run_on_the_small_model(small_pack_home: Path, runs_root: Path) -> None:
    # seed 1 samples a case that loses evidence on some dimension (seed 0's case, since the scenarios of
    # 422937b, is one whose authorized view loses nothing: no dim= group to see)
    static = knowgap.run("partial", models={"target": "local:qwen2.5-0.5b"}, seed=1,
                         options={"sample": 1, "views": ["authorized"], "no_rubric": True}, runs_root=runs_root)
    assert static.manifest.trials_ok == 1
    groups = {m.group for m in static.metrics}
    assert any("family=" in g for g in groups) and any("dim=" in g for g in groups)
    budget = knowgap.run("partial", models={"target": "local:qwen2.5-0.5b"},
                         options={"sample": 1, "budget": 2, "no_rubric": True}, runs_root=runs_root)
    assert budget.manifest.trials_ok == 1
    [record] = list(knowgap.iter_trials(budget.run_id, runs_root))
    assert 1 <= len(record.calls) <= 4
    assert record.scores["query_tokens"] <= 2
    for m in budget.metrics:
        if m.name == "leak_rate" and m.value is not None:
            assert 0.0 <= m.value <= 1.0


@pytest.mark.parametrize("text", ["[]", '{"policies": []}'])
def test_view_with_an_empty_policy_file_names_the_file(tmp_path: Path, text: str) -> None:
    empty = tmp_path / "empty_policy.json"
    empty.write_text(text, encoding="utf-8")
    result = knowgap_cli("partial", "view", str(EXAMPLES / "scenario_001_customer_complaint.json"),
                         "--policy", str(empty))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert f"{empty}: the policy file holds no policies" in result.stderr
    assert "pass --policy" not in result.stderr  # --policy was given
