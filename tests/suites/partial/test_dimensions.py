"""The restriction dimensions of a (task, role) case, derived from the policy and the ground truth."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from knowgap.suites.partial.dataset import DATA, Policy, Scenario, load_scenario, load_scenarios
from knowgap.suites.partial.dimensions import contradicted, derive_dimensions, unexplained
from knowgap.suites.partial.generate import build_scenario, load_families
from knowgap.suites.partial.view import build_view

EXAMPLES = Path(__file__).parents[3] / "examples" / "partial"


@pytest.fixture(scope="module")
def shipped() -> list[Scenario]:
    return load_scenarios(DATA)


@pytest.fixture(scope="module")
def seed() -> Scenario:
    """The seed's scenario_001, with a stale CRM copy of the VIP level and a request-only notes source."""
    s = load_scenario(EXAMPLES / "scenario_001_customer_complaint.json")
    data: dict[str, Any] = s.model_dump()
    data["ground_truth"]["crm_cache"] = {"customer_id": "cust_123", "vip_level": "none"}
    data["sources"] = {"crm_cache": {"stale": True, "as_of": "2023-06-30"},
                       "internal_notes": {"preloaded": False, "cost": 2}}
    return Scenario.model_validate(data)


def policy(**allowed: Any) -> Policy:
    masking = allowed.pop("masking", {})
    return Policy(role="r", allowed_evidence=allowed, masking_rules=masking)


def test_each_loss_is_tagged_by_what_removes_it(seed: Scenario) -> None:
    # breadth: a field the policy denies
    assert derive_dimensions(seed, policy(customer=["id", "name"]), ["customer.vip_level"], []) == ["breadth"]
    # breadth: rows withheld by a rows filter (the refunded order is filtered out)
    rows = policy(orders={"fields": "*", "rows": {"field": "status", "in": ["delivered"]}})
    assert derive_dimensions(seed, rows, ["orders.status"], []) == ["breadth"]
    # depth: the amount is shown, but only bucketed
    bucketed = policy(orders="*", masking={"orders.amount": "bucket:100,2000"})
    assert derive_dimensions(seed, bucketed, ["orders.amount"], []) == ["depth"]
    # timeliness: the fresh VIP level is denied, its stale copy is shown
    stale = policy(customer=["id", "name"], crm_cache="*")
    assert derive_dimensions(seed, stale, ["customer.vip_level"], []) == ["timeliness"]
    # cost: deciding notes the role may see, only by request in budget mode; none when it may not see them
    assert derive_dimensions(seed, policy(complaint="*", internal_notes=True), [], ["internal_notes"]) == ["cost"]
    assert derive_dimensions(seed, policy(complaint="*"), ["internal_notes"], ["internal_notes"]) == ["breadth"]
    # nothing lost, nothing to buy: untagged
    assert derive_dimensions(seed, policy(customer="*", crm_cache="*"), [], ["customer.vip_level"]) == []


def test_a_fresh_value_in_full_is_not_a_timeliness_loss(seed: Scenario) -> None:
    both = policy(customer="*", crm_cache="*")
    assert unexplained(seed, both, ["customer.vip_level"]) == ["customer.vip_level"]
    assert unexplained(seed, policy(customer=["id"]), ["customer.vip_level"]) == []


def test_shipped_tags_follow_the_policies(shipped: list[Scenario]) -> None:
    """A case whose role sees no stale source and no two sources that disagree on a deciding path is never
    tagged timeliness; one that lost no deciding evidence is tagged with nothing but cost; cost needs a source
    the role may only request."""
    tagged = 0
    for s in shipped:
        for role in s.roles:
            built = build_view(s, s.policy(role))
            view = built.view
            sees_stale = any(s.sources[k].stale for k in view.evidence if k in s.sources)
            requestable = build_view(s, s.policy(role), budget_mode=True).view.requestable
            for t in s.tasks:
                o = t.oracle[role]
                dims = o.dimensions or []
                tagged += bool(dims)
                if "timeliness" in dims:
                    assert sees_stale or any(contradicted(s, built, p) for p in o.hidden_relevant), (
                        s.scenario_id, role, t.id)
                if not o.hidden_relevant:
                    assert set(dims) <= {"cost"}, (s.scenario_id, role, t.id)
                if "cost" in dims:
                    assert requestable, (s.scenario_id, role, t.id)
                assert set(dims) <= set(t.dimensions)
    assert tagged > 100


def test_the_generator_refuses_a_visibility_table_the_policy_contradicts(tmp_path: Path) -> None:
    data = tmp_path / "families.yaml"
    data.write_text("""
family: demo
prefix: dm
variants: [{lang: en, facts: {a: true, b: false}}]
vars: {}
title: "t"
ground_truth: {rec: {a: 1, b: 0}}
sources: {}
summaries: {}
field_labels: {}
leak_markers: {}
policies: [{role: r, allowed_evidence: {rec: "*"}}]
visibility: {r: {a: visible, b: hidden}}
facts: {a: rec.a, b: rec.b}
labels: {l: ["hi", "lo"]}
rules: {r: {cases: [["b", 0], ["True", 1]]}}
tasks: [{id: t, type: classification, labels: l, rule: r, question: "q?"}]
""", encoding="utf-8")
    with pytest.raises(ValueError, match=r"hides \['rec.b'\] but the policy shows it in full"):
        build_scenario(load_families(data), 0, "plan?")
