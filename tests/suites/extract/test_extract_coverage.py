"""Summary coverage: the review's aspect clauses, and which of them the summary mentions (e5 similarity)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import knowgap
from knowgap.models.base import ChatModel
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.suites.extract.coverage import THRESHOLD, review_aspects, summary_coverage
from knowgap.suites.extract.labelling import HERE
from knowgap.text.embed import Kind


class Words:
    """Bag-of-words embedder: cosine 1 for the same word set, lower the fewer words two texts share."""

    name = "words"

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str], kind: Kind = "passage") -> np.ndarray:
        self.calls += 1
        vocab = sorted({w for t in texts for w in re.findall(r"\w+", t.lower())})
        rows = np.array([[float(w in re.findall(r"\w+", t.lower())) for w in vocab] for t in texts])
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)


def test_a_review_sentence_is_cut_into_its_aspects() -> None:
    review = ("The waiter accidently spilled water on our table, and the manager checked up on our meal "
              "periodically and offered us a free after diner drink.")
    assert review_aspects(review) == ["The waiter accidently spilled water on our table",
                                      "and the manager checked up on our meal periodically and offered us a free "
                                      "after diner drink."]
    assert review_aspects("Great food, nice staff. But slow.") == ["Great food, nice staff.", "But slow."]
    assert review_aspects("房间干净整洁，前台服务热情，但是早餐种类太少。") == \
        ["房间干净整洁", "前台服务热情", "但是早餐种类太少。"]


def test_coverage_counts_the_clauses_the_summary_mentions() -> None:
    review = "The sushi was fresh and cheap, the waiter ignored us for twenty minutes."
    words = Words()
    both = summary_coverage(review, "The sushi was fresh and cheap. The waiter ignored us for twenty minutes.", words)
    one = summary_coverage(review, "The sushi was fresh and cheap.", words)
    assert both.score == 1.0 and one.score == 0.5 and words.calls == 2  # one embedding call per summary
    assert one.covered == [True, False] and one.best[0] == pytest.approx(1.0) and one.best[1] < THRESHOLD
    assert summary_coverage(review, "", words).score is None


@pytest.mark.slow
def test_with_e5_a_summary_covers_its_own_review_and_not_another() -> None:
    rows = [json.loads(line) for line in (HERE / "handwritten_calibration.jsonl").read_text().splitlines()]
    zh = [r for r in rows if r["id"].startswith("cal-zh")]
    own = summary_coverage(zh[0]["review"], zh[0]["faithful_summary"])
    other = summary_coverage(zh[0]["review"], zh[1]["faithful_summary"])
    assert own.score == 1.0 and other.score == 0.0, (own, other)


class Copier(ChatModel):
    """Summarizer whose summary is the review itself (so every clause is covered); any other request: no JSON."""

    spec = "scripted:copier"

    async def chat(self, request: ChatRequest) -> ChatResponse:
        user = request.messages[-1].content
        if "<<<\n" not in user:
            return ChatResponse(text="no")
        review = user.split("<<<\n", 1)[1].rsplit("\n>>>", 1)[0]
        return ChatResponse(text=json.dumps({"summary": review, "overall_sentiment": "neutral",
                                             "contains_conflicting_signals": False}))


@pytest.mark.slow
def test_the_suite_reports_coverage_of_the_judged_summaries(runs_root: Path) -> None:
    fake = Copier()
    result = knowgap.run("extract", models={"target": fake.spec}, providers={fake.spec: fake},
                         options={"kinds": ["normal"], "sample": 2, "runs": 2, "faithfulness_runs": 1,
                                  "offline_checker": False}, runs_root=runs_root)
    found = next(m for m in result.metrics if m.name == "summary_coverage")
    assert found.n == 2 and found.value == pytest.approx(1.0)  # only the judged first run of each case
    for line in (result.path / "trials.jsonl").read_text().splitlines():
        first, second = json.loads(line)["output"]["clean"]
        assert first["coverage"] == pytest.approx(1.0) and first["uncovered_clauses"] == []
        assert "coverage" not in second


@pytest.mark.slow
def test_a_summary_in_another_language_gets_no_coverage() -> None:
    """e5-small's similarity across languages stays under the threshold: version 1 gave an English summary of a
    Chinese review a coverage near 0 whatever it said. It is now not scored."""
    rows = [json.loads(line) for line in (HERE / "handwritten_calibration.jsonl").read_text().splitlines()]
    zh = next(r for r in rows if r["id"] == "cal-zh-01")
    english = summary_coverage(zh["review"], "The hotel is five minutes from the subway, the room was clean and tidy, "
                                             "the front desk was friendly, and the guest will come again.")
    assert english.score is None and english.other_language and english.covered == []
    assert english.clauses == review_aspects(zh["review"])
    assert summary_coverage(zh["review"], zh["faithful_summary"]).score == 1.0


class EmptySummary(ChatModel):
    """Summarizer that returns valid JSON with an empty summary."""

    spec = "scripted:empty-summary"

    async def chat(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(text=json.dumps({"summary": "", "overall_sentiment": "neutral",
                                             "contains_conflicting_signals": False}))


@pytest.mark.slow
def test_an_empty_summary_is_counted_not_a_crash(runs_root: Path) -> None:
    """Version 1 zipped the review's clauses with an empty list: every trial with an empty summary failed with a
    ValueError in suite code."""
    fake = EmptySummary()
    result = knowgap.run("extract", models={"target": fake.spec}, providers={fake.spec: fake},
                         options={"kinds": ["normal"], "sample": 3, "runs": 1}, runs_root=runs_root)
    assert result.ok, result.error_causes
    metrics = {m.name: m for m in result.metrics}
    assert metrics["coverage_outcome:empty"].value == 3 and "summary_coverage" not in metrics
