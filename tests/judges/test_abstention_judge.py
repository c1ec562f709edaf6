"""The deterministic abstention detector on hand-written Chinese and English responses."""

from __future__ import annotations

import pytest

from knowgap.judges.abstention import abstention_phrase, is_abstention

EN_ABSTAIN = [
    "I don't know.",
    "I do not know the answer to that.",
    "I dont know, sorry.",
    "I'm not sure; the context doesn't say.",
    "I’m unable to find that in the context.",  # typographic apostrophe
    "The context does not mention Sunday opening hours.",
    "The text doesn't specify who pays return shipping.",
    "This information is not provided in the context.",
    "That information is not available.",
    "The answer is not given in the passage.",
    "There is no information about the processing time.",
    "I cannot answer this question based on the given context.",
    "Unable to determine from the passage.",
    "Sorry, I can't tell from the information given.",
    "The passage does not contain any information about extensions.",
    "The context provided does not include the cost of extending the warranty.",
    "It does not include any details about the processing time.",
    "Not enough information to answer.",
    "Insufficient context to say.",
    "The processing time is not mentioned.",
]

EN_ANSWER = [
    "The library closes at 20:00 on weekdays.",
    "You have 30 days to return the order.",
    "The fee does not include VAT; it is 45 euros.",
    "Breakfast is not included, but the permit costs 45 euros per year.",
    "The price does not contain hidden charges: 45 euros per year.",
    "Towels are not provided; the warranty lasts two years.",
    "The Sunday service is not available; the library closes at 20:00 on weekdays.",
    "The warranty covers defects but not limescale damage; it lasts two years.",
    "I know this one: the warranty lasts two years.",
    "The permit cannot be transferred; it costs 45 euros a year.",
    "There is no fee for seniors: buses are free for people over 65.",
    "No, it does not close early on Fridays; it closes at 20:00.",
    "Each household may hold at most two permits, not three.",
    "Don't worry, you have 30 days.",
]

ZH_ABSTAIN = [
    "我不知道。",
    "上下文中没有提到。",
    "文中并未提及周日的儿科门诊。",
    "根据所给信息，无法确定夜班公交的票价。",
    "上下文没有相关信息。",
    "材料中没有说明是否允许养猫。",
    "不清楚，上下文没有给出答案。",
    "信息不足，无法回答。",
    "抱歉，我无法从上下文中得知这一点。",
    "上下文未包含交换生学分转换的信息。",
    "这个问题我不确定。",
    "文中无相关内容。",
    "上下文并没有提供关于票价的信息。",
    "没有提供任何相关信息，无从判断。",
]

ZH_ANSWER = [
    "工作日下午五点半关门。",
    "押金在验收合格后7个工作日内退还。",
    "65周岁以上老人乘公交免费，不需要付钱。",
    "本科生毕业需要修满160学分。",
    "该费用未包含增值税，每年45欧元。",
    "押金没有利息，验收合格后7个工作日内退还。",
    "无需付费，老人可以免费乘车。",
    "中心周日不开放儿科门诊。",
    "可以，公寓允许养猫，但需要额外押金。",
    "公寓没有提供停车位，但押金7个工作日内退还。",
    "根据上下文，答案是160学分。",
    "房租不包含水电费，每月3000元。",
]


@pytest.mark.parametrize("text", EN_ABSTAIN + ZH_ABSTAIN)
def test_abstentions_are_detected(text: str) -> None:
    phrase = abstention_phrase(text)
    assert phrase is not None
    assert phrase.lower() in text.lower().replace("’", "'")
    assert is_abstention(text)


@pytest.mark.parametrize("text", EN_ANSWER + ZH_ANSWER)
def test_answers_are_not_abstentions(text: str) -> None:
    assert abstention_phrase(text) is None
    assert not is_abstention(text)


def test_lists_are_big_enough() -> None:
    assert min(len(EN_ABSTAIN), len(EN_ANSWER), len(ZH_ABSTAIN), len(ZH_ANSWER)) >= 10


@pytest.mark.parametrize(("text", "phrase"), [
    ("I DON'T KNOW", "I DON'T KNOW"),
    ("Well, the text does not specify it.", "text does not specify"),
    ("上下文中没有提到。", "没有提到"),
    ("信息不足。", "信息不足"),
])
def test_the_phrase_found(text: str, phrase: str) -> None:
    assert abstention_phrase(text) == phrase


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_empty_response_counts_as_abstention(text: str) -> None:
    assert abstention_phrase(text) is None
    assert is_abstention(text)
