"""The offline checker separates clearly faithful from clearly unfaithful summaries, in English and Chinese,
and its text cues (claims, numbers, negation, polarity, names) do what they say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import knowgap
from knowgap.judges.faithfulness import DEFAULT_THRESHOLD, OfflineFaithfulness
from knowgap.models.base import ChatModel
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.text.claims import has_negation, numbers, polarity, proper_names, split_claims

EN_REVIEW = ("I ordered the Aurora X2 headphones. They arrived in 3 days and the sound is excellent. "
             "However, the ear pads got uncomfortable after two hours and customer service never answered my email.")
ZH_REVIEW = "外卖送了一个半小时，菜全凉了，米饭还是夹生的，不会再点了。"
ZH_REVIEW_2 = "酒店位置很方便，离地铁站只有五分钟，房间干净整洁，前台服务热情，下次还会再来。"

FAITHFUL = [
    (EN_REVIEW, "The Aurora X2 headphones arrived in 3 days and sound excellent, but the ear pads became "
                "uncomfortable after two hours and customer service never replied."),
    (EN_REVIEW, "The sound is excellent, but customer service never answered the customer's email."),
    (ZH_REVIEW, "外卖送了一个半小时，菜凉了，米饭夹生，顾客不会再点。"),
    (ZH_REVIEW_2, "酒店离地铁站五分钟，房间干净整洁，前台服务热情，顾客下次还会再来。"),
]
UNFAITHFUL = [
    (EN_REVIEW, "The Aurora X2 headphones arrived in 10 days and the sound is terrible."),
    (EN_REVIEW, "The Sony headphones were comfortable and customer service answered quickly."),
    (ZH_REVIEW, "外卖二十分钟就送到了，菜很热，顾客还会再点。"),
    (ZH_REVIEW_2, "酒店离地铁站要走三十分钟，房间很脏，顾客不会再来。"),
]


@pytest.fixture(scope="module")
def checker() -> OfflineFaithfulness:
    return OfflineFaithfulness()


@pytest.mark.parametrize(("source", "summary"), FAITHFUL)
def test_faithful_summaries_pass(checker: OfflineFaithfulness, source: str, summary: str) -> None:
    result = checker.check(source, summary)
    assert result.score is not None and result.score >= DEFAULT_THRESHOLD, result
    assert result.verdict == "faithful"


@pytest.mark.parametrize(("source", "summary"), UNFAITHFUL)
def test_unfaithful_summaries_fail(checker: OfflineFaithfulness, source: str, summary: str) -> None:
    result = checker.check(source, summary)
    assert result.score is not None and result.score < DEFAULT_THRESHOLD, result
    assert result.verdict == "unfaithful"
    assert any(c.issues for c in result.claims)


def test_every_faithful_scores_above_every_unfaithful(checker: OfflineFaithfulness) -> None:
    lowest_faithful = min(checker.check(s, t).score or 0.0 for s, t in FAITHFUL)
    highest_unfaithful = max(checker.check(s, t).score or 0.0 for s, t in UNFAITHFUL)
    assert lowest_faithful - highest_unfaithful > 0.1


def test_issues_name_what_disagrees(checker: OfflineFaithfulness) -> None:
    result = checker.check(EN_REVIEW, "The headphones arrived in 10 days.")
    assert "number" in result.claims[0].issues
    result = checker.check(EN_REVIEW, "The Sony headphones sound excellent.")
    assert "name" in result.claims[0].issues
    result = checker.check(ZH_REVIEW, "顾客还会再点。")
    assert {"negation", "polarity"} & set(result.claims[0].issues)


def test_empty_and_refusal_are_outcomes_not_numbers(checker: OfflineFaithfulness) -> None:
    assert checker.check(EN_REVIEW, "  ").model_dump() == {"score": None, "verdict": "empty", "claims": []}
    refusal = checker.check(EN_REVIEW, "I'm unable to summarize this review.")
    assert refusal.verdict == "refusal" and refusal.score is None


def test_split_claims_en_and_zh() -> None:
    assert split_claims("The food was great, but the service was slow. We will come back.") == [
        "The food was great", "but the service was slow.", "We will come back."]
    assert split_claims("房间干净整洁，前台服务热情，但是早餐种类太少。") == [
        "房间干净整洁", "前台服务热情", "但是早餐种类太少。"]


def test_numbers_digits_words_and_chinese() -> None:
    assert numbers("It took 2 weeks and cost $1,299.50") == {2.0, 1299.5}
    assert numbers("two weeks later, the one I bought broke") == {2.0}
    assert numbers("等了二十分钟，住了两晚") == {20.0, 2.0}


def test_negation_and_polarity() -> None:
    assert has_negation("The room wasn't clean") and has_negation("房间不干净")
    assert not has_negation("味道不错") and not has_negation("The room was clean")
    assert polarity("The food was great") == 1 and polarity("The food was not good") == -1
    assert polarity("菜很难吃") == -1 and polarity("味道不错") == 1 and polarity("房间是标准间") == 0


def test_proper_names() -> None:
    assert proper_names("I bought the Aurora X2 from Amazon. It broke.") == {"aurora", "x2", "amazon"}
    assert proper_names("我买的iPhone 15屏幕很好") == {"iphone"}


def test_shipped_calibration_cases_are_separated(checker: OfflineFaithfulness) -> None:
    from knowgap.suites.extract.dataset import load_cases

    scores: dict[bool, list[float]] = {True: [], False: []}
    for case in load_cases():
        if case.kind == "calibration":
            assert case.summary is not None and case.faithful is not None
            scores[case.faithful].append(checker.check(case.review, case.summary).score or 0.0)
    assert len(scores[True]) == len(scores[False]) == 6
    assert min(scores[True]) - max(scores[False]) > 0.1


class EnglishSummaries(ChatModel):
    """A summarizer that answers every review, whatever its language, with the same English summary."""

    spec = "scripted:english-summaries"

    async def chat(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(text=json.dumps({"summary": "The reviewer wrote about the product and the service.",
                                             "overall_sentiment": "neutral",
                                             "contains_conflicting_signals": False}))


def test_an_extract_run_leaves_summaries_in_another_language_unscored(runs_root: Path) -> None:
    """The checker compares words: an English summary of a Chinese review has none in common with it, and each
    was called unfaithful (score 0.249). The run now leaves them out of the offline metrics and counts them."""
    fake = EnglishSummaries()
    result = knowgap.run("extract", models={"target": fake.spec}, providers={fake.spec: fake},
                         options={"kinds": ["normal"], "runs": 1, "coverage": False},
                         runs_root=runs_root)
    outputs = [json.loads(line)["output"] for line in (result.path / "trials.jsonl").read_text().splitlines()]
    by_lang = {lang: [o["clean"][0] for o in outputs if o["lang"] == lang] for lang in ("en", "zh")}
    assert len(by_lang["en"]) == 24 and len(by_lang["zh"]) == 16
    assert all(r["offline_verdict"] == "other_language" and r["offline_score"] is None for r in by_lang["zh"])
    assert all(r["offline_verdict"] in ("faithful", "unfaithful") for r in by_lang["en"])
    metrics = {m.name: m for m in result.metrics}
    assert metrics["offline_outcome:other_language"].value == 16
    assert metrics["faithfulness_offline"].n == metrics["offline_unfaithful_rate"].n == 24
