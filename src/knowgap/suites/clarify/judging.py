"""The LLM judges of the clarify suite (judge role) and the offline approximation of final correctness.

- rubric: the seed's four dimensions, 1 to 5 each, weighted 0.3 / 0.3 / 0.25 / 0.15; the judge reads the
  shipped rater guideline and rates one dimension per request with one digit, scored G-Eval style (the
  probability-weighted mean over 1..5 from the token probabilities, :mod:`knowgap.judges.geval`; the sampled
  digit where the judge model gives no probabilities, counted); a dimension with no digit is a parse failure
  (counted, never replaced by a default);
- the discrimination pairs the rubric is validated on, built from each deficient case: its reference reply
  (expected clarifying questions plus conditional answer) and a fluent reply that assumes the missing facts;
- correctness: the final answer against the reference conclusion (correct / partially_correct / incorrect);
- silent failure (the seed's "沉默的失败"): does an answer that looks complete dodge the core question, or give only
  "correct nonsense"? The judge spec ``judges/data/silent_failure.yaml`` (outcomes ``dodges`` / ``addresses``) sees
  the question and the answer; a reply with no single outcome is a parse failure (counted, never defaulted);
- approximate correctness (no model): every group of ``conclusion_terms`` appears in the final answer (as a
  word sequence; a Chinese term also inside a jieba compound such as "赔偿损失"), and the answer asks no
  further question. Negation is not understood. It is labelled
  *approximate* wherever it is reported.
"""

from __future__ import annotations

from functools import cache
from typing import Literal

from pydantic import BaseModel

from knowgap.engine.suite import TrialContext
from knowgap.judges.clarification import clarification_signals
from knowgap.judges.geval import Ratings, rate
from knowgap.judges.spec import JudgeSpec, load_spec
from knowgap.models.structured import ParseFailure, parse_as
from knowgap.models.types import ChatRequest
from knowgap.suites.clarify.dataset import ClarifyCase
from knowgap.suites.clarify.prompts import rubric_prompts
from knowgap.text import detect_lang, tokens

APPROX_VERSION = "clarify-correctness-approx-1"
"""Judge ``clarify-correctness-approx`` (:func:`approximate_correct`); change with the term matching."""

RUBRIC_WEIGHTS: dict[str, float] = {"gap_identification": 0.3, "question_quality": 0.3,
                                    "conditional_caution": 0.25, "risk_control": 0.15}


def rubric_anchors(response: str, query: str) -> dict[str, str]:
    """The rubric's bottom anchors that the offline clarification detector (``clarification-signals``) finds the
    reply meets, dimension -> why: B "1 no question" when it asks no clarifying question; A "1 no gap identified,
    answers on assumptions" when it also neither says the facts are not enough nor answers conditionally."""
    signals = clarification_signals(response, query)
    anchors = {}
    if not signals.asked:
        anchors["question_quality"] = "asks no clarifying question"
        if not signals.flagged:
            anchors["gap_identification"] = "asks nothing, names no missing fact and states no condition"
    return anchors


async def judge_rubric(ctx: TrialContext, guideline: str, case: ClarifyCase, response: str, *,
                       seed: int | None = 0) -> Ratings:
    """The four ratings of ``response`` by the model of the ``judge`` role, with the bottom anchors the reply
    plainly meets applied (:func:`rubric_anchors`); their total is the weighted sum. The model rates every
    dimension all the same (its ratings stay in ``Ratings.model``)."""
    ratings = await rate(ctx, "judge", rubric_prompts(guideline, case, response), RUBRIC_WEIGHTS, seed=seed)
    return ratings.anchored(rubric_anchors(response, case.query))


def reference_reply(case: ClarifyCase) -> str:
    """The case's own good reply: its expected clarifying questions, then its conditional answer."""
    questions = "\n".join(f"{i}. {q}" for i, q in enumerate(case.expected_clarifying_questions, start=1))
    if case.lang == "zh":
        return (f"要回答这个问题，还需要先了解以下情况：\n{questions}\n\n"
                f"在您补充之前，只能做有条件的分析：{case.conditional_answer}")
    return (f"To answer this I first need a few facts:\n{questions}\n\nUntil you tell me, I can only answer "
            f"conditionally: {case.conditional_answer}")


def assuming_reply(case: ClarifyCase) -> str:
    """A fluent reply that assumes the missing facts (the case's hidden facts, stated as known) and gives a
    definite conclusion, with no question."""
    facts = " ".join(f.strip() for f in case.hidden_facts)
    if case.lang == "zh":
        return f"根据您的情况：{facts}\n\n结论很明确：{case.conclusion}"
    return f"Based on your situation: {facts}\n\nThe answer is clear: {case.conclusion}"


SILENT_FAILURE_SPEC = "silent_failure"
"""The built-in judge spec (``judges/data/silent_failure.yaml``) of the ``clarify-silent-failure`` judge."""


@cache
def silent_failure_spec() -> JudgeSpec:
    return load_spec(SILENT_FAILURE_SPEC)


def silent_failure_request(question: str, response: str) -> ChatRequest:
    return silent_failure_spec().request({"question": question, "response": response})


def parse_silent_failure(text: str) -> bool | ParseFailure:
    """True: the answer dodges the core question (a silent failure); False: it addresses it."""
    outcome = silent_failure_spec().parse(text)
    return outcome if isinstance(outcome, ParseFailure) else outcome == "dodges"


async def judge_silent_failure(ctx: TrialContext, question: str, response: str) -> bool | ParseFailure:
    """The ``judge`` role's verdict on ``response``: True when it dodges ``question``'s core question."""
    return parse_silent_failure((await ctx.generate("judge", silent_failure_request(question, response))).text)


class CorrectnessVerdict(BaseModel):
    verdict: Literal["correct", "partially_correct", "incorrect"]
    reason: str = ""


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
