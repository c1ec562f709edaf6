"""The element-coverage and clarify-correctness-approx cards measured on real replies (issue 37, the card rule):
their validators read the labelled sets of real replies, score each reply as a run does, count the replies'
models and languages, and reject a row that does not fit its case; the shipped clarify-correctness-approx card is
what its validator measures on the shipped set (element-coverage's is re-measured on a sample by
tests/judges/test_shipped_cards.py: scoring its 112 replies takes minutes without the run's embedding cache)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.judges.cards import SHIPPED_DIR, ValidityCard, assess, card_key
from knowgap.suites.clarify import correctness_card, coverage_card
from knowgap.suites.clarify.dataset import load_cases
from knowgap.suites.clarify.labelled_replies import final_answers

ORIGIN = [{"run": "clarify-x", "trial": "t", "prompt": "plain"}]


def _coverage_row(case_id: str, model: str, reply: str, covered: list[bool]) -> dict[str, object]:
    case = next(c for c in load_cases() if c.id == case_id)
    return {"id": f"{model}/{case_id}/0", "case_id": case_id, "lang": case.lang, "model": model, "origins": ORIGIN,
            "finish_reason": "stop", "query": case.query, "reply": reply,
            "elements": [{"text": m.text, "category": m.category, "covered": c, "reason": "r"}
                         for m, c in zip(case.missing_information, covered, strict=True)]}


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_element_coverage_is_measured_per_element_of_each_real_reply(tmp_path: Path) -> None:
    """Each (element, reply) pair is an item, judged as a run scores the reply: a reply asking for two of
    zh-labour-001's three facts is credited with them, one that asks nothing with none."""
    asks = ("请问您是否签订了书面劳动合同，现在是否还在试用期？您的月工资是多少？")
    silent = "公司辞退员工应当依法进行，建议您咨询律师。"
    path = _write(tmp_path / "cov.jsonl", [
        _coverage_row("zh-labour-001", "local:a", asks, [True, False, True]),
        _coverage_row("zh-labour-001", "local:b", silent, [False, False, False])])
    card = coverage_card.validate_element_coverage(None, path=path)
    assert card.n == 6 and card.confusion is not None
    assert (card.confusion.tp, card.confusion.fn) == (2, 0)
    assert card.confusion.fp + card.confusion.tn == 4 and card.confusion.fp == 0
    assert card.replies is not None and card.replies.kind == "real" and card.replies.models == {"local:a": 3,
                                                                                                "local:b": 3}
    assert card.languages is not None and (card.languages["zh"].n, card.languages["zh"].positives) == (6, 2)
    assert card.labelling is not None and "covered-1" in card.labelling.rule and card.labelling.before_judge
    assert card.extra["precision_held_out_n"] == 2.0
    assert "constructed_balanced_accuracy_held_out" in card.extra  # the calibration pairs: a check beside it
    zh = assess(card, languages=["zh"])  # a perfect figure on 2 covered pairs is too thin to report
    assert zh.status == "screen" and zh.reason.startswith("its zh items hold 2 positive(s) and 4 negative(s)")


def test_a_coverage_row_whose_elements_are_not_its_cases_names_file_line_and_field(tmp_path: Path) -> None:
    row = _coverage_row("zh-labour-001", "local:a", "请问月工资多少？", [False, False, True])
    wrong = dict(row, elements=list(reversed(row["elements"])))  # type: ignore[call-overload]
    path = _write(tmp_path / "cov.jsonl", [row, wrong])
    with pytest.raises(InputError) as raised:
        coverage_card.validate_element_coverage(None, path=path)
    assert str(raised.value).startswith(f"{path}, line 2, field 'elements'")


def test_clarify_correctness_approx_is_measured_on_real_control_replies(tmp_path: Path) -> None:
    """A control's reply holding the reference terms (and asking nothing further) is judged correct, one with the
    opposite outcome not; a deficient case is no control."""
    case = next(c for c in load_cases() if c.id == "zh-family-101")
    rows = [{"id": f"{m}/{case.id}/0", "case_id": case.id, "lang": "zh", "model": m, "origins": ORIGIN,
             "finish_reason": "stop", "query": case.query, "conclusion": case.conclusion, "reply": reply,
             "correct": correct, "reason": "r"}
            for m, reply, correct in (("local:a", "不可以。你们是三代以内的旁系血亲，法律禁止结婚。", True),
                                      ("local:b", "可以结婚，只要双方自愿登记即可。", False))]
    path = _write(tmp_path / "answers.jsonl", rows)
    card = correctness_card.validate_clarify_correctness_approx(None, path=path)
    assert card.n == 2 and card.confusion is not None and (card.confusion.tp, card.confusion.tn) == (1, 1)
    assert card.replies is not None and card.replies.models == {"local:a": 1, "local:b": 1}
    assert card.labelling is not None and "final-correct-1" in card.labelling.rule
    assert "constructed_balanced_accuracy" in card.extra
    deficient = dict(rows[0], case_id="zh-labour-001")
    with pytest.raises(InputError) as raised:
        correctness_card.validate_clarify_correctness_approx(None, path=_write(tmp_path / "bad.jsonl", [deficient]))
    assert str(raised.value).startswith(f"{tmp_path / 'bad.jsonl'}, line 1, field 'case_id'")


def _shipped(judge: str, version: str) -> ValidityCard:
    return ValidityCard.model_validate_json((SHIPPED_DIR / f"{card_key(judge, version)}.json").read_text("utf-8"))


def test_the_shipped_clarify_correctness_approx_card_is_what_the_validator_measures_on_the_shipped_set() -> None:
    from knowgap.suites.clarify.judging import APPROX_VERSION

    card = correctness_card.validate_clarify_correctness_approx(None)
    shipped = _shipped("clarify-correctness-approx", APPROX_VERSION)
    assert card.n == len(final_answers()[0]) == shipped.n
    assert (card.dataset_sha256, card.confusion, card.replies, card.languages, card.labelling) == (
        shipped.dataset_sha256, shipped.confusion, shipped.replies, shipped.languages, shipped.labelling)
