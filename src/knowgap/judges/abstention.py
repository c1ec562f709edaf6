"""A deterministic abstention detector (Chinese and English) that needs no model.

It answers one question: did the response decline to answer (say it does not know, that the information
is not in what it was given, or that it cannot answer)? Two steps:

1. a phrase lexicon finds statements of missing knowledge ("the context does not specify", "no relevant
   information is provided", "上下文中没有提到", "无法确定" ...);
2. a position rule decides whether such a statement *is* the answer or only a caveat on one. A response
   abstains when its lead sentence (after a bare "No,"/"Yes,"/"不，") states the missing knowledge. When
   the statement comes only after a substantive first sentence ("Gross earnings include basic pay and
   bonuses. Platform fees are not mentioned."), the response answered and the statement is a caveat,
   unless that first sentence is itself only a hedge or a restatement of the question ("X appears to be
   ...", "According to the context, ..." with no claim of its own).

Two phrase families serve the abstain scenarios (issue 19), where declining takes other words: nobody can know
("no one knows", "没有人知道", "尚无定论") and a false premise ("the premise is false", "前提错误", "这个说法不正确");
they changed no verdict on PolicyBench.

Calibrated on the 1,729 labelled GPT-4o responses of PolicyBench (see ``docs/abstain.md`` for the measured
agreement and how to re-measure it with ``knowgap judge abstention FILE --label-field abstention``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowgap.text.segment import sentences

VERSION = "abstention-detector-2"
"""Judge catalogue name ``abstention``; change whenever the lexicon or the position rule changes."""

_SOURCE = (r"(?:context|text|passage|document|documents|source|sources|article|excerpt|material|information|"
           r"facts?|knowledge base|data|(?:questions? and )?answers|qa pairs|records?)")
_HEDGE = (r"(?:explicitly|specifically|directly|clearly|expressly|fully|further|precisely|exactly|actually|distinctly|"
          r"properly|adequately|sufficiently|really)")
_NOT = r"(?:\bnot|n't)"
_ADJ = (r"(?:specific|relevant|clear|direct|explicit|further|detailed|additional|official|such|precise|exact|"
        r"particular|mentioned|available|pertinent|concrete|definitive|enough|sufficient|any)")
_NOUN = (r"(?:information|info|mention|details?|data|context|guidance|reference|references|instructions?|"
         r"facts?|citation|indication|explanation|evidence|answer|description|record|statement|opinions?|"
         r"insight|clarification|discussion|specifics)")
_REPORT = (r"(?:mentioned|specified|stated|indicated|addressed|covered|discussed|described|defined|detailed|"
           r"explained|outlined|listed|provided|given|found|included|available|noted|presented|clarified|"
           r"referenced|answered)")

_EN = [
    r"\bi (?:do not|don't|dont|did not|didn't) know\b",
    r"\b(?:i am|i'm) (?:not sure|unsure|unable|not able|not certain)\b",
    r"\b(?:cannot|can't|can not|could not|couldn't|unable to|not able to) (?:answer|determine|find|say|tell|"
    r"provide|confirm|know|locate|identify|verify|ascertain|give)\b",
    r"\b(?:cannot|can't|could not|couldn't) be (?:found|determined|confirmed|answered|identified|verified)\b",
    r"\b(?:i|we) (?:did not|didn't|could not|couldn't|was unable to) (?:find|locate|see)\b",
    r"\b(?:i|we) (?:do not|don't) have (?:any |enough |sufficient |specific |relevant |the |access to |"
    r"further |more )*(?:information|context|details|data|knowledge|specifics)\b",
    # "does not say/specify ..." about anything: only reporting verbs
    rf"\b(?:does not|doesn't|do not|don't|did not|didn't)(?: {_HEDGE})? (?:mention|say|specify|state|indicate|"
    r"clarify|reference)\b",
    # "address/cover/describe/explain ..." also state facts ("MediShield does not cover cosmetic surgery"):
    # only with the source as subject, or hedged ("does not directly address")
    rf"\b{_SOURCE}(?: [\w'-]+){{0,3}} (?:does not|doesn't|do not|don't|did not|didn't|fails? to)(?: {_HEDGE})? "
    r"(?:provide|contain|include|give|address|cover|discuss|describe|define|detail|explain|outline|list|answer|"
    r"offer|have|contain|say|mention|specify|state|indicate|clarify|touch)\b",
    rf"\b(?:does not|doesn't|do not|don't|did not|didn't) {_HEDGE} (?:address|cover|discuss|describe|define|"
    r"detail|explain|outline|list|answer|provide|offer)\b",
    r"\b(?:does not|doesn't|do not|don't|did not|didn't) (?:provide|contain|include|give|offer) "
    r"(?:(?:any|enough|sufficient|specific|the|this|that|such|relevant|further|more|explicit|clear|detailed|"
    r"direct) )*(?:information|details|data|answer|mention|guidance|instructions?|specifics|context)\b",
    # "not mentioned": "not mentioned as eligible" is a claim about the content, not an abstention
    rf"{_NOT} (?:(?:explicitly|specifically|directly|clearly|expressly) )?(?:mentioned|specified|stated|"
    r"indicated)\b(?! as\b)",
    rf"{_NOT} {_HEDGE} (?:addressed|covered|discussed|described|defined|detailed|explained|outlined|listed|"
    r"provided|given|found|included|available|answered)\b(?! as\b)",
    rf"{_NOT} (?:addressed|covered|discussed|described|defined|detailed|explained|outlined|listed|provided|"
    rf"included|given|available|found|contained|answered)(?: or {_REPORT})? (?:in|within|by|from) (?:the |this |any )?"
    rf"(?:[\w-]+ ){{0,2}}{_SOURCE}",
    rf"\bnot (?:clear|evident|apparent|possible to (?:tell|say|determine)) (?:from|in|based on) (?:the |this )?"
    rf"(?:[\w-]+ ){{0,2}}{_SOURCE}",
    rf"\b{_NOUN}(?: [\w'()/-]+){{0,3}} (?:is|are|was|were) (?:not|un)(?: {_HEDGE})? ?(?:provided|included|given|"
    r"available|found|mentioned|specified|stated|present)\b",
    rf"\b(?:no|not enough|insufficient|limited) (?:{_ADJ} )*{_NOUN}\b",
    rf"\bno (?:{_ADJ} )+[\w'()/-]+(?: [\w'()/-]+){{0,12}} (?:is|are|was|were|has been|have been) {_REPORT}\b",
    rf"\bno (?:{_ADJ} )*(?:{_SOURCE}|citation|fact|answer|question) (?:\w+ )?(?:addresses|mentions|explains|"
    r"describes|covers|indicates|specifies|states|provides|discusses|answers|exists)\b",
    rf"\bthere (?:is|are|was|were|isn't|aren't) (?:no|not any|not enough|nothing) (?:{_ADJ} )*(?:{_NOUN}|"
    r"\w+ (?:given|provided|mentioned|stated))\b",
    rf"\bthere (?:is|are|was|were)(?: not|n't) (?:a |an |any )?(?:{_ADJ} )*{_NOUN}\b",
    r"\bnothing (?:in|within) the (?:[\w-]+ )?(?:context|text|passage|document|information|facts)\b",
    rf"\b(?:beyond|outside) (?:the scope of )?(?:the |this |my )?(?:[\w-]+ )?(?:{_SOURCE}|knowledge|scope)\b",
    rf"\b{_SOURCE}(?: [\w-]+){{0,2}} (?:is|are) silent\b",
    r"\b(?:information|details|data|specifics)(?: [\w-]+){0,4} (?:is|are) (?:unavailable|unspecified|"
    r"unclear|lacking|missing)\b",
    r"\bno citation\b",
    r"\bno (?:relevant |applicable )?(?:fact|facts) (?:number )?(?:to cite|applies|apply)\b",
    # nobody can know (unknowable questions: the future, private thoughts, open problems)
    r"\b(?:no one|no-one|nobody|no person|no human) (?:really |truly |actually )?(?:knows?|can (?:know|say|tell|"
    r"predict|answer|determine)|is able to (?:know|say|predict))\b",
    r"\b(?:is|are|remains?|is still|are still) (?:currently )?(?:unknown|not known|unknowable|uncertain|a mystery|"
    r"an open question|unanswerable|unclear)\b",
    r"\b(?:impossible|not possible) to (?:know|say|predict|tell|determine|answer|verify)\b",
    r"\b(?:cannot|can't|can not) be (?:known|predicted|answered definitively)\b",
    r"\bthere (?:is|are)(?: currently| still)? no (?:way to (?:know|tell|predict)|(?:scientific |general |clear )?"
    r"consensus|(?:single|definitive|definite|known|clear|correct|right|objective) answers?)\b",
    # a false premise: the question assumes something untrue
    r"\b(?:false|incorrect|mistaken|wrong|flawed|faulty|invalid|erroneous) (?:premise|assumption|presupposition)s?\b",
    r"\b(?:premise|assumption|presupposition)s?(?: of (?:the|this|your) question)? (?:is|are|seems to be|appears to "
    r"be) (?:false|incorrect|mistaken|wrong|flawed|untrue|not (?:true|correct|accurate))\b",
    r"\b(?:that|this|it|the statement|the claim|the question|your question)(?:'s| is| was) (?:not (?:true|correct|"
    r"accurate|right)|incorrect|untrue|false|a (?:common )?misconception|a myth|mistaken)\b",
    r"\bbased on (?:a|an) (?:common )?(?:misconception|misunderstanding|myth|false|incorrect|mistaken)\b",
    r"\bthere (?:is|are|was|were) no such\b",
]
_ZH_SOURCE = r"(?:上下文|文中|文本|原文|材料|资料|段落|文章|信息|以上|上述|所给|提供的|知识库|事实|内容|文档|背景)"
_ZH_REPORT = r"(?:提到|提及|说明|涉及|给出|列出|记载|规定|指出|介绍|描述|解释|回答|包括|谈到|载明|写明|交代)"
_ZH = [
    r"不知道", r"不清楚", r"不确定", r"不太清楚",
    r"(?:无法|不能|没法|难以|无从)(?:回答|确定|判断|得知|获知|提供|找到|给出|知道|从|确认|得出|查到|核实|判定|解答)",
    rf"(?:没有|并没有|没|未|并未|均未|尚未|未曾)(?:明确|具体|直接|详细|清楚)?(?:地)?{_ZH_REPORT}",
    # 提供/包含 also state facts (该费用未包含增值税): only about the source, or about information
    rf"{_ZH_SOURCE}[^，。！？,.]{{0,8}}?(?:没有|并没有|没|未|并未|均未|不)(?:明确|具体|直接)?(?:提供|包含|涵盖|含有)",
    r"(?:没有|并没有|未|并未|均未)(?:提供|包含)(?:任何)?(?:关于[^，。！？,.]{0,20}?的)?(?:相关|具体|足够|更多|明确)?"
    r"(?:的)?(?:信息|资料|数据|内容|说明|答案)",
    r"(?:没有|无|缺乏|缺少|找不到)(?:任何)?(?:相关|具体|足够|更多|明确|直接)?(?:的)?(?:信息|资料|数据|内容|说明|依据|答案|记载)",
    r"(?:没有|未能|未)找到", r"找不到", r"查不到",
    r"信息不足", r"无从", r"无相关", r"不得而知", r"无可奉告",
    rf"(?:超出|超过|不在)[^，。！？,.]{{0,10}}?(?:范围|{_ZH_SOURCE}(?:中|里|之中)?)",
    r"没有引用", r"无引用", r"不引用",
    # 没人知道 (unknowable questions)
    r"(?:没有人|没人|无人|谁也|谁都|任何人都)(?:能|可以|无法|不能|没法|不可能)?(?:知道|确定|预测|回答|说得清|说清)",
    r"(?:尚|仍|至今|目前|还|仍然)(?:是|属)?(?:未知|个谜|一个谜|无定论|没有定论|无法确定|不清楚|无答案|没有答案|没有共识)",
    r"(?:没有|并无|没有一个)(?:定论|标准答案|确定的答案|确切的答案|唯一的答案|统一的答案|共识)",
    r"不可知", r"无法预知", r"无法预测",
    # 前提错误 (a false premise)
    r"前提(?:本身)?(?:是)?(?:错误|有误|不成立|不正确|不对|错了|是错的|并不成立|不符合事实)",
    r"(?:错误|不正确|虚假|不成立|有误)的(?:前提|假设)",
    r"(?:这个|这种|该|此|您的|你的)?(?:说法|假设|问题|说法本身)(?:是|本身)?(?:不正确|错误|不成立|有误|不对|不准确|不符合事实|"
    r"站不住脚)",
    r"(?:根本|并|实际上)不存在",
]
_PATTERN = re.compile("|".join(f"(?:{p})" for p in _EN + _ZH), re.IGNORECASE)

# A bare yes/no in front of the lead sentence ("No, the context does not say ...") does not make it an answer.
_LEAD_YESNO = re.compile(r"^\s*(?:no|yes|不|是的|是|否|对)\s*[,，:：;；.。!！-]\s*", re.IGNORECASE)
# A first sentence that claims nothing: hedged ("appears to", "may") or only framing the question.
_HEDGED = re.compile(r"\b(?:appears? to|seems? to|might|possibly|presumably|unclear)\b|"
                     r"(?:可能|似乎|好像|或许|也许|大概)", re.IGNORECASE)
_CLAUSE_START = re.compile(r"[,;:，；：]")
_REASON = re.compile(r"\b(?:as|because|since)\s+(?:the |this |that |such |provided |given )*$|(?:因为|由于)$",
                     re.IGNORECASE)
_CONDITION = re.compile(r"\b(?:if|when|unless|whether|in case)\b|(?:如果|假如|若|倘若|一旦)", re.IGNORECASE)
# "The context does not say. However, you can usually ...": an answer from elsewhere after the abstention.
_PIVOT = re.compile(r"\s*(?:however|but|that said|nevertheless|nonetheless|typically|usually|generally|in general)\b|"
                    r"\s*(?:不过|但是|但|然而|通常|一般来说|一般)", re.IGNORECASE)
_ABOUT_SOURCE = re.compile(rf"\b(?:{_SOURCE}|mentions?|mentioned|cited|citation|states?|stated|according)\b|"
                           rf"{_ZH_SOURCE}|提到|提及", re.IGNORECASE)


@dataclass(frozen=True)
class AbstentionVerdict:
    abstained: bool
    phrase: str | None
    """The phrase that decided an abstention (None for an answer, or for an empty response)."""
    reason: str


def _normalise(text: str) -> str:
    return text.replace("’", "'").replace("‘", "'")


def _statement(sentence: str) -> re.Match[str] | None:
    """The first statement of missing knowledge in ``sentence`` that is not inside a condition ("if transport
    details are not available, enter NSI" describes the user's case) nor the reason given for a claim ("No,
    you must submit the form, as the context does not say a letter can replace it")."""
    for match in _PATTERN.finditer(sentence):
        before = sentence[:match.start()]
        clause = _CLAUSE_START.split(before)[-1]
        if _CONDITION.search(" ".join(clause.split()[-4:])):  # "... if you do not have the information"
            continue
        if _REASON.search(before) and len(before.split()) > 4:  # "No, you must submit V39A, as the context ..."
            continue
        return match
    return None


def judge_abstention(text: str) -> AbstentionVerdict:
    """Decide whether ``text`` abstains, with the deciding phrase and a short reason."""
    body = _normalise(text)
    if not body.strip():
        return AbstentionVerdict(True, None, "empty response")
    parts = sentences(body) or [body]
    lead = _LEAD_YESNO.sub("", parts[0], count=1)
    match = _statement(lead)
    if match:
        answer = next((p for p in parts[1:] if _PIVOT.match(p) and not _ABOUT_SOURCE.search(p)), None)
        if answer is not None:
            return AbstentionVerdict(False, None, f"'{match.group(0)}', then answered anyway: '{answer[:40]}'")
        return AbstentionVerdict(True, match.group(0), "the lead sentence says the knowledge is missing")
    later = next((m for m in (_statement(p) for p in parts[1:]) if m), None)
    if later is None:
        return AbstentionVerdict(False, None, "no statement of missing knowledge")
    if _HEDGED.search(lead):
        return AbstentionVerdict(True, later.group(0), "a hedged lead sentence, then missing knowledge")
    return AbstentionVerdict(False, None, f"answered first; '{later.group(0)}' is a caveat")


def abstention_phrase(text: str) -> str | None:
    """The phrase that makes ``text`` an abstention, or None when it answers (or is empty)."""
    return judge_abstention(text).phrase


def is_abstention(text: str) -> bool:
    """True when the response declines to answer. An empty response counts as an abstention."""
    return judge_abstention(text).abstained
