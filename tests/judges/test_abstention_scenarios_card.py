"""The abstention detector's card on the abstain scenarios' replies (issue 19; two models' since issue 37): the
validator counts the shipped labelled set as the file says, keeps the replies with a gold label (the two annotators'
agreed one, or the one annotator's), gives each scenario, model and model-and-language its own numbers, states the
card rule's facts of the set, and the scenario runs' abstention metrics are looked up against this card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.judges.abstention import VERSION, judge_abstention
from knowgap.judges.cards import ValidityCard, find_card
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


def _gold(row: dict[str, object]) -> bool | None:
    """The one annotator's label, or the two annotators' when they agree (None: they disagree)."""
    if row.get("label_b") is not None and _abstained(row, "label_b") != _abstained(row, "label_a"):
        return None
    return _abstained(row, "label_a")


def _model(row: dict[str, object]) -> str:
    return str(row["source"]).split(",", 1)[0]


@pytest.fixture(scope="module")
def measured() -> ValidityCard:
    """The card measured now on the shipped set (once for the tests that read it)."""
    return validate_abstention_scenarios(None)


def test_the_card_counts_the_gold_replies_of_the_shipped_file(measured: ValidityCard) -> None:
    rows = _rows(SHIPPED)
    gold = [r for r in rows if _gold(r) is not None]
    card = measured
    assert card.judge == "abstention-scenarios" and card.version == VERSION and card.confusion is not None
    assert card.n == len(gold)
    assert card.confusion.tp + card.confusion.fn == sum(bool(_gold(r)) for r in gold)
    detected = sum(judge_abstention(str(r["response"])).abstained for r in gold)
    assert card.confusion.tp + card.confusion.fp == detected
    assert f"{len(rows) - len(gold)} of {len(rows)} replies left out" in card.method
    for key, group in (("scenario", lambda r: str(r["scenario"])), ("model", _model)):
        for name in {group(r) for r in gold}:
            mine = [r for r in gold if group(r) == name]
            assert card.extra[f"n_{name}"] == len(mine), key
            assert card.extra[f"positives_{name}"] == sum(bool(_gold(r)) for r in mine), key
            assert f"specificity_{name}" in card.extra and f"balanced_accuracy_{name}" in card.extra, key
    double = [r for r in rows if r.get("label_b") is not None]
    agreement = card.extra["annotator_agreement"]
    assert not isinstance(agreement, (float, str))
    assert agreement.value == sum(_abstained(r, "label_a") == _abstained(r, "label_b") for r in double) / len(double)


def test_the_card_is_measured_on_two_models_replies_and_states_it(measured: ValidityCard) -> None:
    """The card rule's facts of the set, stated by the validator (a changed set inherits nothing): the two models
    with their counts, each language's n and positives, who labelled each model's replies, the hedged-answer known
    failure; and the shipped card is this measurement (same set, same counts and figures)."""
    from knowgap.judges.cards import SHIPPED_DIR, assess, card_key
    from knowgap.text import detect_lang

    gold = [r for r in _rows(SHIPPED) if _gold(r) is not None]
    card = measured
    assert card.replies is not None and (card.replies.kind, card.replies.constructed) == ("real", 0)
    assert card.replies.models == {m: sum(_model(r) == m for r in gold) for m in {_model(r) for r in gold}}
    assert set(card.replies.models) == {"local:qwen2.5-0.5b", "local:qwen2.5-1.5b"}
    assert card.languages is not None and {k: (f.n, f.positives) for k, f in card.languages.items()} == {
        lang: (sum(detect_lang(str(r["question"])) == lang for r in gold),
               sum(detect_lang(str(r["question"])) == lang and bool(_gold(r)) for r in gold)) for lang in ("en", "zh")}
    assert card.labelling is not None and "local:qwen2.5-0.5b's" in card.labelling.by
    assert "two annotators" in card.labelling.by and "one annotator" in card.labelling.by
    assert [k.labelled_set.rsplit("/", 1)[-1] for k in card.known_failures] == ["hedged_answers.jsonl"]
    assert card.claim is not None and "abstention_f1" in card.claim
    shipped = ValidityCard.model_validate_json(
        (SHIPPED_DIR / f"{card_key(card.judge, card.version)}.json").read_text(encoding="utf-8"))
    assert shipped.dataset_sha256 == card.dataset_sha256
    assert (shipped.confusion, shipped.balanced_accuracy, shipped.languages, shipped.replies, shipped.labelling,
            shipped.extra) == (card.confusion, card.balanced_accuracy, card.languages, card.replies, card.labelling,
                               card.extra)
    assert assess(shipped).status == assess(card).status


def test_the_second_models_replies_answer_the_same_sampled_questions() -> None:
    """Each 0.5B reply answers a question of the shipped scenario file (same text, same paragraph), and the 0.5B
    answered the very questions the 1.5B did (the same --sample 40 --seed 0 draw), one reply per question."""
    from knowgap.suites.abstain.scenario_data import SHIPPED as SCENARIOS

    questions = {(path.stem, row["id"]): row for path in SCENARIOS.glob("*.jsonl")
                 for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    rows = _rows(SHIPPED)
    by_model: dict[str, set[str]] = {}
    for r in rows:
        scenario, case = str(r["scenario"]), str(r["id"]).rsplit("/", 1)[-1]
        question = questions[(scenario, case)]
        assert question["question"] == r["question"] and question.get("context") == r.get("context"), r["id"]
        by_model.setdefault(_model(r), set()).add(f"{scenario}/{case}")
        if _model(r) == "local:qwen2.5-0.5b":
            assert r["id"] == f"05/{scenario}/{case}" and r["label_b"] is None, r["id"]
            assert "--sample 40 --seed 0" in str(r["source"]), r["id"]
    assert by_model["local:qwen2.5-0.5b"] == by_model["local:qwen2.5-1.5b"]
    assert sum(_model(r) == "local:qwen2.5-0.5b" for r in rows) == 120


def _row(item: str, scenario: str, a: bool, b: bool | None, response: str,
         model: str = "local:one") -> dict[str, object]:
    return {"id": item, "scenario": scenario, "question": "q?", "response": response, "source": f"{model}, test",
            "label_a": {"abstained": a, "disputable": False, "reason": "r"},
            "label_b": None if b is None else {"abstained": b, "disputable": a != b, "reason": "r"}}


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


def test_a_reply_one_annotator_labelled_counts_with_that_label_and_not_in_the_annotators_agreement(
        tmp_path: Path) -> None:
    """A row with label_b null is gold by its one label (even where the detector disagrees); the two annotators'
    agreement is computed on the rows both labelled only, and each model gets its figures."""
    path = tmp_path / "set.jsonl"
    rows = [_row("1", "unknowable", True, True, "No one knows the answer to this question.", "local:big"),
            _row("2", "unknowable", True, False, "I don't know.", "local:big"),
            _row("3", "unknowable", False, False, "Paris is the capital of France.", "local:big"),
            _row("05/1", "unknowable", True, None, "No one knows the answer to this question.", "local:small"),
            _row("05/2", "unknowable", True, None, "Paris.", "local:small"),
            _row("05/3", "unknowable", False, None, "Paris is the capital of France.", "local:small")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    card = validate_abstention_scenarios(tmp_path, path=path)
    assert card.n == 5 and card.confusion is not None
    assert (card.confusion.tp, card.confusion.fn, card.confusion.fp, card.confusion.tn) == (2, 1, 0, 2)
    assert card.extra["n_local:small"] == 3 and card.extra["positives_local:small"] == 2
    assert card.extra["n_local:big_en"] == 2
    agreement = card.extra["annotator_agreement"]
    assert not isinstance(agreement, (float, str)) and agreement.value == 2 / 3
    assert card.replies is not None and card.replies.models == {"local:big": 2, "local:small": 3}
    assert card.labelling is not None and "local:small's 3 replies: one annotator" in card.labelling.by
    assert "local:big's 3 replies: two annotators" in card.labelling.by


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


@pytest.mark.parametrize(("change", "field"), [({"source": "test run"}, "source"), ({"id": "1"}, "id")])
def test_a_row_without_its_model_or_with_a_taken_id_names_file_line_and_field(
        tmp_path: Path, change: dict[str, object], field: str) -> None:
    path = tmp_path / "set.jsonl"
    second = {**_row("2", "unknowable", False, None, "x"), **change}
    path.write_text(json.dumps(_row("1", "unknowable", True, True, "y")) + "\n" + json.dumps(second) + "\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match=rf"set.jsonl, line 2, field '{field}'"):
        validate_abstention_scenarios(tmp_path, path=path)
