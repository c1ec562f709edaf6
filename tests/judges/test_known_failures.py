"""The adversarial constructs the shipped cards say their judges fail: each re-measured on its labelled set gives
the figure its card records (a change to the judge or the set shows here), and the sets keep their rules."""

from __future__ import annotations

import re

import pytest

from knowgap.judges.abstention import VERSION as ABSTENTION
from knowgap.judges.cards import KnownFailure, find_card
from knowgap.judges.faithfulness import VERSION as FAITHFULNESS
from knowgap.judges.known_failures import (
    HEDGED_ANSWERS,
    VERBATIM_EXTRACTS,
    extract_pairs,
    measure_hedged_answers,
    measure_verbatim_extracts,
)


def _recorded(judge: str, version: str, labelled_set: str) -> KnownFailure:
    card = find_card(judge, version)
    assert card is not None
    (found,) = [f for f in card.known_failures if f.labelled_set.endswith(labelled_set)]
    return found


def _same(measured: KnownFailure, recorded: KnownFailure) -> None:
    assert measured.model_dump(exclude={"measured"}) == recorded.model_dump(exclude={"measured"})


def test_the_faithfulness_card_records_what_the_checker_does_on_verbatim_extracts() -> None:
    measured = measure_verbatim_extracts()
    _same(measured, _recorded("faithfulness", FAITHFULNESS, VERBATIM_EXTRACTS.name))
    assert measured.n == 26 and set(measured.languages) == {"en", "zh"}
    assert {k: f.n for k, f in measured.languages.items()} == {"en": 13, "zh": 13}


@pytest.mark.parametrize("judge", ["abstention", "abstention-scenarios"])
def test_the_abstention_cards_record_what_the_detector_does_on_hedged_answers(judge: str) -> None:
    _same(measure_hedged_answers(), _recorded(judge, ABSTENTION, HEDGED_ANSWERS.name))


def test_the_verbatim_extracts_keep_their_rule() -> None:
    """Each unfaithful summary holds at least 90% of its tokens in the document; each faithful one shares no run
    longer than 3 words (4 Chinese characters) with it, names and numbers aside (rule verbatim-extract-1)."""

    def tokens(text: str, lang: str) -> list[str]:
        return re.findall(r"[\u4e00-\u9fff]", text) if lang == "zh" else re.findall(r"[a-z0-9']+", text.lower())

    def longest_run(a: list[str], b: list[str]) -> int:
        best = 0
        for i in range(len(a)):
            for j in range(len(b)):
                k = 0
                while i + k < len(a) and j + k < len(b) and a[i + k] == b[j + k]:
                    k += 1
                best = max(best, k)
        return best

    pairs = extract_pairs()
    assert {p.variant for p in pairs} == {"fact", "context"}
    for p in pairs:
        doc = tokens(p.document, p.lang)
        unfaithful = tokens(p.unfaithful, p.lang)
        assert sum(t in doc for t in unfaithful) / len(unfaithful) >= 0.9, p.id
        assert longest_run(tokens(p.faithful, p.lang), doc) <= (4 if p.lang == "zh" else 3), p.id
        assert p.unfaithful != p.document and p.faithful != p.document
