"""Scores of one starter response (no model): did the model abstain, and, where the context answers, did it
give an accepted answer (as a substring after NFKC, lower case and without spaces)."""

from __future__ import annotations

import unicodedata
from typing import Any

from knowgap.engine.records import ScoreValue
from knowgap.judges.abstention import abstention_phrase
from knowgap.suites.starter.dataset import StarterCase

ANSWER_MATCH_VERSION = "answer-match-1"
"""Judge ``answer-match`` (:func:`contains_answer`); change whenever the matching changes."""


def _norm(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).lower().split())


def contains_answer(response: str, answers: list[str]) -> bool:
    body = _norm(response)
    return any(_norm(a) in body for a in answers)


def score_response(case: StarterCase, response: str) -> tuple[dict[str, Any], dict[str, ScoreValue]]:
    """(output, scores) of ``response`` to ``case``."""
    phrase = abstention_phrase(response)
    abstained = phrase is not None or not response.strip()
    correct = contains_answer(response, case.answers) and not abstained if case.answerable else None
    return ({"response": response, "abstention_phrase": phrase},
            {"answerable": case.answerable, "abstained": abstained, "correct": correct})
