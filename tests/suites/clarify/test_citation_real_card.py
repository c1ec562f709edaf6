"""The citation-check card on real clarify final answers (issue 37, the card rule): the shipped card is what the
labelled set gives, a check that reads wrongly is caught, and the known failures hold their figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.judges.cards import assess, find_card
from knowgap.judges.catalog import validate
from knowgap.suites.clarify import citation_card
from knowgap.suites.clarify.citation_card import (
    CITATION_CHECK,
    CitingReply,
    load_citing_replies,
    measure_citation_check_real,
    measure_earlier_paragraph,
    measure_list_headings,
)
from knowgap.suites.clarify.citations import VERSION, Citation


def _shipped():  # type: ignore[no-untyped-def]
    card = find_card("citation-check", VERSION)
    assert card is not None
    return card


def test_the_shipped_card_is_what_the_labelled_real_replies_give() -> None:
    shipped = _shipped()
    card, readings = measure_citation_check_real()
    replies = load_citing_replies()
    assert shipped.dataset_sha256 == card.dataset_sha256 and shipped.confusion == card.confusion
    assert shipped.n == card.n == len(replies) == len(readings)
    assert shipped.balanced_accuracy == card.balanced_accuracy and shipped.languages == card.languages
    assert shipped.replies is not None and shipped.replies.kind == "real" and shipped.replies.constructed == 0
    by_model: dict[str, int] = {}
    for r in replies:
        by_model[r.model] = by_model.get(r.model, 0) + 1
    assert shipped.replies.models == by_model and len(by_model) >= 2
    assert shipped.labelling is not None and shipped.labelling.before_judge is True
    assert "citations-real-1" in shipped.labelling.rule and "no second annotator" in shipped.labelling.by
    assert shipped.claim is not None and "citation_rate" in shipped.claim
    # positives are the replies labelled citing, per language too
    assert shipped.confusion is not None
    assert shipped.confusion.tp + shipped.confusion.fn == sum(bool(r.citations) for r in replies)
    assert shipped.languages is not None and set(shipped.languages) == {"zh", "en"}
    for lang, figure in shipped.languages.items():
        assert figure.positives == sum(bool(r.citations) for r in replies if r.lang == lang)
    # the earlier ChatGPT set is kept apart in extra, with its own figure
    assert shipped.extra["chatgpt_set_n"] == 119.0 and "chatgpt_set_balanced_accuracy" in shipped.extra
    assert {f"n_{m}" for m in by_model} <= set(shipped.extra)
    assert shipped.known_failures == card.known_failures and len(card.known_failures) == 2
    assert CITATION_CHECK.validator is citation_card.validate_citation_check_real


def test_a_check_that_reads_a_citation_everywhere_is_at_chance(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(citation_card, "read_citations", lambda text: [Citation("labour-law", 1, "第一条")])
    card, _ = measure_citation_check_real()
    assert card.balanced_accuracy is not None and card.balanced_accuracy.value == 0.5
    assert card.specificity is not None and card.specificity.value == 0.0
    spurious = card.extra["citations_spurious"]
    assert isinstance(spurious, float) and spurious > 0


def test_a_check_that_reads_nothing_is_at_chance_per_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(citation_card, "read_citations", lambda text: [])
    card, _ = measure_citation_check_real()
    models = sorted({r.model for r in load_citing_replies()})
    for model in models:
        sens = card.extra[f"sensitivity_{model}"]
        assert not isinstance(sens, (float, str)) and sens.value == 0.0
    citations_read = card.extra["citations_read"]
    assert not isinstance(citations_read, (float, str)) and citations_read.value == 0.0


def _reply(**fields: object) -> dict[str, object]:
    row: dict[str, object] = {
        "id": "m/zh-labour-001/x", "model": "local:qwen2.5-0.5b", "lang": "zh", "case_id": "zh-labour-001",
        "kind": "deficient", "origins": ["run#trial"], "asked_to_cite": True, "reply": "", "citations": [],
        "reason": "r"}
    row.update(fields)
    return row


def test_nonexistent_is_measured_against_the_labelled_citations(tmp_path: Path) -> None:
    rows = [
        _reply(id="a", reply="依据《劳动合同法》第一百二十条，公司应当赔偿。",
               citations=[{"statute": "labour-contract-law", "article": 120, "text": "第一百二十条"}]),
        _reply(id="b", reply="依据《劳动合同法》第四十七条支付经济补偿。",
               citations=[{"statute": "labour-contract-law", "article": 47, "text": "第四十七条"}]),
        _reply(id="c", model="local:qwen2.5-1.5b", lang="en", reply="You may claim compensation.")]
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    card, readings = measure_citation_check_real(path=path)
    assert [(r.nonexistent, r.read_nonexistent) for r in readings] == [(True, True), (False, False), (False, False)]
    assert (card.extra["nonexistent_tp"], card.extra["nonexistent_tn"], card.extra["nonexistent_replies"]) == (
        1.0, 1.0, 2.0)
    assert card.confusion is not None and (card.confusion.tp, card.confusion.tn) == (2, 1)
    assert card.replies is not None and card.replies.models == {"local:qwen2.5-0.5b": 2, "local:qwen2.5-1.5b": 1}


def test_a_bad_label_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(_reply(reply="x")) + "\n" + json.dumps(_reply(reply="y", lang="fr")) + "\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"labels.jsonl.*line 2.*lang"):
        measure_citation_check_real(path=path)


def test_the_labelled_set_holds_both_models_in_both_languages() -> None:
    replies = load_citing_replies()
    assert len({r.id for r in replies}) == len(replies)  # one item per distinct reply
    for model in ("local:qwen2.5-0.5b", "local:qwen2.5-1.5b"):
        for lang in ("zh", "en"):
            assert any(r.model == model and r.lang == lang for r in replies), (model, lang)
    assert all(isinstance(r, CitingReply) and r.reason for r in replies)


def test_english_is_a_screen_and_chinese_reportable_as_the_card_rule_says() -> None:
    """en holds 7 citing replies (fewer than the 10 of each class a figure needs, and 0.64): a screen there; zh 32
    citing and 123 not, 0.98: reportable."""
    shipped = _shipped()
    en = assess(shipped, languages=["en"])
    assert en.status == "screen" and "positive" in en.reason
    assert assess(shipped, languages=["zh"]).status == "reportable"
    assert assess(shipped, languages=["zh", "en"]).status == "screen"


def test_the_known_failures_hold_their_shipped_figures() -> None:
    shipped = {f.labelled_set: f for f in _shipped().known_failures}
    for measured in (measure_earlier_paragraph(), measure_list_headings()):
        assert shipped[measured.labelled_set].figure == measured.figure
        assert shipped[measured.labelled_set].languages == measured.languages


def test_the_catalogue_measures_the_real_set_and_writes_each_reading(kg_home: Path) -> None:
    card = validate(CITATION_CHECK, data_dir=None, limit=None)
    assert card.dataset.endswith("citations_real.jsonl") and card == measure_citation_check_real()[0].model_copy(
        update={"seconds_per_item": card.seconds_per_item})
    items = (kg_home / "judge_cards" / f"{card.key}.items.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(items) == card.n and {"cites", "read_cites", "labelled", "read"} <= set(json.loads(items[0]))
