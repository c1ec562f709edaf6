"""An example of *your own system* as knowgap's target: a tiny retrieval-augmented answerer and a rule-based
review extractor, written as plain functions with no knowgap import.

Evaluate them in-process with a ``python:`` spec:

    knowgap run abstain --model python:examples/own_system/rag_app.py:answer \\
        --retrieval rag --prompts conservative --sample 20
    knowgap run extract --model python:examples/own_system/rag_app.py:extract_review \\
        --kinds normal --kinds adversarial --runs 1 --faithfulness-runs 0

or behind HTTP with ``python examples/own_system/serve.py --port 9000`` and an ``http:`` spec (see that file).

``answer`` retrieves from the context it is given: it scores each numbered fact by word overlap with the
question and answers with the best one only when enough of the question's words are covered, otherwise it
abstains. ``extract_review`` counts positive and negative cue words (English and Chinese). Both are
deliberately simple, so the suites' numbers show what such a system gets right and wrong.
"""

from __future__ import annotations

import json
import re
from typing import Any

ABSTAIN = "I cannot answer that from the given information."
_WORD = re.compile(r"[a-z0-9]+|[\u4e00-\u9fff]", re.IGNORECASE)
_FACT = re.compile(r"^Fact (\d+): (.*)$", re.MULTILINE)
_STOP = set("a an the of to in on for and or is are was were be by with what which who whom when where why how "
            "do does did can could should would may might will shall it its this that these those as at from "
            "i you he she we they my your our their".split())
MIN_COVERAGE = 0.6

_POSITIVE = ("great", "good", "excellent", "delicious", "friendly", "love", "loved", "pleasant", "perfect",
             "amazing", "fresh", "recommend", "好", "棒", "喜欢", "满意", "推荐", "好吃", "赞")
_NEGATIVE = ("bad", "terrible", "awful", "rude", "slow", "cold", "dirty", "disappointing", "disappointed",
             "worst", "overpriced", "never again", "差", "慢", "难吃", "失望", "贵", "脏", "糟糕")


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - _STOP


def _messages(request: Any) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in request.messages]


def _last_user(request: Any) -> str:
    return next((content for role, content in reversed(_messages(request)) if role == "user"), "")


def _wants_json(request: Any) -> bool:
    return any(role == "system" and "JSON" in content for role, content in _messages(request))


def answer(request: Any) -> str:
    """Answer the question from the numbered facts in the message, or abstain."""
    message = _last_user(request)
    question = message.rpartition("Question:")[2].strip() or message
    asked = _words(question)
    best, best_coverage = None, 0.0
    for number, fact in _FACT.findall(message):
        coverage = len(asked & _words(fact)) / max(1, len(asked))
        if coverage > best_coverage:
            best, best_coverage = (int(number), fact.strip()), coverage
    if best is None or best_coverage < MIN_COVERAGE:
        reply, citation = ABSTAIN, "no citation"
    else:
        reply, citation = best[1], best[0]
    if _wants_json(request):
        return json.dumps({"response": reply, "citation": citation}, ensure_ascii=False)
    return reply


def extract_review(request: Any) -> str:
    """Summary (the review's first sentence), overall sentiment and conflicting signals from cue words."""
    review = _last_user(request)
    text = review.lower()
    positive = sum(text.count(cue) for cue in _POSITIVE)
    negative = sum(text.count(cue) for cue in _NEGATIVE)
    sentiment = "positive" if positive > negative else "negative" if negative > positive else "neutral"
    first = re.split(r"(?<=[.!?。！？])\s*", review.strip(), maxsplit=1)[0]
    return json.dumps({"summary": first[:300], "overall_sentiment": sentiment,
                       "contains_conflicting_signals": bool(positive and negative)}, ensure_ascii=False)
