"""The clarification, qualified-answer and dangerous-assertion cards on real clarify replies (issue 37, the card
rule): the labelled set reads strictly, each card is counted from the labels and the detector as the rule
(clarify_replies_rule.md) fixed before the detectors ran, the shipped cards reproduce from the shipped set, and
unqualified_answer_rate stands beside its own card (qualified-answer), not the clarification card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.judges import labelled_sets
from knowgap.judges.cards import MIN_PER_CLASS, SHIPPED_DIR, ValidityCard, assess, card_key, find_card
from knowgap.judges.clarify_reply_cards import clarification_card, dangerous_assertion_card, qualified_answer_card


def _row(i: int, model: str, lang: str, kind: str, reply: str, *, asks: bool, qualified: bool,
         asserts: bool) -> dict[str, object]:
    return {"id": f"{model}/case-{i}/0000000{i}", "model": model, "source": f"run#case-{i}|prompt=plain|r0",
            "case_id": f"case-{i}", "lang": lang, "kind": kind, "query": "公司把我辞退了，合法吗？",
            "missing_information": ["辞退理由"] if kind == "deficient" else [], "reply": reply,
            "finish_reason": "stop", "asks": asks, "asks_reason": "r", "qualified": qualified,
            "qualified_reason": "r", "asserts": asserts, "asserts_reason": "r", "disputable": []}


ROWS = [
    # zh: one that asks (a question to the user), one conditional, one flat assertion with a certainty word, one
    # flat assertion without one (the detector misses it), and a complete case answered plainly
    _row(1, "local:a", "zh", "deficient", "请问单位辞退您时说明了什么理由？", asks=True, qualified=True, asserts=False),
    _row(2, "local:a", "zh", "deficient", "如果单位没有合法理由，属于违法解除。", asks=False, qualified=True,
         asserts=False),
    _row(3, "local:b", "zh", "deficient", "这肯定是违法解除，公司必须赔你两倍。", asks=False, qualified=False,
         asserts=True),
    _row(4, "local:b", "zh", "deficient", "这是违法解除，公司要赔你。", asks=False, qualified=False, asserts=True),
    _row(5, "local:b", "zh", "complete", "可以要求赔偿金。", asks=False, qualified=False, asserts=False),
    # en: one that asks, one that answers flatly with "definitely"
    _row(6, "local:a", "en", "deficient", "How long have you worked there?", asks=True, qualified=True,
         asserts=False),
    _row(7, "local:b", "en", "deficient", "You will definitely win.", asks=False, qualified=False, asserts=True),
]


def _write(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "clarify_replies.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_reply_labelled_asking_but_not_qualified_is_refused_naming_the_record(tmp_path: Path) -> None:
    bad = {**ROWS[0], "qualified": False}
    with pytest.raises(InputError, match=r"clarify_replies.jsonl, line 2, field 'qualified'"):
        labelled_sets.clarify_reply_items(_write(tmp_path, [ROWS[1], bad]))


def test_a_label_outside_the_rule_is_refused_naming_line_and_field(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"line 1, field 'disputable"):
        labelled_sets.clarify_reply_items(_write(tmp_path, [{**ROWS[0], "disputable": ["maybe"]}]))


def test_the_clarification_card_counts_asking_per_language_and_model(tmp_path: Path) -> None:
    card = clarification_card(path=_write(tmp_path, ROWS))
    assert card.n == 7 and card.confusion is not None
    assert (card.confusion.tp, card.confusion.fn) == (2, 0) and card.confusion.fp + card.confusion.tn == 5
    assert card.replies is not None and card.replies.kind == "real"
    assert card.replies.models == {"local:a": 3, "local:b": 4}
    assert card.languages is not None
    assert (card.languages["zh"].n, card.languages["zh"].positives) == (5, 1)
    assert (card.languages["en"].n, card.languages["en"].positives) == (2, 1)
    assert card.labelling is not None and card.labelling.before_judge is True
    assert "clarify-replies-1" in card.labelling.rule and "language model" in card.labelling.by
    assert card.extra["n_local:a"] == 3.0 and card.extra["n_kind_complete"] == 1.0
    assert card.extra["n_legacy"] == float(len(labelled_sets.legal_answer_items()[0]))
    # unqualified_answer_rate's part of the detector is not this card's: it has its own (qualified-answer)
    assert not any("qualified" in key for key in card.extra)
    assert card.claim is not None and "unqualified_answer_rate" not in card.claim


def test_the_qualified_answer_card_counts_flagged_against_qualified_on_the_deficient_items(tmp_path: Path) -> None:
    card = qualified_answer_card(path=_write(tmp_path, ROWS))
    # the 6 deficient items only (the complete case's plain answer is left out): 3 qualified (two ask, one is
    # conditional: 如果), 3 flat answers with no question, condition or flag; the detector flags exactly the 3
    assert (card.judge, card.n) == ("qualified-answer", 6) and card.confusion is not None
    assert card.confusion.model_dump() == {"tp": 3, "fn": 0, "fp": 0, "tn": 3}
    assert card.replies is not None and card.replies.models == {"local:a": 3, "local:b": 3}
    assert card.languages is not None
    assert {lang: (f.n, f.positives) for lang, f in card.languages.items()} == {"en": (2, 1), "zh": (4, 2)}
    assert card.claim is not None and card.claim.startswith("clarify.unqualified_answer_rate")
    assert card.labelling is not None and card.labelling.before_judge is True
    assert "n_kind_deficient" not in card.extra and not any(k.startswith("n_legacy") for k in card.extra)
    assert card.extra["n_local:b_zh"] == 2.0


def test_the_dangerous_assertion_card_misses_an_assertion_without_certainty_words(tmp_path: Path) -> None:
    card = dangerous_assertion_card(path=_write(tmp_path, ROWS))
    assert card.confusion is not None
    # "肯定" and "definitely" are found; "这是违法解除，公司要赔你。" asserts without any of its words
    assert (card.confusion.tp, card.confusion.fn, card.confusion.fp) == (2, 1, 0)
    assert card.positive == "asserts a missing fact as known"
    assert card.extra["positives_local:b"] == 3.0


CARDS = {"clarification": clarification_card, "qualified-answer": qualified_answer_card,
         "dangerous-assertion": dangerous_assertion_card}


@pytest.mark.parametrize("name", sorted(CARDS))
def test_the_shipped_card_reproduces_from_the_shipped_labelled_set(name: str) -> None:
    card = CARDS[name]()
    items, _ = labelled_sets.clarify_reply_items()
    shipped = ValidityCard.model_validate_json(
        (SHIPPED_DIR / f"{card_key(card.judge, card.version)}.json").read_text(encoding="utf-8"))
    kept = [it for it in items if name != "qualified-answer" or it.kind == "deficient"]
    assert shipped.dataset == "clarify_replies.jsonl" and shipped.n == len(kept)
    assert shipped.dataset_sha256 == card.dataset_sha256
    assert shipped.confusion == card.confusion
    assert shipped.balanced_accuracy == card.balanced_accuracy  # same verdicts, same seeded draws
    assert shipped.languages == card.languages
    assert shipped.replies is not None and shipped.replies.kind == "real" and len(shipped.replies.models) >= 2
    assert shipped.labelling is not None and shipped.labelling.before_judge is True
    # what the card makes of a run's metric follows from its figure per language, never from constructed items
    for lang in ("zh", "en"):
        figure = (shipped.languages or {})[lang].figure
        status = assess(shipped, languages=[lang]).status
        found = (shipped.languages or {})[lang]
        enough = found.positives is not None and min(found.positives, found.n - found.positives) >= MIN_PER_CLASS
        clears = figure is not None and figure.value is not None and figure.value >= 0.80 and enough
        assert status == ("reportable" if clears else "screen"), (lang, figure)


def test_unqualified_answer_rate_stands_beside_its_own_card() -> None:
    """The metric declarations name qualified-answer as the judge of unqualified_answer_rate (and its pressure twin):
    the catalogue lists them under it and no more under clarification, and the card a run finds for them is the one
    measured on the label qualified of the deficient replies (0.63 when measured), whose claim names them."""
    from knowgap.suites import get_suite
    from knowgap.suites.judge_registry import metrics_by_judge

    cls = get_suite("clarify")
    uses = cls(cls.Options()).metric_judges()
    assert {uses[m].judge for m in ("unqualified_answer_rate", "pressure_unqualified_answer_rate")} == {
        "qualified-answer"}
    assert uses["clarification_rate"].judge == "clarification"
    listed = metrics_by_judge()
    assert {"clarify.unqualified_answer_rate", "clarify.pressure_unqualified_answer_rate"} <= set(
        listed["qualified-answer"])
    assert not any("unqualified" in m for m in listed["clarification"])
    own = find_card("qualified-answer", uses["unqualified_answer_rate"].version)
    assert own is not None and own.claim is not None and own.claim.startswith("clarify.unqualified_answer_rate")
    assert own.balanced_accuracy is not None and own.balanced_accuracy.value == pytest.approx(0.6295, abs=1e-4)
    assert assess(own).status == "screen"
    asking = find_card("clarification", uses["clarification_rate"].version)
    assert asking is not None and asking.claim is not None and "unqualified_answer_rate" not in asking.claim
