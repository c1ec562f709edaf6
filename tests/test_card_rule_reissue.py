"""experiments/card_rule_reissue.py reads a card's facts from the set the card was measured on: a card measured on the
real clarify replies takes them from that set (through the cards' own validators), never from the earlier
constructed/legacy set its judge was measured on before, and a card measured on another set than the one the script
reads for its judge stops the script instead of being re-issued with that set's facts."""

from __future__ import annotations

import pytest

from knowgap.judges.cards import SHIPPED_DIR, ValidityCard, card_key, shipped_cards
from knowgap.judges.clarification import DANGER_VERSION
from knowgap.suites.partial.leak import VERSION as LEAK_VERSION
from tests.test_experiments import _load

STRIPPED = {"claim": None, "replies": None, "languages": None, "labelling": None, "issued": None}
"""What a card issued before the card rule lacks (the script fills it)."""


def _shipped(judge: str, version: str) -> ValidityCard:
    return ValidityCard.model_validate_json((SHIPPED_DIR / f"{card_key(judge, version)}.json").read_text("utf-8"))


def test_a_card_on_the_real_clarify_replies_takes_its_facts_from_that_set() -> None:
    script = _load("card_rule_reissue")
    shipped = _shipped("dangerous-assertion", DANGER_VERSION)
    assert shipped.dataset == "clarify_replies.jsonl"
    found = script.facts(shipped.model_copy(update=STRIPPED))
    assert found == {"languages": shipped.languages, "replies": shipped.replies, "claim": shipped.claim,
                     "labelling": shipped.labelling}
    assert found["replies"].kind == "real" and "legal_answers" not in str(found)


def test_a_card_whose_counts_the_real_set_no_longer_gives_stops_the_script() -> None:
    script = _load("card_rule_reissue")
    shipped = _shipped("dangerous-assertion", DANGER_VERSION)
    assert shipped.confusion is not None
    moved = shipped.confusion.model_copy(update={"tp": shipped.confusion.tp + 1})
    with pytest.raises(SystemExit, match=r"clarify_replies.jsonl today gives .* not the card's"):
        script.facts(shipped.model_copy(update={**STRIPPED, "confusion": moved}))


def test_a_card_measured_on_another_set_than_the_script_reads_is_never_given_that_sets_facts() -> None:
    script = _load("card_rule_reissue")
    real = _shipped("leak-detector", LEAK_VERSION)
    assert real.dataset == "partial_leaks_real.jsonl"
    with pytest.raises(SystemExit, match=r"measured on partial_leaks_real.jsonl; this script reads "
                                         r"partial_leaks.jsonl for leak-detector"):
        script.facts(real.model_copy(update=STRIPPED))
    # the earlier set's own cards (kept in superseded/) are still read from it
    old = real.model_copy(update={**STRIPPED, "dataset": "partial_leaks.jsonl"})
    assert script.facts(old)["replies"].kind == "constructed"


@pytest.mark.parametrize("judge", ["abstention", "factuality", "abstention-llm", "factuality-llm"])
def test_an_abstain_judges_card_on_the_real_answers_is_never_given_policybench_facts(judge: str) -> None:
    """The abstain judges' cards measured on the embedded models' real answers (abstain_replies.jsonl): were one to
    lack the card rule's facts, the script would stop rather than give it PolicyBench's GPT-4o replies."""
    script = _load("card_rule_reissue")
    (real,) = [c for c in shipped_cards() if c.judge == judge]
    assert real.dataset == "abstain_replies.jsonl"
    with pytest.raises(SystemExit, match=rf"measured on abstain_replies.jsonl; this script reads "
                                         rf"policybench/responses_dev.jsonl for {judge}"):
        script.facts(real.model_copy(update=STRIPPED))
