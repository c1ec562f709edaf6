"""The deterministic clarification signals on hand-checked Chinese and English responses."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from knowgap.judges.clarification import (
    _DE_CLAUSE,
    clarification_signals,
    clarifying_units,
    conditional_markers,
    dangerous_assertions,
    flags_insufficiency,
    gap_items,
    gap_sentences,
    question_items,
)

ZH_Q = "公司今天把我开除了，我能拿到赔偿吗？"
EN_Q = "My employer fired me yesterday. Can I get compensation?"


def test_clarifying_questions_zh() -> None:
    response = ("公司开除我能拿到赔偿吗？这要看具体情况。请问公司以什么理由辞退您？您在公司工作了多久？"
                "请提供您的月工资。劳动合同法规定了经济补偿。")
    # the restated user question is not a clarifying question; a request without a question mark is
    assert clarifying_units(response, ZH_Q) == ["请问公司以什么理由辞退您？", "您在公司工作了多久？",
                                                "请提供您的月工资。"]
    assert clarifying_units("公司能否随意解除劳动合同？答案是否定的。", ZH_Q) == ["公司能否随意解除劳动合同？"]
    assert clarifying_units("根据劳动合同法第47条，经济补偿按工作年限计算。", ZH_Q) == []


def test_clarifying_questions_en() -> None:
    response = ("Can I get compensation? It depends. Could you tell me why you were dismissed. "
                "How long did you work there? Please provide your monthly wage. Compensation is N months.")
    assert clarifying_units(response, EN_Q) == ["Could you tell me why you were dismissed.",
                                                "How long did you work there?", "Please provide your monthly wage."]


def test_english_questions_in_a_list_are_read_by_their_first_word() -> None:
    """A numbered or bulleted English question with no "you" in it ("1. Was the flat bought before the marriage?")
    is a question to the user: its list marker is not its first word."""
    reply = ("To answer this I first need a few facts:\n1. Was the apartment bought before or after the marriage?\n"
             "2. Whose name is on the property certificate?\n- Should the interest be counted from the signing?\n"
             "3) The rate was agreed in writing?")
    assert clarifying_units(reply) == ["1. Was the apartment bought before or after the marriage?",
                                       "2. Whose name is on the property certificate?",
                                       "- Should the interest be counted from the signing?"]


def test_question_items_replace_list_headers() -> None:
    zh = "需要了解以下信息：\n1. 解除理由是什么\n2. 您的月工资\n如果是违法解除，可以要求赔偿金。"
    assert question_items(zh, ZH_Q) == ["解除理由是什么", "您的月工资"]
    en = "I need to know a few things:\n1. Why were you dismissed?\n2. How long did you work there?"
    assert question_items(en, EN_Q) == ["Why were you dismissed?", "How long did you work there?"]


def test_gap_items_add_named_facts_but_not_headers() -> None:
    zh = "需要了解以下信息：\n1. 解除理由是什么\n2. 您的月工资\n如果是违法解除，可以要求赔偿金。"
    # the header is not an item; the conditional names a fact the model treats as unknown
    assert gap_items(zh, ZH_Q) == ["解除理由是什么", "您的月工资", "如果是违法解除，可以要求赔偿金。"]
    en = "If you were on probation, 3 days' notice is enough. The employer must pay your wages."
    assert gap_items(en, EN_Q) == ["If you were on probation, 3 days' notice is enough."]
    assert gap_items("The employer must pay 2N.", EN_Q) == []


def test_conditional_markers() -> None:
    assert conditional_markers("如果公司违法解除，您可以要求赔偿金；若属于严重违纪则不能。这取决于证据。") == \
        ["如果", "若", "取决于"]
    assert conditional_markers("在这种情况下，未签订书面劳动合同的，应当支付二倍工资。") == ["情况下", "……的，"]
    assert conditional_markers("If the dismissal was unlawful you get 2N, unless you agreed otherwise. "
                               "It depends on the reason.") == ["if", "unless", "otherwise", "depends"]
    assert conditional_markers("The employer must pay 2N.") == []
    assert conditional_markers("单位辞退你是违法的，应当支付赔偿金。") == []


def test_dangerous_assertions_are_word_level_and_skip_negation() -> None:
    assert dangerous_assertions("公司一定要赔，您肯定能赢，百分之百没问题。") == ["一定", "肯定", "百分之百"]
    # 不一定 is a hedge; 一定程度 / 一定的 are not assertions
    assert dangerous_assertions("这不一定，在一定程度上要看证据，需要一定的时间。") == []
    assert dangerous_assertions("You will definitely win, 100% guaranteed, no doubt.") == \
        ["definitely", "guaranteed", "no doubt", "100%"]
    assert dangerous_assertions("Certainly! That is not definitely true; I am uncertain.") == []
    assert dangerous_assertions("加付应付金额50%以上100%以下的赔偿金。") == []
    assert dangerous_assertions("The guarantee period is six months.") == []


def test_flags_and_signals() -> None:
    assert flags_insufficiency("信息不足，无法判断。")
    assert flags_insufficiency("It depends on why you were dismissed.")
    assert not flags_insufficiency("公司应当支付赔偿金。")
    sig = clarification_signals("您工作多久了？如果违法解除，一定能拿2N。", ZH_Q)
    assert sig.asked and sig.flagged and sig.dangerous == ["一定"] and sig.conditionals == ["如果"]
    assert sig.length_chars == 21  # 7 + 7 + 7 characters, spaces excluded
    silent = clarification_signals("公司属于违法解除，应支付赔偿金。", ZH_Q)
    assert not silent.asked and not silent.flagged


def test_gap_sentences_keep_only_what_treats_a_fact_as_unknown() -> None:
    response = ("劳动合同法保护劳动者。需要了解以下信息：\n1. 解除理由\n2. 工作年限\n"
                "如果属于违法解除，可以要求赔偿。祝顺利。")
    assert gap_sentences(response, ZH_Q) == ["需要了解以下信息：", "1. 解除理由", "2. 工作年限",
                                             "如果属于违法解除，可以要求赔偿。"]


# the "……的，" clause pattern before it was anchored at clause starts (2026-12-05): quadratic on a long clause
_OLD_DE_CLAUSE = re.compile(r"([^，,。；;！？!?：:\n]+)的[，,]")


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(list("的，,。；;！？!?：:\n是未签订合同应当支付 ab")), max_size=40).map("".join))
def test_the_de_clause_pattern_finds_what_it_found_before(text: str) -> None:
    assert _DE_CLAUSE.findall(text) == _OLD_DE_CLAUSE.findall(text)


def test_a_long_reply_without_punctuation_is_read_in_one_pass() -> None:
    """A runaway reply: one 'clause' of 40,000 characters. The old pattern retried it from each character."""
    text = "劳动合同" * 10_000
    assert conditional_markers(text) == [] and conditional_markers(text + "的，应当支付") == ["……的，"]
