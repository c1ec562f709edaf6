"""Each suite's own shapes under the strict check: legitimate shorthand keeps working, coercion and unknown
fields are refused with the file, the line and the field named, and the suite's own rules are listed with the rest."""

from __future__ import annotations

import json
from pathlib import Path

from knowgap.casefiles import check
from knowgap.suites.partial.dataset import DATA as PARTIAL_SCENARIOS
from knowgap.suites.starter.dataset import DATA as STARTER_CASES
from tests.helpers import write_jsonl


def first_scenario() -> dict[str, object]:
    return dict(json.loads(PARTIAL_SCENARIOS.read_text(encoding="utf-8").splitlines()[0]))


def test_partial_rule_strings_keep_their_numbers_and_coercion_is_refused(tmp_path: Path) -> None:
    scenario = first_scenario()
    policy = scenario["policies"][0]  # type: ignore[index]
    policy["masking_rules"] = {"customer.phone": "keep_last:4", "orders.amount": "bucket:100,1000:元"}
    good = check("partial", write_jsonl(tmp_path / "good.jsonl", [scenario]))
    assert good.problems == []
    rules = good.records[0][1].policies[0].masking_rules
    assert rules["customer.phone"].n == 4 and rules["orders.amount"].edges == [100.0, 1000.0]

    policy["masking_rules"] = {"customer.phone": "keep_last:four"}
    scenario["sources"]["customer"]["stale"] = "true"  # type: ignore[index]
    path = write_jsonl(tmp_path / "bad.jsonl", [scenario, scenario])
    found = [str(p) for p in check("partial", path).problems]
    sid = scenario["scenario_id"]
    assert found == [
        f"{path}, line 1, field 'sources.customer.stale': Input should be a valid boolean (got a string \"true\")",
        f"{path}, line 1, field 'policies.0.masking_rules.customer.phone.n': Input should be a valid integer "
        "(got a string \"four\")",
        f"{path}, line 2, field 'scenario_id': duplicate scenario_id '{sid}' (also on line 1)",
        *found[3:]]
    assert len(found) == 5  # line 2 repeats line 1's two problems


def test_partial_policy_rules_are_listed_with_the_line(tmp_path: Path) -> None:
    scenario = first_scenario()
    scenario["policies"][0]["allowed_evidence"]["customer"] = ["id", "shoe_size"]  # type: ignore[index]
    path = write_jsonl(tmp_path / "s.jsonl", [scenario])
    (problem,) = check("partial", path).problems
    assert (problem.line, problem.field) == (1, "policies.0.allowed_evidence.customer.fields")
    assert "unknown field(s) ['shoe_size'] of 'customer'" in problem.message


def test_starter_rule_and_schema_problems_come_together_in_line_order(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in STARTER_CASES.read_text(encoding="utf-8").splitlines()[:3]]
    answerable = next(i for i, r in enumerate(rows) if r["answerable"])
    rows[answerable]["answers"] = []
    rows[-1]["lang"] = "fr"
    path = write_jsonl(tmp_path / "s.jsonl", rows)
    found = check("starter", path).problems
    assert [(p.line, p.field) for p in found] == sorted([(answerable + 1, "answers"), (3, "lang")])
    assert {p.message for p in found} == {"an answerable case needs at least one accepted answer",
                                          "Input should be 'en' or 'zh' (got a string \"fr\")"}


def test_abstain_knowledge_bases_in_each_format(tmp_path: Path) -> None:
    csv = tmp_path / "faq.csv"
    csv.write_text("questoin,answer,notes\nQ?,A.,x\n", encoding="utf-8")
    assert [(p.line, p.field, p.message.split(" (")[0]) for p in check("abstain", csv).problems] == [
        (1, "question", "the CSV header needs question and answer columns"),
        (1, "questoin", "unknown column"), (1, "notes", "unknown column")]
    assert "did you mean 'question'?" in check("abstain", csv).problems[1].message
    jl = write_jsonl(tmp_path / "kb.jsonl", [{"question": "Q?", "answer": "A.", "identifier": 7},
                                             {"question": "Q2?", "answer": " "}])
    assert [(p.line, p.field) for p in check("abstain", jl).problems] == [(1, "identifier"), (2, "answer")]
    good = tmp_path / "kb.json"
    good.write_text(json.dumps({"knowledge_base_identifier": "mine", "generated_by": "knowgap generate abstain",
                                "questions": [{"question": "Q?", "answer": "A.", "answer_method": "fact text"},
                                              {"question": "Q2?", "answer": "B."}]}), encoding="utf-8")
    result = check("abstain", good)
    assert result.problems == [] and result.summary() == f"{good}: 2 QA pairs OK (mine 2)"
    assert [fact.id for _, fact in result.records] == ["mine_0", "mine_1"]
