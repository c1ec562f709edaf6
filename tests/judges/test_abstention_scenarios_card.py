"""The abstention detector's card on the abstain scenarios' replies (issue 19): the validator counts the shipped
labelled set as the file says, keeps only the replies both annotators agree on, gives each scenario its own
numbers, and the scenario runs' abstention metrics are looked up against this card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.judges.abstention import VERSION, judge_abstention
from knowgap.judges.cards import find_card
from knowgap.judges.detector_validation import validate_abstention_scenarios
from knowgap.judges.labelled_sets import LABELLED_DIR
from knowgap.suites import get_suite

SHIPPED = LABELLED_DIR / "abstention_scenarios.jsonl"


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _abstained(row: dict[str, object], annotator: str) -> bool:
    label = row[annotator]
    assert isinstance(label, dict)
    return bool(label["abstained"])


def test_the_card_counts_the_agreed_replies_of_the_shipped_file(tmp_path: Path) -> None:
    rows = _rows(SHIPPED)
    agreed = [r for r in rows if _abstained(r, "label_a") == _abstained(r, "label_b")]
    card = validate_abstention_scenarios(tmp_path)
    assert card.judge == "abstention-scenarios" and card.version == VERSION and card.confusion is not None
    assert card.n == len(agreed)
    assert card.confusion.tp + card.confusion.fn == sum(_abstained(r, "label_a") for r in agreed)
    detected = sum(judge_abstention(str(r["response"])).abstained for r in agreed)
    assert card.confusion.tp + card.confusion.fp == detected
    assert f"{len(rows) - len(agreed)} of {len(rows)} replies left out" in card.method
    for scenario in {str(r["scenario"]) for r in agreed}:
        mine = [r for r in agreed if r["scenario"] == scenario]
        assert card.extra[f"n_{scenario}"] == len(mine)
        assert card.extra[f"positives_{scenario}"] == sum(_abstained(r, "label_a") for r in mine)
        assert f"specificity_{scenario}" in card.extra and f"balanced_accuracy_{scenario}" in card.extra
    agreement = card.extra["annotator_agreement"]
    assert not isinstance(agreement, (float, str)) and agreement.value == len(agreed) / len(rows)


def _row(item: str, scenario: str, a: bool, b: bool, response: str) -> dict[str, object]:
    return {"id": item, "scenario": scenario, "question": "q?", "response": response, "source": "test",
            "label_a": {"abstained": a, "disputable": False, "reason": "r"},
            "label_b": {"abstained": b, "disputable": a != b, "reason": "r"}}


def test_a_disagreement_is_left_out_and_each_scenario_gets_its_numbers(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    rows = [_row("1", "unknowable", True, True, "No one knows the answer to this question."),
            _row("2", "unknowable", False, False, "Paris is the capital of France."),
            _row("3", "unknowable", True, False, "I don't know."),
            _row("4", "false-premise", False, False, "Canada joined the European Union in 1997.")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    card = validate_abstention_scenarios(tmp_path, path=path)
    assert card.n == 3 and card.confusion is not None
    assert (card.confusion.tp, card.confusion.fn, card.confusion.fp, card.confusion.tn) == (1, 0, 0, 2)
    assert card.extra["n_unknowable"] == 2 and card.extra["positives_false-premise"] == 0
    assert "1 of 4 replies left out" in card.method


def test_a_malformed_line_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    bad = _row("2", "unknowable", False, False, "x")
    del bad["label_b"]["abstained"]  # type: ignore[attr-defined]
    path.write_text(json.dumps(_row("1", "unknowable", True, True, "y")) + "\n" + json.dumps(bad) + "\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"set.jsonl, line 2, field 'label_b.abstained'"):
        validate_abstention_scenarios(tmp_path, path=path)


def test_scenario_runs_look_their_abstention_metrics_up_against_this_card() -> None:
    cls = get_suite("abstain")
    offline = cls(cls.Options(scenario="false-premise")).metric_judges()
    assert {offline[m].judge for m in ("abstention_precision", "abstention_recall", "abstention_f1")} == \
        {"abstention-scenarios"}
    assert offline["abstention_f1"].version == VERSION
    card = find_card("abstention-scenarios", VERSION)
    assert card is not None and card.dataset == SHIPPED.name
    llm = cls(cls.Options(scenario="false-premise", abstention_judge="llm")).metric_judges()
    assert llm["abstention_f1"].judge == "abstention-llm"
    assert cls(cls.Options()).metric_judges()["abstention_rate"].judge == "abstention"  # leave-one-out: PolicyBench
