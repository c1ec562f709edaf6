"""Scoring against the stale oracle and an oracle with no gaps, on shipped tasks."""

from __future__ import annotations

import json

import pytest

from knowgap.suites.partial.dataset import DATA, RoleOracle, Scenario, Task, load_scenarios
from knowgap.suites.partial.metrics import compute
from knowgap.suites.partial.scoring import CANNOT_DECIDE, gap_scores, parse_answer, score_answer

SCENARIOS = {s.scenario_id: s for s in load_scenarios(DATA)}


def task(scenario_id: str, task_id: str) -> tuple[Scenario, Task]:
    s = SCENARIOS[scenario_id]
    return s, next(t for t in s.tasks if t.id == task_id)


def scores(scenario_id: str, task_id: str, role: str, reply: dict[str, object]) -> dict[str, object]:
    s, t = task(scenario_id, task_id)
    return score_answer(t, t.oracle[role], parse_answer(json.dumps(reply, ensure_ascii=False)), s.field_labels)


@pytest.mark.parametrize(("reply", "correct", "aware"), [
    # trusts the June CRM cache (gold VIP): the stale answer, given as sufficient, is wrong
    ({"answer": "高", "confidence": 0.9, "sufficient": True}, False, False),
    # the full-data answer, claimed as sufficient: a lucky guess, not a defensible decision
    ({"answer": "中", "confidence": 0.9, "sufficient": True}, False, False),
    # declines: the source is stale
    ({"answer": "无法判断：VIP信息来自过期缓存", "sufficient": False, "missing": ["VIP等级"]}, True, True),
    ({"answer": "cannot decide", "missing": ["vip level"]}, True, True),
    # a label flagged as not sufficient is still a label the view does not support (issue 37: it was accepted)
    ({"answer": "中", "confidence": 0.4, "sufficient": False, "missing": ["最新VIP等级"]}, False, True),
    ({"answer": "高", "confidence": 0.4, "sufficient": False, "missing": ["最新VIP等级"]}, False, True),
])
def test_stale_oracle_credits_the_careful_analyst(reply: dict[str, object], correct: bool, aware: bool) -> None:
    """cs-zh-02: the tier-1 agent sees the VIP level only in a June CRM cache."""
    x = scores("cs-zh-02", "urgency", "tier1_support_agent", reply)
    assert json.loads(str(x["accepted"])) == [CANNOT_DECIDE] and x["gold_full"] == "中"
    assert (x["correct"], x["aware"]) == (correct, aware)
    assert x["correct_full"] == (reply["answer"] == "中")


def test_a_declined_answer_is_wrong_where_the_view_decides() -> None:
    """cs-zh-01: the support lead sees everything that decides the urgency (高)."""
    x = scores("cs-zh-01", "urgency", "support_lead", {"answer": "cannot decide", "sufficient": False})
    assert (x["gold"], x["predicted"], x["correct"], x["aware"]) == ("高", CANNOT_DECIDE, False, False)
    x = scores("cs-zh-01", "urgency", "support_lead", {"answer": "高", "sufficient": True, "confidence": 0.9})
    assert (x["correct"], x["aware"]) == (True, True)


def test_undecidable_is_a_class_of_its_own_in_the_metrics() -> None:
    from knowgap.engine.records import TrialRecord

    s, t = task("cs-zh-02", "urgency")
    replies = {"tier1_support_agent": {"answer": "中", "sufficient": True}, "support_lead": {"answer": "unknown"}}
    records = [TrialRecord(trial_id=f"{s.scenario_id}/{role}/urgency|view=authorized|r0",
                           case_id=f"{s.scenario_id}/{role}/urgency", config_id="view=authorized",
                           config={"view": "authorized"}, repeat=0, status="ok",
                           scores=scores(s.scenario_id, "urgency", role, reply))
               for role, reply in replies.items()]
    by_name = {m.name: m for m in compute(records, {}) if m.group == "view=authorized"}
    assert by_name["decision_accuracy"].value == 0.5 and by_name["completeness_awareness"].value == 0.5


def test_an_oracle_with_no_gaps_scores_no_gap_precision() -> None:
    """A planning task whose view decides (dd-zh-02, compliance officer): nothing to find, nothing to miss; a
    listed request neither helps nor hurts. The full view has no gaps either."""
    s, plan = task("dd-zh-02", "plan")
    oracle = plan.oracle["compliance_officer"]
    assert plan.type == "query_planning" and oracle.hidden_relevant == [] and oracle.sufficient
    for missing in ([], ["financials.net_profit", "anything else"]):
        x = score_answer(plan, oracle, parse_answer(json.dumps({"missing": missing, "sufficient": True})),
                         s.field_labels)
        assert (x["gap_precision"], x["gap_recall"]) == (None, None)
    full = RoleOracle(answer=None, sufficient=True)
    assert gap_scores(["litigation"], full.hidden_relevant, s.field_labels) == (None, None)
    # with gaps, an extra request still counts against precision
    assert gap_scores(["litigation", "weather"], ["litigation.amount"], s.field_labels) == (0.5, 1.0)


def test_a_labeller_is_shown_the_stale_oracle() -> None:
    from knowgap.suites.partial.suite import PartialOptions, PartialSuite

    suite = PartialSuite(PartialOptions())
    case = next(c for c in suite.cases() if c.id == "cs-zh-02/tier1_support_agent/urgency")
    reference = suite.label_reference(case, {"view": "authorized"})
    assert reference["best decision from this role's view"].startswith(CANNOT_DECIDE)
    assert case.dimensions == ["breadth", "timeliness"]  # type: ignore[attr-defined]
