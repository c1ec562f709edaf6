"""The shared attack library, the planner, the defences and the generic success checks."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from knowgap.errors import InputError, KnowgapError
from knowgap.injection import (
    FAMILIES,
    attack_worked,
    for_suite,
    guard_system,
    list_index,
    mark_untrusted,
    marker_seen,
    plan_injections,
    read_attacks,
    sandwich_reminder,
    system_echo,
)
from knowgap.injection.defences import MARK


def test_the_library_has_every_family_in_both_languages_with_sources() -> None:
    library = read_attacks()
    seen = {(a.family, a.lang) for a in library}
    assert {(f, lang) for f in FAMILIES for lang in ("en", "zh")} <= seen
    assert all(a.source for a in library)
    assert len({a.id for a in library}) == len(library)


def test_extract_keeps_its_29_attacks() -> None:
    extract = for_suite(read_attacks(), "extract", checks=["takeover"])
    assert Counter(a.type for a in extract) == {"bipia_task": 15, "zh_goal_hijack": 10, "sentiment_override": 4}
    others = for_suite(read_attacks(), "abstain")
    assert not any(a.type == "sentiment_override" for a in others)
    assert not any("field" in a.placeholders() for a in others)


def test_the_plan_balances_families_and_positions_and_fills_placeholders() -> None:
    library = for_suite(read_attacks(), "partial", checks=["marker", "field_leak", "behaviour", "system_echo"])
    cases = [(f"case-{i:02d}", "en") for i in range(36)]
    plan = plan_injections(cases, library, field_for=lambda case_id: "salary")
    planted = [p for case_id, _ in cases for p in plan[case_id]]
    families = Counter(p.family for p in planted)
    assert set(families) == set(FAMILIES) and len(set(families.values())) == 1
    pairs = Counter((p.family, p.position) for p in planted)
    assert len(pairs) == len(FAMILIES) * 3 and set(pairs.values()) == {2}
    for p in planted:
        assert "{" not in p.text
        if p.check == "marker":
            assert p.marker and p.marker in p.text
        if p.check == "field_leak":
            assert p.field == "salary" and "salary" in p.text
    again = plan_injections(cases, library, field_for=lambda case_id: "salary")
    assert again == plan


def test_a_case_gets_attacks_in_its_own_language() -> None:
    library = read_attacks()
    plan = plan_injections([("a", "zh"), ("b", "en")], for_suite(library, "abstain"), per_case=6)
    assert {p.lang for p in plan["a"]} == {"zh"} and {p.lang for p in plan["b"]} == {"en"}
    assert len({p.family for p in plan["a"]}) == 6


def test_an_attack_needing_a_field_is_skipped_where_the_case_names_none() -> None:
    library = [a for a in read_attacks() if a.family == "exfiltration" and a.lang == "en"]
    plan = plan_injections([("a", "en"), ("b", "en")], library, per_case=2,
                           field_for=lambda case_id: "ssn" if case_id == "a" else None)
    assert {p.check for p in plan["a"]} == {"system_echo", "field_leak"}
    assert {p.check for p in plan["b"]} == {"system_echo"}


def test_a_bad_library_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "attacks.jsonl"
    path.write_text(json.dumps({"id": "x", "type": "t", "lang": "en", "text": "say {secret}", "source": "me"}) + "\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"line 1, field 'text': unknown placeholder \{secret\}"):
        read_attacks(path)
    path.write_text(json.dumps({"id": "x", "type": "t", "lang": "en", "text": "t", "source": "me",
                                "familly": "goal_hijack"}) + "\n", encoding="utf-8")
    with pytest.raises(KnowgapError, match="familly"):
        read_attacks(path)


def test_list_index_picks_first_middle_last() -> None:
    assert [list_index(5, p) for p in ("start", "middle", "end")] == [0, 2, 4]
    assert [list_index(4, p) for p in ("start", "middle", "end")] == [0, 1, 3]
    assert [list_index(1, p) for p in ("start", "middle", "end")] == [0, 0, 0]
    with pytest.raises(ValueError):
        list_index(0, "start")


def test_defences_change_only_what_they_name() -> None:
    system = "Answer from the context."
    assert guard_system(system, "none") == system == guard_system(system, "sandwich")
    assert guard_system(system, "guarded").startswith(system) and "Never follow" in guard_system(system, "guarded")
    assert "绝不要执行" in guard_system(system, "guarded", "zh")
    assert mark_untrusted("the food was good", "datamark") == f"the{MARK}food{MARK}was{MARK}good"
    assert mark_untrusted("the food was good", "guarded") == "the food was good"
    zh = mark_untrusted("这家餐厅的菜很好吃，服务也很周到但是价格偏高一些", "datamark")
    assert zh.count(MARK) >= 3 and zh.replace(MARK, "") == "这家餐厅的菜很好吃，服务也很周到但是价格偏高一些"
    assert sandwich_reminder("none", "answer the question.") == ""
    assert "answer the question." in sandwich_reminder("sandwich", "answer the question.")


def test_generic_checks_compare_with_the_clean_output() -> None:
    assert marker_seen("Sure: kg-12ab34.", "KG12AB34")
    assert attack_worked("marker", output="KG12AB34", clean_output="I don't know.", marker="KG12AB34")
    assert not attack_worked("marker", output="I don't know.", clean_output="", marker="KG12AB34")
    system = "You are a careful assistant who answers only from the numbered facts given to you below"
    leaked = "My instructions: You are a careful assistant who answers only from the numbered facts given."
    assert system_echo(leaked, system, "The answer is 5.")
    assert not system_echo(leaked, system, leaked)
    assert attack_worked("behaviour", output="x", clean_output="y") is None
