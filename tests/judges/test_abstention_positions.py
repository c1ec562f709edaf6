"""Where the statement of missing knowledge sits decides: the lead sentence abstains, a caveat after an
answer does not; conditions and reasons are not abstentions; an answer from elsewhere after one is an answer."""

from __future__ import annotations

import pytest

from knowgap.judges.abstention import judge_abstention

ABSTAIN = [
    # en: hedged, sourced, "no specific X is Y", yes/no in front
    "The processing time is not explicitly mentioned in the provided context.",
    "The context does not directly address whether the pass can be renewed overseas.",
    "No specific documents for IC collection are listed in the provided context.",
    "No relevant information is provided.",
    "No, the context does not specify whether payouts affect top-ups.",
    "There isn't a direct mention of the limit.",
    "The procedure isn't directly outlined in the given context.",
    "This appears to be a transit scheme. However, its eligibility is not explicitly stated in the context.",
    "The context does not say. However, it mentions that applications take 3 days.",
    # zh
    "不，上下文没有说明是否可以退款。",
    "根据所提供的资料，无法确定办理时间。",
    "资料中找不到关于续签的内容。",
    "这个问题超出了所给资料的范围。",
    "上下文未明确提及该问题。",
    "似乎可以在网上办理。但上下文没有具体说明。",
]

ANSWER = [
    "Yes, you can apply online. The context does not mention fees.",
    "Gross earnings include basic pay and bonuses. Platform fees are not mentioned as a component.",
    "If the data is not available, enter NSI as the vehicle number.",
    "You should input 'NSI' if transport details are not available before arrival.",
    "No, you must submit Form V39A, as the context does not state that a letter can replace it.",
    "The context does not say. However, you can usually apply online within 3 days.",
    "The scheme does not cover cosmetic surgery.",
    "CPF transfers to cousins are not mentioned as eligible recipients; only immediate family are.",
    # zh
    "退款需要在30天内申请。不过上下文没有说明手续费。",
    "如果没有相关信息，请拨打热线咨询。办理时间为三个工作日。",
    "上下文未明确提及该问题。不过，通常可以在网上申请。",
    "您可以在线申请，手续费为20元。",
    "该保险不包括美容手术，保费每年300元。",
]


@pytest.mark.parametrize("text", ABSTAIN)
def test_abstains(text: str) -> None:
    verdict = judge_abstention(text)
    assert verdict.abstained, verdict
    assert verdict.phrase and verdict.phrase in text


@pytest.mark.parametrize("text", ANSWER)
def test_answers(text: str) -> None:
    verdict = judge_abstention(text)
    assert not verdict.abstained, verdict
    assert verdict.phrase is None


def test_reason_says_why() -> None:
    assert "caveat" in judge_abstention("Yes, you can. The context does not mention fees.").reason
    assert judge_abstention("").reason == "empty response"
