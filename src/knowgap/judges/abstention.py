"""A deterministic abstention detector (Chinese and English) that needs no model.

It answers one question: did the response decline to answer (say it does not know, that the information
is not in what it was given, or that it cannot answer)? This first version is a phrase lexicon; the
``abstain`` suite calibrates and extends it against labelled responses.
"""

from __future__ import annotations

import re

_SOURCE = r"(?:context|text|passage|document|source|article|excerpt|material|information)"
_EN = [
    r"\bi (?:do not|don't|dont) know\b",
    r"\b(?:i am|i'm) (?:not sure|unsure|unable|not able)\b",
    r"\b(?:cannot|can't|can not|unable to|not able to) (?:answer|determine|find|say|tell|provide|confirm|know)\b",
    r"\b(?:does not|doesn't|do not|don't|did not) (?:mention|say|specify|state|indicate)\b",
    # "provide/contain/include/give" and "not provided/included/..." also state facts ("the fee does not
    # include VAT", "breakfast is not included"): they count only about the source or about information.
    rf"\b{_SOURCE}(?: \w+)? (?:does not|doesn't|did not) (?:provide|contain|include|give)\b",
    r"\b(?:does not|doesn't|do not|don't|did not) (?:provide|contain|include|give) (?:(?:any|enough|"
    r"sufficient|specific|the|this|that|such) )*(?:information|details|data|answer|mention)\b",
    r"\bnot (?:mentioned|specified|stated|indicated)\b",
    rf"\bnot (?:provided|included|given|available|found|contained) in (?:the )?(?:\w+ )?{_SOURCE}",
    r"\b(?:information|details|data|answer)(?: \w+)? (?:is|are|was|were) not (?:provided|included|given|"
    r"available|found)\b",
    r"\b(?:no|not enough|insufficient) (?:information|details|data|mention|context)\b",
    r"\bthere is no (?:information|mention|indication|data)\b",
    r"\bno citation\b",
]
_ZH = [
    r"不知道", r"不清楚", r"不确定",
    r"(?:无法|不能|没法|难以)(?:回答|确定|判断|得知|获知|提供|找到|给出|知道|从)",
    r"(?:没有|并没有|没|未|并未|均未)(?:提到|提及|说明|涉及|给出|明确|列出|记载|规定)",
    # 提供/包含 also state facts (该费用未包含增值税): only about the source, or about information
    r"(?:上下文|文中|文本|原文|材料|资料|段落|文章|信息|以上|上述)[^，。！？,.]{0,6}?(?:没有|并没有|没|未|并未|均未)"
    r"(?:提供|包含)",
    r"(?:没有|并没有|没|未|并未|均未)(?:提供|包含)(?:任何)?(?:关于[^，。！？,.]{0,20}?的)?(?:相关|具体|足够|更多)?"
    r"(?:的)?(?:信息|资料|数据|内容|说明|答案)",
    r"(?:没有|无|缺乏|缺少)(?:相关|具体|足够|更多)?(?:的)?(?:信息|资料|数据|内容|说明)",
    r"信息不足", r"无从", r"无相关",
]
_PATTERN = re.compile("|".join(f"(?:{p})" for p in _EN + _ZH), re.IGNORECASE)


def abstention_phrase(text: str) -> str | None:
    """The first abstention phrase found in ``text``, or None."""
    match = _PATTERN.search(text.replace("’", "'"))
    return match.group(0) if match else None


def is_abstention(text: str) -> bool:
    """True when the response declines to answer. An empty response counts as an abstention."""
    return not text.strip() or abstention_phrase(text) is not None
