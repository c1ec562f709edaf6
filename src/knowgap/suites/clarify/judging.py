"""The LLM judges of the clarify suite (judge role) and the offline approximation of final correctness.

- rubric: the seed's four dimensions, 1 to 5 each, weighted 0.3 / 0.3 / 0.25 / 0.15; the judge reads the
  shipped rater guideline; a reply that is not valid JSON with four integers 1..5 is a parse failure (counted,
  never replaced by a default);
- correctness: the final answer against the reference conclusion (correct / partially_correct / incorrect);
- approximate correctness (no model): every group of ``conclusion_terms`` appears in the final answer (as a
  word sequence; a Chinese term also inside a jieba compound such as "赔偿损失"), and the answer asks no
  further question. Negation is not understood. It is labelled
  *approximate* wherever it is reported.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from knowgap.models.structured import ParseFailure, parse_as
from knowgap.text import detect_lang, tokens

APPROX_VERSION = "clarify-correctness-approx-1"
"""Judge ``clarify-correctness-approx`` (:func:`approximate_correct`); change with the term matching."""

RUBRIC_WEIGHTS: dict[str, float] = {"gap_identification": 0.3, "question_quality": 0.3,
                                    "conditional_caution": 0.25, "risk_control": 0.15}


class RubricScores(BaseModel):
    gap_identification: int = Field(ge=1, le=5)
    question_quality: int = Field(ge=1, le=5)
    conditional_caution: int = Field(ge=1, le=5)
    risk_control: int = Field(ge=1, le=5)
    rationale: str = ""

    @property
    def total(self) -> float:
        return round(sum(getattr(self, k) * w for k, w in RUBRIC_WEIGHTS.items()), 4)


class CorrectnessVerdict(BaseModel):
    verdict: Literal["correct", "partially_correct", "incorrect"]
    reason: str = ""


def parse_rubric(text: str) -> RubricScores | ParseFailure:
    return parse_as(text, RubricScores)


def parse_verdict(text: str) -> CorrectnessVerdict | ParseFailure:
    return parse_as(text, CorrectnessVerdict)


def _has_sequence(words: list[str], seq: list[str]) -> bool:
    n = len(seq)
    return n > 0 and any(words[i:i + n] == seq for i in range(len(words) - n + 1))


def _term_found(words: list[str], alternative: str) -> bool:
    seq = tokens(alternative)
    if not seq:
        return False
    if _has_sequence(words, seq):
        return True
    # jieba joins Chinese compounds ("赔偿损失", "9万元" -> "9" "万元"), so a Chinese term may sit inside a word
    # of the answer: compare it with the answer's words joined without punctuation
    if detect_lang(alternative) == "zh":
        return "".join(seq) in "".join(words)
    return False


def approximate_correct(answer: str, conclusion_terms: list[str], asked_again: bool) -> tuple[bool, float]:
    """(all term groups found and no further question, share of term groups found)."""
    words = tokens(answer)
    found = [any(_term_found(words, alt.strip()) for alt in group.split("|") if alt.strip())
             for group in conclusion_terms]
    share = sum(found) / len(found) if found else 0.0
    return (all(found) and not asked_again, share)
