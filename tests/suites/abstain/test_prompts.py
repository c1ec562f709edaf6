from __future__ import annotations

import pytest

from knowgap.models.structured import ParseFailure
from knowgap.suites.abstain.prompts import PAPER_CONFIGS, parse_answer, parse_hypotheticals, salvage_response


@pytest.mark.parametrize(("text", "response", "citation"), [
    ('{"response": "It is 5.", "citation": 2}', "It is 5.", 2),
    ('```json\n{"response": "It is 5.", "citation": "Fact 3",}\n```', "It is 5.", 3),
    ('Sure! {"response": "Not in the facts.", "citation": "no citation"} Hope it helps', "Not in the facts.", None),
    ('{"answer": "上下文没有提到。", "citation": null}', "上下文没有提到。", None),
    ("The fee is 5 dollars.\nCitation: Fact 4", "The fee is 5 dollars.", 4),
])
def test_tolerant_parsing(text: str, response: str, citation: int | None) -> None:
    parsed = parse_answer(text)
    assert not isinstance(parsed, ParseFailure), parsed
    assert (parsed.response, parsed.citation) == (response, citation)


@pytest.mark.parametrize("text", ["", "just prose, no citation line", '{"response": "x"}',
                                  '{"response": 3, "citation": 1}', '{"response": "cut off'])
def test_parse_failures_are_outcomes(text: str) -> None:
    assert isinstance(parse_answer(text), ParseFailure)


def test_salvage_a_truncated_answer() -> None:
    assert salvage_response('{"response": "QR codes are \\"fast\\" and') == 'QR codes are "fast" and'
    assert salvage_response("plain text") == "plain text"


def test_the_papers_ten_configurations() -> None:
    assert len(PAPER_CONFIGS) == 10 and len(set(PAPER_CONFIGS)) == 10
    assert ("direct", "basic") in PAPER_CONFIGS and not any(r == "direct" and p != "basic" for r, p in PAPER_CONFIGS)


def test_hypotheticals() -> None:
    assert parse_hypotheticals("1. A is 5.\n- B is 6.\n\nok\nC is 7.", 3) == ["A is 5.", "B is 6.", "C is 7."]
