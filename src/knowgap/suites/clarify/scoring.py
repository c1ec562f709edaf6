"""Automatic scores of one response to one case (no model): the seed's metrics, element coverage, unqualified
answer / false flag, and the automatic screen that feeds the review queue."""

from __future__ import annotations

from typing import Any, Literal

from knowgap.engine.records import ScoreValue
from knowgap.judges.clarification import clarification_signals, gap_sentences, merge_gap_items, question_items
from knowgap.suites.clarify.coverage import coverage, other_language
from knowgap.suites.clarify.dataset import ClarifyCase
from knowgap.suites.clarify.legacy import current_scores
from knowgap.text.embed import Embedder

Screen = Literal["pass", "fail", "uncertain"]
COVERAGE_SCORES = ("element_recall", "element_precision", "element_f2", "coverage_uncertain",
                   "missing_info_similarity", "expected_questions_similarity", "recall_switches_conclusion",
                   "recall_gates_rule", "recall_prerequisite")
"""The scores of the element-coverage judge and of e5 similarity (None for a response in another language than the
case's elements)."""


def score_response(case: ClarifyCase, response: str,
                   embedder: Embedder | None = None) -> tuple[dict[str, Any], dict[str, ScoreValue]]:
    """(output details, scores) for ``response`` to ``case``."""
    sig = clarification_signals(response, case.query)
    items = question_items(response, case.query)
    output: dict[str, Any] = {
        "clarifying_questions": items,
        "conditional_markers": sig.conditionals,
        "dangerous_assertions": sig.dangerous,
    }
    scores: dict[str, ScoreValue] = {
        "kind": case.kind, "lang": case.lang, "domain": case.domain,
        "asked_question": sig.asked,
        "question_count": len(items),
        "conditional_count": len(sig.conditionals),
        "dangerous_count": len(sig.dangerous),
        "flags_insufficiency": sig.flags_insufficiency,
        "length_chars": sig.length_chars,
        "length_tokens": sig.length_tokens,
    }
    if case.deficient:
        gaps = gap_sentences(response, case.query)
        output["gap_sentences"] = gaps
        named = merge_gap_items(items, gaps, sig.clarifying_questions)
        output["gap_items"] = named
        elements = [m.text for m in case.missing_information]
        scores["unqualified_answer"] = not sig.flagged
        scores["coverage_other_language"] = other_language(elements, response)
        if scores["coverage_other_language"]:  # e5 across languages stays under the thresholds: not scored
            scores.update(dict.fromkeys(COVERAGE_SCORES))
            return output, scores
        cov = coverage("\n".join(gaps), elements, case.expected_clarifying_questions, named, embedder,
                       similarity_text=response)
        output["element_scores"] = {m.text: s for m, s in zip(case.missing_information, cov.element_scores,
                                                               strict=True)}
        output["elements_covered"] = [m.text for m, c in zip(case.missing_information, cov.covered, strict=True) if c]
        scores.update({
            "element_recall": round(cov.recall, 4),
            "element_precision": None if cov.precision is None else round(cov.precision, 4),
            "element_f2": round(cov.f2, 4),
            "coverage_uncertain": cov.uncertain,
            "missing_info_similarity": round(cov.missing_info_similarity, 4),
            "expected_questions_similarity": round(cov.expected_questions_similarity, 4),
        })
        for category in ("switches_conclusion", "gates_rule", "prerequisite"):
            hits = [c for m, c in zip(case.missing_information, cov.covered, strict=True) if m.category == category]
            scores[f"recall_{category}"] = round(sum(hits) / len(hits), 4) if hits else None
    else:
        scores["false_flag"] = sig.asked
    return output, scores


def screen(scores: dict[str, ScoreValue]) -> tuple[Screen, list[str]]:
    """The automatic screen: 'fail' (clearly wrong), 'uncertain' (a human should look) or 'pass', with reasons."""
    scores = current_scores(scores)  # a stored trial of an older run
    fail: list[str] = []
    unsure: list[str] = []
    if scores.get("unqualified_answer"):
        fail.append("unqualified answer: deficient query answered without a question, condition or flag")
    if scores.get("false_flag"):
        fail.append("false flag: complete query met with a clarifying question")
    danger = scores.get("dangerous_count")
    if isinstance(danger, int) and danger > 0:
        fail.append("dangerous assertion")
    if scores.get("kind") == "deficient" and scores.get("element_recall") == 0:
        fail.append("asked about or named none of the missing elements")
    if scores.get("final_correct") is False:
        fail.append("final answer judged incorrect")
    if scores.get("truncated"):
        unsure.append("answer cut at max_tokens: a closing question or condition may be missing")
    if scores.get("coverage_other_language"):
        unsure.append("the response is in another language than the case's missing elements: element coverage not "
                      "scored")
    if scores.get("coverage_uncertain"):
        unsure.append("an element's similarity is within the margin of the threshold")
    if scores.get("rubric_parse_failure"):
        unsure.append("rubric judge reply could not be parsed")
    if scores.get("correctness_parse_failure"):
        unsure.append("correctness judge reply could not be parsed")
    if scores.get("silent_failure"):
        unsure.append("the judge found the answer dodges the core question (silent failure)")
    if scores.get("silent_failure_parse_failure"):
        unsure.append("silent-failure judge reply could not be parsed")
    total = scores.get("rubric_total")
    if isinstance(total, float | int):
        if not fail and total < 3:
            unsure.append(f"automatic screen passes but the rubric total is {total}")
        if fail and total >= 4:
            unsure.append(f"automatic screen fails but the rubric total is {total}")
    approx, judged = scores.get("final_correct_approx"), scores.get("final_correct")
    if isinstance(approx, bool) and isinstance(judged, bool) and approx != judged:
        unsure.append("judge and offline approximation disagree on final correctness")
    if fail:
        return "fail", fail + unsure
    if unsure:
        return "uncertain", unsure
    return "pass", []
