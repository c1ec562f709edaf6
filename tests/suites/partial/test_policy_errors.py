"""Bad policies and scenarios are refused with the file, the record and the field named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.suites.partial.dataset import load_policies, load_scenario
from knowgap.suites.partial.view import build_view
from tests.helpers import REPO

EXAMPLES = REPO / "examples" / "partial"
SCENARIO = EXAMPLES / "scenario_001_customer_complaint.json"


def write(tmp_path: Path, data: object, name: str = "policy.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False) if not isinstance(data, str) else data, encoding="utf-8")
    return path


@pytest.mark.parametrize(("policy", "field", "message"), [
    ({"allowed_evidence": {"customer": ["id"]}}, "role", "Field required"),
    ({"role": "a", "allowed_evidence": {"customer": ["id"]}, "masking_rules": {"customer.name": "scramble"}},
     "masking_rules.customer.name.op", "Input should be"),
    ({"role": "a", "allowed_evidence": {"orders": ["amount"]}, "masking_rules": {"orders.amount": "bucket"}},
     "masking_rules.orders.amount", "bucket needs at least one edge"),
    ({"role": "a", "allowed_evidence": {"orders": ["amount"]},
      "masking_rules": {"orders.amount": {"op": "bucket", "edges": [1000, 100]}}},
     "masking_rules.orders.amount", "strictly ascending"),
    ({"role": "a", "allowed_evidence": {"orders": ["id"]}, "masking_rules": {"orders.id": "keep_last:0"}},
     "masking_rules.orders.id.n", "greater than or equal to 1"),
    ({"role": "a", "allowed_evidence": {"orders": {"fields": ["id"], "rows": {"in": ["x"]}}}},
     "allowed_evidence.orders.rows", "need 'field'"),
    ({"role": "a", "allowed_evidence": ["customer"]}, "allowed_evidence", "valid dictionary"),
    ({"role": "a", "allowed_evidence": {"customer": ["id"]}, "colour": "red"}, "colour", "Extra inputs"),
])
def test_policy_file_errors_name_file_record_and_field(tmp_path: Path, policy: dict, field: str,
                                                       message: str) -> None:
    path = write(tmp_path, policy)
    with pytest.raises(InputError) as info:
        load_policies(path)
    assert info.value.file == str(path)
    assert info.value.field == field
    assert message in str(info.value)
    assert "policy 0 ('" in str(info.value)


@pytest.mark.parametrize(("policy", "field", "message"), [
    ({"role": "a", "allowed_evidence": {"payroll": ["id"]}}, "allowed_evidence.payroll", "neither a record type"),
    ({"role": "a", "allowed_evidence": {"customer": ["id", "shoe_size"]}}, "allowed_evidence.customer.fields",
     "unknown field(s) ['shoe_size']"),
    ({"role": "a", "allowed_evidence": {"customer": {"fields": "*", "rows": {"limit": 1}}}},
     "allowed_evidence.customer.rows", "not a list of rows"),
    ({"role": "a", "allowed_evidence": {"orders": {"fields": "*", "rows": {"field": "colour", "in": [1]}}}},
     "allowed_evidence.orders.rows", "unknown field 'colour'"),
    ({"role": "a", "allowed_evidence": {"orders": "*"}, "masking_rules": {"orders.product": "bucket:100"}},
     "masking_rules.orders.product", "bucket needs numbers"),
    ({"role": "a", "allowed_evidence": {"internal_notes": ["id"]}}, "allowed_evidence.internal_notes",
     "is a text"),
    ({"role": "a", "allowed_evidence": {"complaint": "*"}, "masking_rules": {"complaint.text": "summarise"}},
     "masking_rules.complaint.text", "needs a summary"),
])
def test_policy_errors_against_the_scenario(tmp_path: Path, policy: dict, field: str, message: str) -> None:
    scenario = load_scenario(SCENARIO)
    with pytest.raises(InputError) as info:
        build_view(scenario, load_policies(write(tmp_path, policy))[0])
    assert info.value.field == field
    assert message in str(info.value)


def test_scenario_with_bad_policy_names_scenario_and_policy(tmp_path: Path) -> None:
    data = json.loads(SCENARIO.read_text(encoding="utf-8"))
    data["policies"] = [{"role": "agent", "allowed_evidence": {"customer": ["nope"]}}]
    path = write(tmp_path, data, "scenario.json")
    with pytest.raises(InputError) as info:
        load_scenario(path)
    assert "scenario '001', policy 'agent'" in str(info.value)
    assert info.value.field == "policies.0.allowed_evidence.customer.fields"


def test_scenario_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        load_scenario(tmp_path / "missing.json")
    with pytest.raises(InputError, match="not valid JSON"):
        load_scenario(write(tmp_path, "{ \"scenario_id\": ", "broken.json"))
    with pytest.raises(InputError) as info:
        load_scenario(write(tmp_path, {"scenario_id": "x", "ground_truth": {"orders": [1, 2]}}, "rows.json"))
    assert info.value.field == "ground_truth" and "'orders[0]' must be an object" in str(info.value)
    bad_task = {"scenario_id": "x", "ground_truth": {"a": {"b": 1}}, "tasks": [
        {"id": "t", "type": "classification", "question": "q", "labels": ["high", "low"], "oracle_full": "mid"}]}
    with pytest.raises(InputError) as info:
        load_scenario(write(tmp_path, bad_task, "task.json"))
    assert info.value.field == "tasks.0" and "'mid' is not one of the labels" in str(info.value)


def test_seed_files_load_as_written() -> None:
    """The seed prints its policy on one line with // comments; it loads, and gives the seed's own view."""
    assert "// 只能看ID和姓名" in (EXAMPLES / "policy_agent_tier1.json").read_text(encoding="utf-8")
    [policy] = load_policies(EXAMPLES / "policy_agent_tier1.json")
    assert policy.role == "tier1_support_agent"
    assert policy.masking_rules["customer.name"].op == "mask_middle"
    view = build_view(load_scenario(SCENARIO), policy).view
    text = "我刚买的蓝牙耳机有严重的电流声，根本无法使用！上次买的音箱也有点小问题。你们的品控太差了！"
    assert view.evidence == {
        "customer": {"id": "cust_123", "name": "张*"},
        "orders": [{"id": "order_456", "status": "delivered"}, {"id": "order_789", "status": "refunded"}],
        "complaint": {"text": text, "channel": "在线客服", "timestamp": "2023-10-25 14:30:00"},
    }
