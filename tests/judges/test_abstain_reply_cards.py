"""abstention-llm and factuality-llm measured on the real answers of abstain_replies.jsonl (issue 37, the card rule):
the sample is stratified by label and model, the judge sees what a run shows it, a judge that always says yes gets
0.5, each model's figures and the language are on the card, and a broken row is named by file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.judges.abstain_reply_cards import (
    ItemVerdict,
    abstain_reply_items,
    abstention_llm_card,
    factuality_llm_card,
    stratified_by_group,
)
from knowgap.judges.cards import ValidityCard, shipped_cards
from knowgap.judges.catalog import validate
from knowgap.judges.validation import _EARLIER, ABSTENTION_LLM, FACTUALITY_LLM, POLICYBENCH_RESPONSES
from knowgap.models.structured import ParseFailure
from tests.helpers import REPO, knowgap_cli, scripted
from tests.judges.test_catalog import small_set

MODELS = {"local:qwen2.5-0.5b", "local:qwen2.5-1.5b"}
RECORDED = REPO / "tests" / "fixtures" / "abstain_reply_cards"
"""Each shipped card's per-item outcomes, as its measuring run wrote them (NAME.verdicts.jsonl)."""


def test_the_sample_has_equal_classes_split_between_models_as_far_as_a_class_allows() -> None:
    # group b holds one positive: a's positives make up the rest of that class
    labels = [True] * 10 + [False] * 10 + [True] + [False] * 10
    groups = ["a"] * 20 + ["b"] * 11
    picked = stratified_by_group(labels, groups, 10)
    assert len(picked) == len(set(picked)) == 10
    chosen = [(labels[i], groups[i]) for i in picked]
    assert chosen.count((True, "b")) == 1 and chosen.count((True, "a")) == 4
    assert chosen.count((False, "a")) == 2 and chosen.count((False, "b")) == 3  # 5 split, the odd one to b
    assert stratified_by_group(labels, groups, 10) == picked  # seeded
    assert stratified_by_group(labels, groups, 10, seed=1) != picked
    assert stratified_by_group(labels, groups, None) == list(range(31))
    # a class too small for its half gives the rest to the other class
    few = stratified_by_group([True, False, False, False, False], ["a"] * 5, 4)
    assert len(set(few)) == 4 and 0 in few


def test_a_judge_that_always_says_yes_gets_half_and_the_card_states_what_it_measured(tmp_path: Path,
                                                                                      kg_home: Path) -> None:
    judge = scripted(tmp_path, '{"outcome": "yes"}')
    card = validate(ABSTENTION_LLM, limit=8, judge_model=judge)  # no --data: the shipped real replies
    assert card.judge == "abstention-llm" and card.dataset == "abstain_replies.jsonl" and card.judge_model == judge
    assert card.n == 8 and card.confusion is not None
    assert (card.confusion.tp, card.confusion.fn, card.confusion.fp, card.confusion.tn) == (4, 0, 4, 0)
    assert card.balanced_accuracy is not None and card.balanced_accuracy.value == pytest.approx(0.5)
    assert card.replies is not None and card.replies.kind == "real" and card.replies.models == dict.fromkeys(MODELS, 4)
    assert card.languages is not None and set(card.languages) == {"en"} and card.languages["en"].positives == 4
    assert card.labelling is not None and card.labelling.before_judge and "abstained-1" in card.labelling.rule
    assert "abstention_rate" in (card.claim or "") and "no card" in card.notes
    for model in MODELS:  # 2 of each class per model
        assert card.extra[f"n_{model}"] == 4 and card.extra[f"positives_{model}"] == 2
        assert card.extra[f"specificity_{model}"].value == 0.0  # type: ignore[union-attr]


def test_the_judge_sees_question_and_answer_text_and_parse_failures_count_wrong() -> None:
    items, _ = abstain_reply_items()
    asked: list[dict[str, str]] = []

    def outcomes(records: list[dict[str, str]]) -> list[str | ParseFailure]:
        asked.extend(records)
        # a judge that says yes to the placeholder only, and cannot be parsed on one record
        said: list[str | ParseFailure] = ["yes" if "citation" in r["response"].lower() else "no" for r in records]
        said[0] = ParseFailure(reason="not JSON", text="?")
        return said

    card, per_item = abstention_llm_card("abstention_v1", "python:x", outcomes, limit=12)
    by_id = {it.id: it for it in items}
    assert len(asked) == 12 and all(set(r) == {"question", "response"} for r in asked)
    for record, verdict in zip(asked, per_item, strict=True):
        item = by_id[verdict.id]
        assert record == {"question": item.question, "response": item.reply}
        assert verdict.label == item.abstained and verdict.model == item.model
    assert per_item[0].outcome is None and per_item[0].verdict is None and card.parse_failures == 1
    assert card.confusion is not None and card.confusion.n == 12
    wrong = sum(v.verdict != v.label for v in per_item)
    assert card.confusion.fn + card.confusion.fp == wrong


def test_factuality_is_measured_on_answered_items_only_with_the_exact_tier_agreement() -> None:
    items, _ = abstain_reply_items()
    tier_of = {(it.question, it.reply): it.tier for it in items if not it.abstained}

    def oracle(records: list[dict[str, str]]) -> list[str | ParseFailure]:
        assert all(set(r) == {"question", "expected_answer", "response"} for r in records)
        return [str(tier_of[(r["question"], r["response"])]) for r in records]  # KeyError: an abstention was asked

    card, per_item = factuality_llm_card("factuality_v1", "python:x", oracle, limit=10)
    assert card.n == 10 and card.balanced_accuracy is not None and card.balanced_accuracy.value == 1.0
    assert card.extra["exact_tier_agreement"] == 1.0 and sum(v.label for v in per_item) == 5
    tiers = [card.extra[f"label_tier_{k}"] for k in (1, 2, 3)]
    assert tiers[2] == 5.0 and sum(t for t in tiers if isinstance(t, float)) == 10.0
    flat, _ = factuality_llm_card("factuality_v1", "python:x", lambda rs: ["tier_1"] * len(rs), limit=10)
    assert flat.balanced_accuracy is not None and flat.balanced_accuracy.value == 0.5
    assert flat.extra["exact_tier_agreement"] != 1.0 and flat.positive == "acceptable (tier_1 or tier_2)"


def test_a_row_that_breaks_the_rule_is_named_by_file_line_and_field(tmp_path: Path) -> None:
    _, shipped = abstain_reply_items()
    rows = [json.loads(line) for line in shipped.read_text(encoding="utf-8").splitlines()[:3]]
    answered = next(r for r in rows if not r["abstained"])
    answered["tier"] = None
    bad = tmp_path / "abstain_replies.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    line = rows.index(answered) + 1
    with pytest.raises(InputError, match=rf"abstain_replies.jsonl, line {line}, field 'tier'"):
        abstain_reply_items(bad)
    rows[0]["tier"] = "tier_9"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError, match=r"line 1, field 'tier'"):
        abstain_reply_items(bad)


def test_a_data_folder_still_measures_on_policybench(tmp_path: Path, kg_home: Path) -> None:
    data = small_set(tmp_path / "data")
    judge = scripted(tmp_path, '{"outcome": "tier_3"}')
    card = validate(FACTUALITY_LLM, data_dir=data, judge_model=judge)
    assert card.dataset == POLICYBENCH_RESPONSES and card.n == 4


def test_cli_validates_on_the_real_replies_without_a_data_folder(tmp_path: Path, kg_home: Path) -> None:
    judge = scripted(tmp_path, '{"outcome": "no"}')
    out = tmp_path / "card.json"
    proc = knowgap_cli("judge", "validate", "abstention-llm", "--judge-model", judge, "--limit", "4", "--out",
                       str(out))
    assert proc.returncode == 0, proc.stderr
    card = ValidityCard.model_validate_json(out.read_text(encoding="utf-8"))
    assert card.n == 4 and card.dataset == "abstain_replies.jsonl" and card.balanced_accuracy is not None
    assert card.balanced_accuracy.value == 0.5 and card.languages is not None and set(card.languages) == {"en"}


@pytest.mark.parametrize("name", ["abstention-llm", "factuality-llm"])
def test_the_shipped_card_reproduces_from_its_recorded_verdicts(name: str) -> None:
    """The shipped card is what its validator makes of the outcomes the 1.5B gave (replayed): the same sample in the
    same order, the same labels, counts, figures and extras."""
    recorded = [ItemVerdict.model_validate_json(line)
                for line in (RECORDED / f"{name}.verdicts.jsonl").read_text(encoding="utf-8").splitlines()]
    items, _ = abstain_reply_items()
    by_id = {it.id: it for it in items}
    said: dict[tuple[str, str], str | None] = {}
    for verdict in recorded:
        item = by_id[verdict.id]
        assert verdict.label == (item.abstained if name == "abstention-llm" else item.acceptable)
        said[(item.question, item.reply)] = verdict.outcome

    def replay(records: list[dict[str, str]]) -> list[str | ParseFailure]:
        return [said[(r["question"], r["response"])] or ParseFailure(reason="recorded unparsed", text="")
                for r in records]

    (shipped,) = [c for c in shipped_cards() if c.judge == name]
    assert shipped.judge_model is not None
    make = abstention_llm_card if name == "abstention-llm" else factuality_llm_card
    card, per_item = make(shipped.version, shipped.judge_model, replay, earlier=_EARLIER)
    assert [p.id for p in per_item] == [v.id for v in recorded]
    for field in ("n", "confusion", "balanced_accuracy", "sensitivity", "specificity", "kappa", "parse_failures",
                  "languages", "replies", "labelling", "claim", "dataset", "dataset_sha256", "positive", "extra"):
        assert getattr(card, field) == getattr(shipped, field), field
