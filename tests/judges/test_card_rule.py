"""The card rule (issue 37): a card is reportable only when it was measured on real replies of at least two models,
covers the language a number is on, and clears the bar; constructed items never make it reportable alone; a judge
combining a rule and a model shows both figures; cards issued before the rule still load (as screens); a re-issued
card keeps its earlier issue; and every shipped card says what it was measured on."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from knowgap.judges.cards import (
    MIN_PER_CLASS,
    REISSUED,
    SHIPPED_DIR,
    SUPERSEDED_DIR,
    Confusion,
    Estimate,
    LanguageFigure,
    Replies,
    ValidityCard,
    assess,
    binary_card,
    cards_in,
    find_card,
    ship_card,
    shipped_cards,
)


def _card(tp: int = 48, fn: int = 2, fp: int = 2, tn: int = 48, *, writers: list[str | None] | None = None,
          languages: list[str] | None = None) -> ValidityCard:
    labels = [True] * (tp + fn) + [False] * (fp + tn)
    verdicts: list[bool | None] = [*[True] * tp, *[False] * fn, *[True] * fp, *[False] * tn]
    return binary_card("toy", "toy_v1", verdicts, labels, positive="yes", dataset="toy.jsonl", dataset_sha256="0",
                       writers=writers, item_languages=languages)


def test_a_card_built_on_constructed_pairs_is_never_reportable() -> None:
    perfect = _card(tp=50, fn=0, fp=0, tn=50, writers=[None] * 100, languages=["en"] * 100)
    assert perfect.replies is not None and perfect.replies.kind == "constructed"
    assert perfect.balanced_accuracy is not None and perfect.balanced_accuracy.value == 1.0
    a = assess(perfect, languages=["en"])
    assert a.status == "screen"
    assert a.reason.startswith("measured on constructed items (100), not on real replies")
    mixed = _card(writers=["model-a"] * 50 + [None] * 50, languages=["en"] * 100)
    assert mixed.replies is not None and mixed.replies.kind == "mixed"
    assert assess(mixed).status == "screen" and "50 of its 100 items are constructed" in assess(mixed).reason


def test_real_replies_of_one_model_are_a_screen_and_of_two_reportable() -> None:
    one = _card(writers=["model-a"] * 100, languages=["en"] * 100)
    assert assess(one).status == "screen"
    assert "its real replies come from one model (model-a); the rule asks for replies of at least 2 models" \
        in assess(one).reason
    two = _card(writers=["model-a", "model-b"] * 50, languages=["en"] * 100)
    assert two.replies == Replies(kind="real", models={"model-a": 50, "model-b": 50})
    assert assess(two).status == "reportable"
    assert assess(two).reason == "judge balanced accuracy 0.96 on toy.jsonl (n=100, en), real replies of 2 models"
    people = two.model_copy(update={"replies": Replies(kind="real", models={"model-a": 50},
                                                       people={"lawyers": 50})})
    assert assess(people).status == "screen" and "and people (lawyers)" in assess(people).reason


def test_a_language_the_card_does_not_cover_shows_no_card_for_it() -> None:
    english = _card(writers=["model-a", "model-b"] * 50, languages=["en"] * 100)
    assert assess(english, languages=["en"]).status == "reportable"
    for asked in (["zh"], ["en", "zh"]):
        a = assess(english, languages=asked)
        assert a.status == "screen" and a.reason == "no card for zh: its card (toy.jsonl) holds en items only"
    unrecorded = english.model_copy(update={"languages": None})
    assert assess(unrecorded, languages=["en"]).reason.startswith(
        "no card for en: its card (toy.jsonl) does not record the languages it was measured on")
    assert assess(unrecorded).status == "reportable"  # no language asked: none checked


def test_a_figure_on_fewer_than_ten_items_of_a_class_is_a_screen() -> None:
    # zh: 2 positives, both found, 1 false alarm in 117 negatives (balanced accuracy 0.996); en: 12 and 12, all right
    verdicts = [True] * 2 + [True] + [False] * 116 + [True] * 12 + [False] * 12
    labels = [True] * 2 + [False] * 117 + [True] * 12 + [False] * 12
    card = binary_card("toy", "toy_v1", verdicts, labels, positive="yes", dataset="toy.jsonl", dataset_sha256="0",
                       writers=["a", "b"] * 71 + ["a"], item_languages=["zh"] * 119 + ["en"] * 24)
    figure = card.languages["zh"].figure if card.languages else None
    assert figure is not None and (figure.value or 0) > 0.99
    zh = assess(card, languages=["zh"])
    assert zh.status == "screen" and zh.reason.startswith(
        f"its zh items hold 2 positive(s) and 117 negative(s): a figure on fewer than {MIN_PER_CLASS} of either class "
        "cannot clear the bar")
    assert assess(card, languages=["en"]).status == "reportable"
    assert assess(card).status == "reportable"  # the whole card: 14 positives, 129 negatives
    thin = card.model_copy(update={"confusion": Confusion(tp=2, fn=0, fp=1, tn=116)})
    assert assess(thin).status == "screen" and "its items hold 2 positive(s)" in assess(thin).reason


def test_each_language_is_held_to_the_bar_on_its_own_items() -> None:
    # en: 24 of 25 right per class (0.96); zh: 18 of 25 (0.72); overall 0.84
    verdicts_en = [True] * 24 + [False] + [True] + [False] * 24
    verdicts_zh = [True] * 18 + [False] * 7 + [True] * 7 + [False] * 18
    labels = [True] * 25 + [False] * 25
    card = binary_card("toy", "toy_v1", verdicts_en + verdicts_zh, labels + labels, positive="yes",
                       dataset="toy.jsonl", dataset_sha256="0", writers=["a", "b"] * 50,
                       item_languages=["en"] * 50 + ["zh"] * 50)
    assert card.languages is not None and card.languages["zh"].n == 50 and card.languages["zh"].positives == 25
    assert assess(card).status == "reportable"
    assert assess(card, languages=["en"]).status == "reportable"
    zh = assess(card, languages=["zh"])
    assert zh.status == "screen" and zh.reason.startswith(
        "judge balanced accuracy 0.72 < 0.80 on toy.jsonl (n=100; its zh items, n=50)")
    one_class = card.model_copy(update={"languages": {**card.languages, "zh": LanguageFigure(
        n=5, positives=5, figure=Estimate(value=None))}})
    assert assess(one_class, languages=["zh"]).reason.endswith(
        "no balanced accuracy on its zh items (they hold one class only)")


def test_a_judge_combining_a_rule_and_a_model_shows_both_figures() -> None:
    card = _card(writers=[None] * 100, languages=["zh"] * 100).model_copy(update={
        "model_only": Estimate(value=0.21, ci_low=0.13, ci_high=0.33),
        "combined": Estimate(value=0.96, ci_low=0.9, ci_high=0.99)})
    reason = assess(card).reason
    assert "(model alone 0.21, combined 0.96)" in reason and "constructed" in reason


def test_replies_must_say_what_they_are() -> None:
    with pytest.raises(ValidationError, match="kind 'real' needs"):
        Replies(kind="real", models={"a": 3}, constructed=2)
    with pytest.raises(ValidationError, match="kind 'constructed' needs"):
        Replies(kind="constructed", models={"a": 3})
    with pytest.raises(ValidationError, match="kind 'mixed' needs"):
        Replies(kind="mixed", constructed=4)


def test_cards_issued_before_the_rule_still_load_as_screens(tmp_path: Path) -> None:
    """Every earlier issue kept in superseded/ still loads: those of the shipped cards as they were before the rule
    (no replies) say nothing the rule asks, and a card that does not say what it was measured on is a screen,
    however high its figure. Later earlier issues (a card of the rule re-issued, as ``--ship`` does on a changed
    set or statistics rule) are cards of the rule."""
    earlier = [(p, ValidityCard.model_validate_json(p.read_text(encoding="utf-8")))
               for p in sorted(SUPERSEDED_DIR.glob("*.json")) if REISSUED in p.name]
    before_rule = [(p, card) for p, card in earlier if card.replies is None]
    assert len(before_rule) >= 20
    for path, card in before_rule:
        assert card.claim is None and card.languages is None, path.name
        assert assess(card).status == "screen"
        assert "does not say which replies it was measured on" in assess(card).reason
    for path, card in earlier:
        assert card.replies is None or (card.claim and card.languages and card.labelling), path.name
    old = next(card for p, card in before_rule if p.name.startswith("extract-takeover"))
    assert old.balanced_accuracy is not None and (old.balanced_accuracy.value or 0) > 0.9  # reportable before


def test_every_shipped_card_says_what_it_validates_and_was_measured_on() -> None:
    cards = shipped_cards() + [c for p in sorted(SUPERSEDED_DIR.glob("*.json")) if REISSUED not in p.name
                               and (c := ValidityCard.model_validate_json(p.read_text(encoding="utf-8")))]
    assert len(cards) >= 30
    for card in cards:
        assert card.claim and card.replies is not None and card.labelling is not None, card.key
        assert card.languages and sum(f.n for f in card.languages.values()) == card.n, card.key
        real = card.replies.real_n + card.replies.constructed
        assert real == card.n, f"{card.key}: {real} replies counted for n={card.n}"
    status = {c.judge: assess(c).status for c in shipped_cards()}
    # gap-matcher on real named gaps of the 0.5B and 1.5B (14 positives, 79 negatives; leak-detector there: 0.50, a
    # screen); clarification's figure (0.97) rests on 2 replies that ask: a screen (MIN_PER_CLASS); the abstention
    # detector on the two models' answers to leave-one-out questions (0.94; 59 abstentions, 50 of them the bare
    # citation placeholder); answer-match on the two models' starter replies (0.92 overall, zh 0.95; for en, 2 wrong
    # replies: a screen for an English run); citation-check on the two models' clarify final answers (0.92, zh 0.98;
    # en 0.64 on 7 citing replies: a screen for an English run)
    assert {j for j, s in status.items() if s == "reportable"} == {"abstention", "answer-match", "answer-overlap",
                                                                  "citation-check", "extract-takeover",
                                                                  "gap-matcher", "summary-coverage"}


def test_the_clarify_rubric_card_is_a_screen_that_reports_model_only_and_combined() -> None:
    """Measured on real replies of both models (issue 37): the one adequate reply of the pool (zh) makes the combined
    figure too thin to report, and the model alone calls every reply adequate (0.50)."""
    card = find_card("clarify-rubric", "clarify-rubric-v3-anchored", "local:qwen2.5-1.5b")
    assert card is not None and card.replies is not None and card.replies.kind == "real"
    assert set(card.replies.models) == {"local:qwen2.5-0.5b", "local:qwen2.5-1.5b"}
    assert card.model_only is not None and card.model_only.value == pytest.approx(0.5)
    assert card.combined is not None and card.combined.value == pytest.approx((1 + 32 / 41) / 2)
    a = assess(card)
    assert a.status == "screen" and "(model alone 0.50, combined 0.89)" in a.reason
    assert "hold 1 positive(s) and 41 negative(s)" in a.reason
    assert card.languages is not None and {k: (f.n, f.positives) for k, f in card.languages.items()} == {
        "en": (18, 0), "zh": (24, 1)}
    assert assess(card, languages=["en"]).reason.startswith("the judge's card")  # en: one class, no figure


def test_re_issuing_a_card_keeps_the_earlier_issue_where_no_look_up_finds_it(tmp_path: Path) -> None:
    folder = tmp_path / "cards"
    folder.mkdir()
    first = _card().model_copy(update={"measured": "2026-12-01"})
    ship_card(first, folder)
    claim = "toy.rate: share of toys that are yes"
    second = first.model_copy(update={"claim": claim, "replies": Replies(kind="real", models={"a": 50, "b": 50}),
                                      "languages": {"en": LanguageFigure(n=100)}, "issued": "2026-12-05"})
    path, moved = ship_card(second, folder)
    assert moved == [folder / "superseded" / f"{first.key}{REISSUED}2026-12-01.json"]
    assert ValidityCard.model_validate_json(moved[0].read_text(encoding="utf-8")) == first
    assert ValidityCard.model_validate_json(path.read_text(encoding="utf-8")) == second
    # a validator that does not know the set's facts: they come from the card shipped before on the same set
    third = _card(tp=49, fn=1).model_copy(update={"version": "toy_v2"})
    _, moved = ship_card(third, folder)
    shipped = {c.version: c for c in cards_in(folder)}
    assert set(shipped) == {"toy_v2"} and moved == [folder / "superseded" / f"{second.key}.json"]
    assert shipped["toy_v2"].claim == claim and shipped["toy_v2"].replies == second.replies
    assert shipped["toy_v2"].languages == {"en": LanguageFigure(n=100)}


def test_superseded_and_shipped_folders_hold_no_stray_issue() -> None:
    """An earlier issue names a card that is still shipped (or superseded) under its key, issued later."""
    for path in sorted(SUPERSEDED_DIR.glob(f"*{REISSUED}*.json")):
        key = path.name.split(REISSUED, 1)[0]
        current = [f for f in (SHIPPED_DIR / f"{key}.json", SUPERSEDED_DIR / f"{key}.json") if f.is_file()]
        assert current, f"{path.name}: no card {key} issued after it"
        later = ValidityCard.model_validate_json(current[0].read_text(encoding="utf-8"))
        # a card re-measured and shipped is issued when it was measured (issued: only when issued after that)
        assert (later.issued or later.measured) >= path.stem.split(REISSUED, 1)[1][:10], path.name


def test_a_card_measured_here_on_a_shipped_set_keeps_what_the_set_is(kg_home: Path) -> None:
    """``knowgap judge validate NAME`` (a validator that knows nothing of the card rule) saved here, on the shipped
    card's own labelled set: the card takes the set's replies, labelling, claim and languages from the shipped card,
    so it assesses as that card does, not as one that does not say what it was measured on."""
    from knowgap.judges.cards import save_card
    from knowgap.judges.catalog import validate
    from knowgap.suites.judge_registry import get_judge

    measured = validate(get_judge("extract-takeover"))
    assert measured.replies is None and measured.languages is None  # the validator does not know them
    path = save_card(measured)
    assert path.parent == kg_home / "judge_cards"
    saved = ValidityCard.model_validate_json(path.read_text(encoding="utf-8"))
    shipped = next(c for c in shipped_cards() if c.judge == "extract-takeover")
    assert (saved.replies, saved.labelling, saved.claim) == (shipped.replies, shipped.labelling, shipped.claim)
    assert saved.languages is not None and {k: f.n for k, f in saved.languages.items()} == {"en": 38, "zh": 41}
    assert assess(saved, languages=["en"]).status == "reportable"
    # zh holds 9 takeovers (fewer than MIN_PER_CLASS): a screen for the saved card as for the shipped one
    both, shipped_both = assess(saved, languages=["en", "zh"]), assess(shipped, languages=["en", "zh"])
    assert both.status == shipped_both.status == "screen"
    assert both.reason.startswith("its zh items hold 9 positive(s) and 32 negative(s)")
    other = measured.model_copy(update={"dataset_sha256": "1" * 64})  # another set: nothing is taken
    assert ValidityCard.model_validate_json(save_card(other).read_text(encoding="utf-8")).replies is None
