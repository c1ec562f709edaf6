"""The families' rules agree with the seed's worked examples, every scale is defined in the prompt, and every
family has depth and conflict cases in both languages (issue 37, items 5 and 6), on the shipped data."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from knowgap.suites.partial.dataset import DATA, FAMILIES, Scenario, Task, load_scenarios
from knowgap.suites.partial.dimensions import contradicted, evidence_loss
from knowgap.suites.partial.generate import FactSpec, influence, load_families, ranked_paths
from knowgap.suites.partial.prompts import task_prompt
from knowgap.suites.partial.view import build_view, render_view

SCENARIOS = {s.scenario_id: s for s in load_scenarios(DATA)}


def task(scenario_id: str, task_id: str) -> tuple[Scenario, Task]:
    s = SCENARIOS[scenario_id]
    return s, next(t for t in s.tasks if t.id == task_id)


def test_an_unusable_product_is_never_low_urgency() -> None:
    """The seed's worked example (4.3): a complaint that the product cannot be used at all, with the VIP level,
    order amounts and batch notes out of view, is 中 (medium): without a VIP or a known defect there is nothing
    to make it 高. The issue's two cases: cs-en-04 (tier-1 view) and cs-zh-02 (full data) were 低 / low."""
    s, t = task("cs-en-04", "urgency")
    assert "does not work at all" in s.ground_truth["complaint"]["text"]
    assert t.oracle["tier1_support_agent"].answer == "medium" and t.oracle_full == "high"  # a gold VIP
    s, t = task("cs-zh-02", "urgency")
    assert "完全无法使用" in s.ground_truth["complaint"]["text"] and t.oracle_full == "中"
    s, t = task("cs-zh-01", "urgency")  # the seed's own case
    assert (t.oracle["tier1_support_agent"].answer, t.oracle_full) == ("中", "高")
    unusable = [s for s in SCENARIOS.values() if s.family == "customer_support" and any(
        words in s.ground_truth["complaint"]["text"] for words in ("完全无法使用", "does not work at all"))]
    assert len(unusable) >= 8
    for s in unusable:
        urgency = next(t for t in s.tasks if t.id == "urgency")
        assert urgency.oracle_full not in ("低", "low"), s.scenario_id
        assert all(o.answer not in ("低", "low") for role, o in urgency.oracle.items()
                   if "complaint.text" not in o.hidden_relevant), s.scenario_id


def test_a_confirmed_compromise_is_never_the_lowest_severity() -> None:
    """si-en-06: four failed logins then a success from one IP (the root cause task calls it credential
    compromise) was P3, the lowest; malware on a tier0 host (si-zh-02) was P2."""
    for s in SCENARIOS.values():
        if s.family != "security_incident":
            continue
        severity = next(t for t in s.tasks if t.id == "severity")
        cause = next(t for t in s.tasks if t.id == "root_cause")
        if cause.oracle_full in ("credential_compromise", "malware_infection"):
            assert severity.oracle_full in ("P1", "P2"), s.scenario_id
    assert task("si-en-06", "severity")[1].oracle["ir_lead"].answer == "P2"
    assert task("si-zh-02", "severity")[1].oracle_full == "P1"


def test_every_scale_is_defined_in_the_prompt() -> None:
    """Each label of a decision task, and of the rule a gap or planning task asks about, is defined in the task
    prompt the agent gets ('LABEL = what it means'); a planning question names the decision it plans for."""
    families = {f["family"]: f for f in load_families()["families"]}
    for s in SCENARIOS.values():
        family = families[s.family]
        for t in s.tasks:
            spec = next(x for x in family["tasks"] if x["id"] == t.id)
            rule_tasks = [x for x in s.tasks if x.labels and next(
                y for y in family["tasks"] if y["id"] == x.id)["rule"] == spec["rule"]]
            labels = t.labels or rule_tasks[0].labels
            evidence = render_view(build_view(s, s.policy(s.roles[0])).view, s.effective_lang())
            prompt = task_prompt(s, t, evidence)
            for label in labels:
                assert f"{label} = " in prompt, (s.scenario_id, t.id, label)


def test_every_family_has_depth_and_conflict_cases_in_both_languages() -> None:
    """Depth: a role loses a deciding fact to a mask, bucket or summary (its view shows the path transformed).
    Conflict: a role's view shows the fact's source and another current source that disagrees with it, and the
    oracle cannot decide (the full data holds what settles it)."""
    depth: dict[tuple[str, str], int] = defaultdict(int)
    conflict: dict[tuple[str, str], int] = defaultdict(int)
    for s in SCENARIOS.values():
        for role in s.roles:
            built = build_view(s, s.policy(role))
            for t in s.tasks:
                o = t.oracle[role]
                for path in o.hidden_relevant:
                    loss = evidence_loss(s, s.policy(role), built, path)
                    if loss == "depth":
                        shown = [x for x in built.secrets if x.op != "denied"
                                 and re.sub(r"\[\d+\]", "", x.path).startswith(path)]
                        assert shown, (s.scenario_id, role, path)
                        depth[(str(s.family), s.effective_lang())] += 1
                    if contradicted(s, built, path) and not any(src.stale for k, src in s.sources.items()
                                                                if k in built.view.evidence):
                        assert loss == "timeliness"
                        if o.undecidable:
                            conflict[(str(s.family), s.effective_lang())] += 1
    for family in FAMILIES:
        for lang in ("zh", "en"):
            assert depth[(family, lang)] >= 1, (family, lang, "depth")
            assert conflict[(family, lang)] >= 1, (family, lang, "conflict")


def test_the_full_view_settles_a_conflict_the_role_cannot() -> None:
    """cs-zh-08: the tier-1 agent sees the customer record (no VIP) and the loyalty system (gold), current both;
    the support lead also sees which one is of record, and decides."""
    s, t = task("cs-zh-08", "urgency")
    tier1 = build_view(s, s.policy("tier1_support_agent"))
    assert tier1.view.evidence["customer"]["vip_level"] == "none"
    assert tier1.view.evidence["membership"]["vip_level"] == "gold"
    assert not any(src.stale for src in s.sources.values())
    assert contradicted(s, tier1, "customer.vip_level")
    assert t.oracle["tier1_support_agent"].undecidable
    assert "timeliness" in (t.oracle["tier1_support_agent"].dimensions or [])
    lead = t.oracle["support_lead"]
    assert "data_owners" in build_view(s, s.policy("support_lead")).view.evidence
    assert (lead.answer, lead.sufficient) == (t.oracle_full, True)


@pytest.mark.parametrize(("scenario_id", "task_id", "order"), [
    # severity: malware alone makes P1; a successful login P2 (P1 on tier0); the tier matters less; a known-bad
    # IP only for attempts on tier0
    ("si-en-04", "plan", ["edr_events", "auth_logs.result", "cmdb.criticality", "threat_intel.reputation"]),
    # urgency: the complaint decides most; the order amount never does
    ("cs-zh-01", "urgency", ["complaint.text", "internal_notes", "customer.vip_level"]),
    # risk: a sanctions match alone makes it high
    ("dd-zh-01", "plan", ["sanctions_screening.result", "litigation.amount", "financials.net_profit",
                          "company.legal_rep"]),
])
def test_deciding_evidence_is_ranked_by_how_much_it_can_change_the_answer(scenario_id: str, task_id: str,
                                                                          order: list[str]) -> None:
    assert task(scenario_id, task_id)[1].relevant == order


def test_influence_counts_the_assignments_a_fact_flips() -> None:
    specs = [FactSpec("a", "r.a"), FactSpec("b", "r.b"), FactSpec("c", "r.c")]

    def rule(f: dict[str, bool]) -> str:
        return "hi" if f["a"] or (f["b"] and f["c"]) else "lo"

    assert [influence(rule, specs, s) for s in specs] == [3, 1, 1]
    assert ranked_paths(rule, specs) == ["r.a", "r.b", "r.c"]
    assert ranked_paths(lambda f: "x", specs) == []
