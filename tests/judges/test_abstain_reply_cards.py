"""The abstain suite's judges measured on the real answers of abstain_replies.jsonl (issue 37, the card rule):
abstention-llm and factuality-llm on a sample stratified by label and model, the offline abstention detector and
factuality judge on every item. The judge sees what a run shows it, a judge that always says yes gets 0.5, each
model's figures and the language are on the card, the shipped cards reproduce, and a broken row is named by file,
line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.judges.abstain_reply_cards import (
    ItemVerdict,
    abstain_reply_items,
    abstention_detector_card,
    abstention_llm_card,
    detector_outcomes,
    factuality_llm_card,
    factuality_offline_card,
    is_placeholder,
    offline_tiers,
    stratified_by_group,
)
from knowgap.judges.abstention import VERSION as DETECTOR
from knowgap.judges.cards import SUPERSEDED_DIR, ValidityCard, cards_in, shipped_cards
from knowgap.judges.catalog import validate
from knowgap.judges.factuality import VERSION as FACTUALITY_VERSION
from knowgap.judges.validation import ABSTENTION_LLM, EARLIER_POLICYBENCH, FACTUALITY_LLM, POLICYBENCH_RESPONSES
from knowgap.models.structured import ParseFailure
from knowgap.suites.judge_registry import get_judge
from tests.helpers import REPO, knowgap_cli, scripted
from tests.judges.test_catalog import small_set

MODELS = {"local:qwen2.5-0.5b", "local:qwen2.5-1.5b"}
RECORDED = REPO / "tests" / "fixtures" / "abstain_reply_cards"
"""Each shipped model-judge card's per-item outcomes, as its measuring run wrote them (NAME.verdicts.jsonl), and the
offline factuality judge's tiers of the answers its card was measured on (factuality.verdicts.jsonl)."""


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
    card, per_item = make(shipped.version, shipped.judge_model, replay, earlier=EARLIER_POLICYBENCH)
    assert [p.id for p in per_item] == [v.id for v in recorded]
    for field in ("n", "confusion", "balanced_accuracy", "sensitivity", "specificity", "kappa", "parse_failures",
                  "languages", "replies", "labelling", "claim", "dataset", "dataset_sha256", "positive", "extra"):
        assert getattr(card, field) == getattr(shipped, field), field


# --- the offline judges on the same set (abstention, factuality): every item, no model ---------------------------


def test_a_detector_that_always_says_abstained_gets_half_on_every_item_with_each_models_figures() -> None:
    items, _ = abstain_reply_items()
    card, per_item = abstention_detector_card(lambda records: ["abstained"] * len(records))
    positives = sum(it.abstained for it in items)
    assert (card.judge, card.version, card.judge_model, card.dataset) == ("abstention", DETECTOR, None,
                                                                           "abstain_replies.jsonl")
    assert card.n == len(items) == len(per_item) and card.method == f"all {len(items)} labelled real replies"
    assert card.confusion is not None and (card.confusion.tp, card.confusion.fn) == (positives, 0)
    assert (card.confusion.fp, card.confusion.tn) == (len(items) - positives, 0)
    assert card.balanced_accuracy is not None and card.balanced_accuracy.value == pytest.approx(0.5)
    assert card.replies is not None and card.replies.kind == "real"
    assert card.replies.models == {m: sum(it.model == m for it in items) for m in MODELS}
    assert card.languages is not None and set(card.languages) == {"en"}
    assert card.labelling is not None and card.labelling.before_judge and "abstained-1" in card.labelling.rule
    assert "abstain.abstention_rate" in (card.claim or "") and "starter" in (card.claim or "")
    for model in MODELS:  # each model's own figures, counted from the set
        assert card.extra[f"n_{model}"] == sum(it.model == model for it in items)
        assert card.extra[f"positives_{model}"] == sum(it.model == model and it.abstained for it in items)
        assert card.extra[f"specificity_{model}"].value == 0.0  # type: ignore[union-attr]
    placeholders = sum(is_placeholder(it.reply) for it in items)
    assert card.extra["n_placeholder"] == placeholders and card.extra["n_worded"] == len(items) - placeholders
    assert card.extra["n_disputed"] == sum("abstained" in it.disputable for it in items)
    # the known failure stays on the card, re-measured on its own set
    (hedged,) = card.known_failures
    assert hedged.labelled_set.endswith("hedged_answers.jsonl") and hedged.n == 24
    assert not any(k.startswith("policybench_gpt4o") for k in card.extra)  # no earlier card asked for


def test_the_detector_is_given_the_answer_text_a_run_gives_it_and_decides_as_a_run_does() -> None:
    from knowgap.judges.abstention import judge_abstention

    items, _ = abstain_reply_items()
    asked: list[dict[str, str]] = []

    def spy(records: list[dict[str, str]]) -> list[str | ParseFailure]:
        asked.extend(records)
        return detector_outcomes(records)

    card, per_item = abstention_detector_card(spy, limit=20)
    by_id = {it.id: it for it in items}
    assert len(asked) == card.n == 20 and sum(v.label for v in per_item) == 10  # stratified: 10 of each class
    for record, verdict in zip(asked, per_item, strict=True):
        item = by_id[verdict.id]
        assert record == {"response": item.reply} and verdict.label == item.abstained
        assert verdict.verdict == judge_abstention(item.reply).abstained
        assert verdict.outcome == ("abstained" if verdict.verdict else "answered")


def test_the_offline_factuality_card_takes_every_answered_item_with_the_disputed_split() -> None:
    items, _ = abstain_reply_items()
    answered = [it for it in items if not it.abstained]
    tier_of = {(it.question, it.reply): it.tier for it in answered}

    def oracle(records: list[dict[str, str]]) -> list[str | ParseFailure]:
        return [str(tier_of[(r["question"], r["response"])]) for r in records]  # KeyError: an abstention was asked

    card, per_item = factuality_offline_card(oracle)
    assert (card.judge, card.version, card.judge_model) == ("factuality", FACTUALITY_VERSION, None)
    assert card.n == len(answered) and card.balanced_accuracy is not None and card.balanced_accuracy.value == 1.0
    assert card.extra["exact_tier_agreement"] == 1.0
    assert sum(v.label for v in per_item) == sum(it.acceptable for it in answered)
    assert card.extra["n_disputed"] == sum("tier" in it.disputable for it in answered)
    assert card.extra["n_undisputed"] == sum("tier" not in it.disputable for it in answered)
    assert card.labelling is not None and "tier-1" in card.labelling.rule and card.known_failures == []
    flat, _ = factuality_offline_card(lambda records: ["tier_2"] * len(records))
    assert flat.balanced_accuracy is not None and flat.balanced_accuracy.value == 0.5
    assert flat.sensitivity is not None and flat.sensitivity.value == 1.0  # tier 2 is acceptable: the positive


def test_the_catalogue_measures_the_offline_judges_on_the_real_replies_and_on_policybench_with_data(
        tmp_path: Path, kg_home: Path) -> None:
    card = validate(get_judge("abstention"))  # no --data: the shipped real replies
    assert card.dataset == "abstain_replies.jsonl" and card.n == len(abstain_reply_items()[0])
    assert get_judge("abstention").needs_data is False and get_judge("factuality").needs_data is False
    assert {card.extra["policybench_gpt4o_n"]} == _earlier_n("abstention", DETECTOR)  # kept apart, not pooled
    pb = validate(get_judge("abstention"), data_dir=small_set(tmp_path / "data"))
    assert pb.dataset == POLICYBENCH_RESPONSES and pb.n == 7
    out = tmp_path / "card.json"
    proc = knowgap_cli("judge", "validate", "abstention", "--limit", "10", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    cli = ValidityCard.model_validate_json(out.read_text(encoding="utf-8"))
    assert cli.dataset == "abstain_replies.jsonl" and cli.n == 10 and cli.confusion is not None
    assert cli.confusion.tp + cli.confusion.fn == 5


def _earlier_n(judge: str, version: str) -> set[int]:
    """n of the judge's cards on PolicyBench's GPT-4o rows (each issue, shipped or kept in superseded/)."""
    return {c.n for c in (*shipped_cards(), *cards_in(SUPERSEDED_DIR))
            if (c.judge, c.version, c.dataset) == (judge, version, POLICYBENCH_RESPONSES)}


RULE_FIELDS = ("n", "confusion", "balanced_accuracy", "sensitivity", "specificity", "kappa", "parse_failures",
               "languages", "replies", "labelling", "claim", "dataset", "dataset_sha256", "positive", "extra",
               "method")


def test_the_shipped_detector_card_is_what_the_detector_gives_today() -> None:
    """The shipped abstention card, re-measured on every item (the detector is instant): a change to the detector or
    to the labelled set shows here."""
    (shipped,) = [c for c in shipped_cards() if c.judge == "abstention"]
    card, _ = abstention_detector_card(earlier=EARLIER_POLICYBENCH)
    for field in RULE_FIELDS:
        assert getattr(card, field) == getattr(shipped, field), field
    assert [f.model_dump(exclude={"measured"}) for f in card.known_failures] == [
        f.model_dump(exclude={"measured"}) for f in shipped.known_failures]


def _recorded(name: str) -> list[ItemVerdict]:
    return [ItemVerdict.model_validate_json(line)
            for line in (RECORDED / f"{name}.verdicts.jsonl").read_text(encoding="utf-8").splitlines()]


def test_the_shipped_factuality_card_reproduces_from_its_recorded_tiers() -> None:
    recorded = _recorded("factuality")
    items, _ = abstain_reply_items()
    by_id = {it.id: it for it in items}
    said = {(by_id[v.id].question, by_id[v.id].reply): v.outcome for v in recorded}
    assert all(v.label == by_id[v.id].acceptable for v in recorded)
    (shipped,) = [c for c in shipped_cards() if c.judge == "factuality"]
    card, per_item = factuality_offline_card(lambda records: [str(said[(r["question"], r["response"])])
                                                              for r in records], earlier=EARLIER_POLICYBENCH)
    assert [p.id for p in per_item] == [v.id for v in recorded] and card.version == shipped.version
    for field in RULE_FIELDS:
        assert getattr(card, field) == getattr(shipped, field), field


@pytest.mark.slow
def test_the_offline_factuality_judge_still_gives_its_recorded_tiers() -> None:
    """The shipped weights and the embedder give today the tiers the shipped card was measured from (135 answers,
    embedded one at a time as a run does)."""
    recorded = _recorded("factuality")
    items, _ = abstain_reply_items()
    by_id = {it.id: it for it in items}
    tiers = offline_tiers([{"question": by_id[v.id].question, "expected_answer": by_id[v.id].expected_answer,
                            "response": by_id[v.id].reply} for v in recorded])
    assert tiers == [v.outcome for v in recorded]
