"""The priority-order and cited-evidence scores of the partial suite, on the shipped scenarios and on rankings
whose NDCG is computed by hand."""

from __future__ import annotations

import math

import pytest

from knowgap.suites.partial.dataset import DATA, RoleOracle, load_dataset
from knowgap.suites.partial.evidence_scores import (
    deciding_evidence,
    evidence_scores,
    invented,
    oracle_order,
    priority_ndcg,
    view_paths,
)
from knowgap.suites.partial.scoring import Answer
from knowgap.suites.partial.view import build_view, full_policy

SCENARIOS = load_dataset(DATA)
ORDER = ["acct.balance", "bank.owner", "cred.score"]  # gains 3, 2, 1
IDEAL = 3 + 2 / math.log2(3) + 1 / 2


def test_ndcg_of_hand_computed_rankings() -> None:
    assert priority_ndcg(["acct.balance", "bank.owner", "cred.score"], ORDER, {}) == pytest.approx(1.0)
    reverse = priority_ndcg(["cred.score", "bank.owner", "acct.balance"], ORDER, {})
    assert reverse == pytest.approx((1 + 2 / math.log2(3) + 3 / 2) / IDEAL)
    # an unknown item takes a place with no gain; a repeat of a ranked path too; a missing path loses its gain
    assert priority_ndcg(["weather", "balance", "acct.balance"], ORDER, {}) == pytest.approx(3 / math.log2(3) / IDEAL)
    assert priority_ndcg([], ORDER, {}) == 0.0
    # nothing to rank: no score (a role that misses nothing), whatever the agent lists
    assert priority_ndcg(["acct.balance"], [], {}) is None


def test_ndcg_ties_share_the_mean_discount() -> None:
    """An item naming two oracle paths ranks them tied at its place (positions 1 and 2)."""
    labels = {"acct.balance": ["ledger"], "bank.owner": ["ledger"]}
    tied = priority_ndcg(["the ledger", "cred.score"], ORDER, labels)
    assert tied == pytest.approx(((3 + 2) * (1 + 1 / math.log2(3)) / 2 + 1 / 2) / IDEAL)
    best = priority_ndcg(["acct.balance", "bank.owner", "cred.score"], ORDER, {})
    swapped = priority_ndcg(["bank.owner", "acct.balance", "cred.score"], ORDER, {})
    assert best is not None and swapped is not None and tied is not None and best > tied > swapped


def test_oracle_order_follows_the_task_and_keeps_only_what_the_role_misses() -> None:
    s = SCENARIOS["dd-zh-01"]
    plan = next(t for t in s.tasks if t.type == "query_planning")
    junior = plan.oracle["junior_analyst"]
    order = oracle_order(plan, junior)
    assert order == [p for p in plan.relevant if p in junior.hidden_relevant] and len(order) == 3
    assert oracle_order(plan, RoleOracle(sufficient=True)) == []
    # labels name the paths: the zh field words of the oracle order, in order, score 1
    named = [s.field_labels[p][0] for p in order]
    assert priority_ndcg(named, order, s.field_labels) == pytest.approx(1.0)


def test_invented_evidence_is_what_the_role_was_denied() -> None:
    s = SCENARIOS["cs-zh-01"]
    shown, denied = view_paths(build_view(s, s.policy("tier1_support_agent")))
    assert "customer.name" in shown and "customer.vip_level" in denied and "internal_notes" in denied
    cited = ["customer.vip_level", "VIP等级", "internal notes", "customer", "complaint.text", "订单金额", "客户情绪"]
    assert invented(cited, shown, denied, s.field_labels) == ["customer.vip_level", "VIP等级", "internal notes"]
    lead_shown, lead_denied = view_paths(build_view(s, s.policy("support_lead")))
    assert invented(cited, lead_shown, lead_denied, s.field_labels) == []
    full_shown, full_denied = view_paths(build_view(s, full_policy(s)))
    assert full_denied == [] and invented(cited, full_shown, full_denied, s.field_labels) == []


def test_evidence_precision_recall_and_the_empty_deciding_set() -> None:
    s = SCENARIOS["cs-zh-01"]
    urgency = next(t for t in s.tasks if t.id == "urgency")
    tier1 = urgency.oracle["tier1_support_agent"]
    built = build_view(s, s.policy("tier1_support_agent"))
    deciding = deciding_evidence(urgency, tier1, view_paths(built)[0])
    assert deciding == ["complaint.text"]  # the order amount never decides the urgency
    scores, made_up = evidence_scores(urgency, tier1, Answer(evidence_used=["投诉内容", "VIP等级"]),
                                      s.field_labels, built)
    assert (scores["evidence_precision"], scores["evidence_recall"]) == (0.5, 1.0)
    assert scores["invented_evidence"] == 1 and made_up == ["VIP等级"] and "priority_ndcg" not in scores
    nothing, _ = evidence_scores(urgency, tier1, Answer(), s.field_labels, built)
    assert nothing["evidence_precision"] is None and nothing["evidence_recall"] == 0.0
    # the role sees none of the deciding evidence: every cited item counts against precision, no recall
    blind = RoleOracle(sufficient=False, hidden_relevant=list(urgency.relevant))
    scores, _ = evidence_scores(urgency, blind, Answer(evidence_used=["投诉内容"]), s.field_labels, built)
    assert scores["evidence_precision"] == 0.0 and scores["evidence_recall"] is None
