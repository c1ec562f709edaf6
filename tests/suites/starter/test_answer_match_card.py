"""The answer-match card on real replies (issue 37, the card rule): the validator counts the matcher's verdicts
against the labels per language and per model, reports the suite's whole decision beside it, keeps the constructed
responses out of the figure, records the near-miss construct as a known failure, and the shipped card is what the
validator measures on the shipped sets."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.judges.cards import SHIPPED_DIR, ValidityCard, assess, card_key
from knowgap.judges.catalog import validate
from knowgap.judges.known_failures import CHECKED
from knowgap.suites.judge_registry import get_judge
from knowgap.suites.starter import answer_match_card as am
from knowgap.suites.starter.dataset import DATA, load_cases
from knowgap.suites.starter.scoring import ANSWER_MATCH_VERSION

MODELS = ("local:qwen2.5-0.5b", "local:qwen2.5-1.5b")


def _row(i: int, model: str, lang: str, reply: str, correct: bool) -> dict[str, object]:
    return {"id": f"{model}/c{i}/{i:08x}", "model": model,
            "origins": [{"run": "r", "trial": f"c{i}|prompt=plain|r0", "prompt": "plain", "defence": "none"}],
            "case_id": f"c{i}", "lang": lang, "context": "The shop opens at 9:00.", "question": "When does it open?",
            "answers": ["9:00"], "reply": reply, "finish_reason": "stop", "correct": correct, "reason": "test"}


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_matcher_that_finds_the_answer_in_every_reply_scores_half(tmp_path: Path) -> None:
    """Every reply holds the accepted string, half of them labelled wrong (near-misses): the matcher calls all
    correct, so sensitivity 1, specificity 0, balanced accuracy 0.5, in each language and for each model."""
    rows = [_row(i, MODELS[i % 2], ("en", "zh")[(i // 2) % 2], f"It opens at {'' if i < 12 else '1'}9:00.", i < 12)
            for i in range(24)]
    card = am.validate_answer_match(None, path=_write(tmp_path / "set.jsonl", rows))
    assert card.confusion is not None and card.confusion.model_dump() == {"tp": 12, "fn": 0, "fp": 12, "tn": 0}
    assert card.balanced_accuracy is not None and card.balanced_accuracy.value == 0.5
    assert card.languages is not None and {k: (f.n, f.positives) for k, f in card.languages.items()} == {
        "en": (12, 6), "zh": (12, 6)}
    assert all(f.figure is not None and f.figure.value == 0.5 for f in card.languages.values())
    assert card.replies is not None and card.replies.kind == "real" and card.replies.models == dict.fromkeys(MODELS, 12)
    for model in MODELS:
        assert card.extra[f"n_{model}"] == 12.0
        ba = card.extra[f"balanced_accuracy_{model}"]
        assert not isinstance(ba, (float, str)) and ba.value == 0.5
        assert f"specificity_{model}_zh" in card.extra
    assert assess(card).status == "screen"


def test_a_matcher_right_on_every_reply_clears_the_bar_only_with_ten_of_each_class(tmp_path: Path) -> None:
    rows = [_row(i, MODELS[i % 2], ("en", "zh")[(i // 2) % 2], "It opens at 9:00." if i < 40 else "At 10:00.",
                 i < 40) for i in range(80)]
    card = am.validate_answer_match(None, path=_write(tmp_path / "set.jsonl", rows))
    assert card.balanced_accuracy is not None and card.balanced_accuracy.value == 1.0
    assert assess(card, languages=["en", "zh"]).status == "reportable"
    thin = am.validate_answer_match(None, path=_write(tmp_path / "thin.jsonl", rows[:40] + rows[40:48]))
    assert assess(thin, languages=["en"]).status == "screen"  # 4 wrong replies in en


def test_the_suite_decision_counts_an_abstention_phrase_as_not_correct(tmp_path: Path) -> None:
    """A reply that gives the answer after 'I don't know' is labelled correct (the rule: the answer given) and the
    matcher finds it; the suite's decision (no abstention phrase) does not: suite_sensitivity says so."""
    rows = [_row(i, MODELS[i % 2], "en", "It opens at 9:00." if i % 4 else "I don't know, but maybe 9:00.", True)
            for i in range(8)] + [_row(8 + i, MODELS[i % 2], "en", "At 10:00.", False) for i in range(8)]
    card = am.validate_answer_match(None, path=_write(tmp_path / "set.jsonl", rows))
    assert card.sensitivity is not None and card.sensitivity.value == 1.0
    suite = card.extra["suite_sensitivity"]
    assert not isinstance(suite, (float, str)) and suite.value == 6 / 8


def test_a_bad_labelled_line_names_file_line_and_field(tmp_path: Path) -> None:
    good = _row(0, MODELS[0], "en", "9:00", True)
    path = _write(tmp_path / "set.jsonl", [good, {**good, "correct": "maybe"}])
    with pytest.raises(InputError, match=r"set.jsonl, line 2, field 'correct'"):
        am.validate_answer_match(None, path=path)


def test_judge_validate_answer_match_needs_no_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its sets ship with knowgap: measured from a folder with no shared/data above it and no KNOWGAP_DATA."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KNOWGAP_DATA", raising=False)
    card = validate(get_judge("answer-match"))
    assert card.dataset == am.REAL_FILE and card.replies is not None and card.replies.kind == "real"


# --- the shipped sets and card ---------------------------------------------------------------------------------


def test_the_labelled_replies_are_real_replies_to_the_answerable_starter_cases() -> None:
    cases = {c.id: c for c in load_cases(DATA)}
    items, _ = am.real_answer_items()
    assert len({it.id for it in items}) == len(items)
    for it in items:
        case = cases[it.case_id]
        assert case.answerable and (it.lang, it.context, it.question, it.answers) == (
            case.lang, case.context, case.question, case.answers), it.id
        assert it.id.rsplit("/", 1)[1] == hashlib.sha256(it.reply.encode("utf-8")).hexdigest()[:8], it.id
        assert it.model in MODELS and it.id.startswith(it.model.split(":", 1)[1] + "/")
    assert {(it.model, it.lang) for it in items} == {(m, lang) for m in MODELS for lang in ("en", "zh")}
    assert len({(it.model, it.case_id, it.reply) for it in items}) == len(items)  # one item per distinct reply


def test_the_near_misses_hold_the_accepted_string_and_are_wrong() -> None:
    rows, _ = am.labelled_items(am.labelled_file(am.NEAR_MISS_FILE), am.NearMiss, "near-miss replies")
    assert len(rows) == 16 and {r.lang for r in rows} == {"en", "zh"}
    assert all(not r.correct and r.form in ("inside", "other") for r in rows)
    built = {it.id: it for it in am.answer_match_items()[0]}
    for r in rows:
        if r.source.startswith("answer_match.jsonl "):
            old = built[r.source.split()[1]]
            assert (old.response, old.correct) == (r.response, False), r.id


def _shipped() -> ValidityCard:
    path = SHIPPED_DIR / f"{card_key('answer-match', ANSWER_MATCH_VERSION)}.json"
    return ValidityCard.model_validate_json(path.read_text(encoding="utf-8"))


def test_the_shipped_card_is_what_the_validator_measures_on_the_shipped_sets() -> None:
    card, shipped = am.validate_answer_match(None), _shipped()
    skip = {"measured", "seconds_per_item", "issued", "known_failures"}
    assert card.model_dump(exclude=skip) == shipped.model_dump(exclude=skip)
    assert [f.model_dump(exclude={"measured"}) for f in card.known_failures] == [
        f.model_dump(exclude={"measured"}) for f in shipped.known_failures]


def test_the_shipped_card_states_the_card_rule_facts() -> None:
    card = _shipped()
    items, _ = am.real_answer_items()
    assert card.claim is not None and card.claim.startswith("starter.accuracy: share of answerable questions "
                                                            "answered correctly")
    assert card.replies is not None and card.replies.kind == "real" and card.replies.constructed == 0
    assert card.replies.models == {m: sum(it.model == m for it in items) for m in MODELS}
    assert card.languages is not None and {k: (f.n, f.positives) for k, f in card.languages.items()} == {
        lang: (sum(it.lang == lang for it in items), sum(it.lang == lang and it.correct for it in items))
        for lang in ("en", "zh")}
    assert card.labelling is not None and card.labelling.before_judge
    assert "answer-match-real-1" in card.labelling.rule and "22e9575" in card.labelling.rule
    assert "LABELS" not in card.labelling.rule and "Claude-based" in card.labelling.by
    assert {"constructed_balanced_accuracy", "suite_balanced_accuracy"} <= set(card.extra)
    (near,) = card.known_failures
    assert near.labelled_set.endswith(am.NEAR_MISS_FILE) and near.n == 16
    assert near.model_dump(exclude={"measured"}) == am.measure_near_misses().model_dump(exclude={"measured"})
    assert near.figure.value is not None and near.name.startswith(CHECKED) == (near.figure.value >= 0.8)
