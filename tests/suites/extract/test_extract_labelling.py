"""The normal cases' labels come from two annotation passes: agreed, undisputed fields are scored, the rest is
analysis-only; the shipped cases are exactly what the merge of the shipped passes gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowgap.errors import InputError
from knowgap.suites.extract.dataset import load_cases
from knowgap.suites.extract.labelling import PASS_FILES, PassLabel, load_merged, load_pass, merge_passes


def _row(case_id: str, sentiment: str = "positive", conflicting: bool = False, *, sd: bool = False,
         cd: bool = False) -> PassLabel:
    return PassLabel(id=case_id, sentiment=sentiment, sentiment_disputable=sd,  # type: ignore[arg-type]
                     conflicting=conflicting, conflicting_disputable=cd, reason="r")


def test_agreed_undisputed_fields_are_scored_the_rest_is_analysis_only() -> None:
    a = [_row("x1", "positive", True), _row("x2", "negative", False), _row("x3", "neutral", False, sd=True),
         _row("x4", "positive", True, cd=True)]
    b = [_row("x4", "negative", True, cd=True), _row("x3", "neutral", False), _row("x2", "negative", True),
         _row("x1", "positive", True)]
    merged = merge_passes(a, b)
    assert (merged["x1"].expected_sentiment, merged["x1"].expected_conflicting, merged["x1"].analysis_labels) == \
        ("positive", True, {})
    x2 = merged["x2"]
    assert x2.expected_sentiment == "negative" and x2.expected_conflicting is None
    assert x2.analysis_labels["conflicting"].model_dump() == {"a": False, "b": True, "why": "the passes disagree"}
    x3 = merged["x3"]
    assert x3.expected_sentiment is None and x3.expected_conflicting is False
    assert x3.analysis_labels["sentiment"].why == "disputable (a)"
    x4 = merged["x4"]
    assert x4.expected_sentiment is None and x4.expected_conflicting is None
    assert x4.analysis_labels["sentiment"].why == "the passes disagree"
    assert x4.analysis_labels["conflicting"].why == "disputable (a, b)"


def test_passes_over_different_cases_are_refused() -> None:
    with pytest.raises(ValueError, match=r"only in a \['x2'\], only in b \[\]"):
        merge_passes([_row("x1"), _row("x2")], [_row("x1")])


@pytest.mark.parametrize(("line", "message"), [
    ({"id": "x", "sentiment": "Positive", "sentiment_disputable": False, "conflicting": False,
      "conflicting_disputable": False, "reason": "r"}, "line 2, field 'sentiment'"),
    ({"id": "x", "sentiment": "positive", "sentiment_disputable": False, "conflicting": "yes",
      "conflicting_disputable": False, "reason": "r"}, "line 2, field 'conflicting'"),
    ({"id": "a", "sentiment": "positive", "sentiment_disputable": False, "conflicting": False,
      "conflicting_disputable": False, "reason": "r"}, "line 2, field 'id': id 'a' appears twice"),
])
def test_a_bad_pass_line_is_one_error_naming_file_line_and_field(tmp_path: Path, line: dict[str, Any],
                                                                 message: str) -> None:
    first = {"id": "a", "sentiment": "neutral", "sentiment_disputable": False, "conflicting": False,
             "conflicting_disputable": False, "reason": "r"}
    path = tmp_path / "pass.jsonl"
    path.write_text(json.dumps(first) + "\n" + json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_pass(path)


def test_the_shipped_normal_cases_carry_the_merged_labels_of_the_shipped_passes() -> None:
    merged = load_merged()
    normal = {c.id: c for c in load_cases() if c.kind == "normal"}
    assert set(normal) == set(merged) and len(normal) == 40
    for case_id, labels in merged.items():
        case = normal[case_id]
        assert (case.expected_sentiment, case.expected_conflicting) == \
            (labels.expected_sentiment, labels.expected_conflicting), case_id
        assert case.analysis_labels == labels.analysis_labels, case_id
    assert {p.name for p in PASS_FILES.values()} == {"labels-a.jsonl", "labels-b.jsonl"}


def test_the_generator_writes_the_merged_labels_and_keeps_the_earlier_ones_in_label_source() -> None:
    from knowgap.suites.extract.generate import relabel

    case = {"id": "x1", "kind": "normal", "lang": "en", "review": "r", "expected_sentiment": None,
            "expected_conflicting": True, "label_source": "MAMS-ACSA_test.xml sentence 1; MAMS aspect polarities"}
    merged = merge_passes([_row("x1", "negative", False, cd=True)], [_row("x1", "negative", False)])
    (out,) = relabel([case], merged)
    assert (out["expected_sentiment"], out["expected_conflicting"]) == ("negative", None)
    assert out["analysis_labels"] == {"conflicting": {"a": False, "b": False, "why": "disputable (a)"}}
    assert out["label_source"].startswith("MAMS-ACSA_test.xml sentence 1; labels: two independent passes")
    assert out["label_source"].endswith("before: sentiment None, conflicting True")
