"""Deterministic clarification signals for a response (Chinese and English), word level, no model.

- :func:`clarifying_units`: the sentences of a response that ask the user something (a question addressed to
  the user, or a request such as "请提供..." / "please tell me..."), not rhetorical restatements of the query;
- :func:`conditional_markers`: conditional statements ("如果", "取决于", "在…情况下", the legal "……的，" clause,
  "if", "unless", "depends");
- :func:`dangerous_assertions`: overconfident assertions ("一定", "肯定", "百分之百", "100%", "definitely"...),
  with negation ("不一定", "not necessarily") and non-assertive senses ("一定程度", "一定的") excluded;
- :func:`flags_insufficiency`: the response says the facts given are not enough.

Everything works on :func:`knowgap.text.tokens` (jieba words for Chinese), so "一定" inside "不一定" or
"certain" inside "uncertain" never counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from knowgap.text import content_tokens, normalize, sentences, tokens

CLARIFICATION_VERSION = "clarification-signals-2"
"""Judge ``clarification`` (clarifying units, conditions, insufficiency flags); change with the word lists (2: an
English question in a numbered or bulleted list is read by its first word, not by its list marker, and "should",
"shall", "may", "might", "whom", "whose" open a question)."""
DANGER_VERSION = "dangerous-assertion-1"
"""Judge ``dangerous-assertion`` (overconfident assertions); change with its word lists."""

_LIST_ITEM = re.compile(r"^\s*(?:\d+[.、)）]|[-*•·]|[（(]\d+[)）]|[一二三四五六七八九十]+[、.])\s*")

# --- questions and requests --------------------------------------------------------------------------------
_SECOND_PERSON = frozenset({"您", "你", "你们", "您们", "you", "your", "yours"})
_ZH_INTERROGATIVE = frozenset({"吗", "呢", "是否", "能否", "有没有", "是不是", "多少", "多久", "什么", "哪些", "哪里",
                               "哪个", "何时", "几", "几年", "几个", "怎样", "如何", "为什么", "谁", "多长", "多大",
                               "有无"})
_ZH_REQUEST_VERBS = frozenset({"提供", "告知", "告诉", "说明", "补充", "确认", "描述", "介绍", "明确", "透露", "说"})
_ZH_NEED = frozenset({"需要", "需", "想", "希望"})
_ZH_KNOW = frozenset({"了解", "知道", "确认", "核实", "明确"})
_EN_REQUEST = [("please", "provide"), ("please", "tell"), ("please", "let"), ("please", "share"),
               ("please", "clarify"), ("please", "confirm"), ("please", "describe"), ("please", "specify"),
               ("let", "me", "know"), ("i", "need", "to", "know"), ("i", "would", "need", "to", "know"),
               ("could", "you"), ("can", "you"), ("would", "you"), ("need", "more", "information")]
_EN_AUX_START = frozenset({"do", "did", "does", "are", "were", "was", "is", "have", "has", "had", "could", "can",
                           "would", "will", "should", "shall", "may", "might", "what", "when", "where", "which", "who",
                           "whom", "whose", "how", "why", "whether"})


_MARKER_ONLY = re.compile(r"^\s*(?:\d+[.、)）]?|[-*•·]|[（(]\d+[)）])\s*$")


def _sentences(text: str) -> list[str]:
    """Sentences, with line breaks as boundaries too (list items often end without punctuation); a bare list
    marker ("1.") is joined to the sentence after it."""
    out: list[str] = []
    pending = ""
    for line in text.splitlines():
        for s in sentences(line):
            if not s.strip():
                continue
            if _MARKER_ONLY.match(s):
                pending = f"{pending}{s.strip()} "
                continue
            out.append(pending + s.strip())
            pending = ""
    if pending.strip():
        out.append(pending.strip())
    return out


def _list_continues(sentence: str) -> bool:
    """A list item after a header: marked ("1. ...", "- ..."), or short and not a finished sentence."""
    stripped = sentence.strip()
    return bool(_LIST_ITEM.match(stripped)) or (len(stripped) <= 25 and not stripped.endswith(("。", ".", "！", "!")))


def _contains_seq(words: list[str], seq: tuple[str, ...]) -> bool:
    n = len(seq)
    return any(tuple(words[i:i + n]) == seq for i in range(len(words) - n + 1))


def _is_request(words: list[str]) -> bool:
    for i, w in enumerate(words):
        nxt = words[i + 1:i + 4]
        if w == "请" and any(v in _ZH_REQUEST_VERBS for v in nxt):
            return True
        if w == "请问":
            return True
        if w in _ZH_NEED and any(v in _ZH_KNOW for v in nxt):
            return True
    return any(_contains_seq(words, seq) for seq in _EN_REQUEST)


def _restates(words: list[str], query_words: set[str]) -> bool:
    content = [w for w in words if w not in _ZH_INTERROGATIVE and w not in _SECOND_PERSON]
    if not content or not query_words:
        return False
    return sum(w in query_words for w in content) / len(content) >= 0.75


def clarifying_units(response: str, query: str = "") -> list[str]:
    """Sentences that ask the user for information (questions addressed to the user, or requests)."""
    query_words = set(content_tokens(query))
    units = []
    for sentence in _sentences(response):
        words = tokens(sentence)
        if not words:
            continue
        stripped = sentence.rstrip().rstrip("\"'”’)）]】")
        asks = stripped.endswith(("?", "？"))
        if not asks and _is_request(words):
            units.append(sentence)
            continue
        if asks:
            # a list marker ("1.", "-") is not the question's first word
            first = next(iter(tokens(_LIST_ITEM.sub("", sentence, count=1))), "")
            addressed = (any(w in _SECOND_PERSON for w in words) or any(w in _ZH_INTERROGATIVE for w in words)
                         or first in _EN_AUX_START)
            if addressed and not _restates(content_tokens(sentence), query_words):
                units.append(sentence)
    return units


# --- conditional statements --------------------------------------------------------------------------------
_ZH_CONDITIONAL = frozenset({"如果", "假如", "假设", "倘若", "若", "如若", "要是", "一旦", "取决于", "取决", "除非",
                             "只要", "视", "前提", "否则", "若是", "假若", "万一"})
_EN_CONDITIONAL = frozenset({"if", "unless", "depends", "depending", "assuming", "otherwise", "provided"})


_DE_CLAUSE = re.compile(r"(?:^|(?<=[，,。；;！？!?：:\n]))([^，,。；;！？!?：:\n]+)的[，,]")
"""A whole clause ending in 的 before a comma. It starts only where a clause starts: without that anchor ``re``
retried a clause that does not end in 的 from each of its characters (quadratic: a 20 KB reply without punctuation
took seconds, 100 KB ten minutes); the matches are the same, since one can only start where a clause does."""


def conditional_markers(response: str) -> list[str]:
    """Each conditional marker in order (one per occurrence): 如果/取决于/在…情况下/视…而定, if/unless/depends..."""
    words = tokens(response)
    found = []
    for i, w in enumerate(words):
        if w in _ZH_CONDITIONAL or w in _EN_CONDITIONAL:
            if w == "provided" and (i + 1 >= len(words) or words[i + 1] != "that"):
                continue
            found.append(w)
        elif w == "情况" and i + 1 < len(words) and words[i + 1] == "下":
            found.append("情况下")
        elif w == "要看" or (w == "in" and words[i + 1:i + 2] == ["case"]):
            found.append(w if w == "要看" else "in case")
        elif w == "关键" and words[i + 1:i + 2] == ["在于"]:
            found.append("关键在于")
    # Chinese legal prose states conditions as "……的，" clauses ("未签订书面劳动合同的，应当支付二倍工资")
    # ... but "是……的，" asserts ("解除是违法的，"), it does not condition
    for clause in _DE_CLAUSE.findall(normalize(response)):
        words = tokens(clause)
        if len(words) >= 3 and "是" not in words:
            found.append("……的，")
    return found


# --- dangerous assertions ----------------------------------------------------------------------------------
_ZH_DANGER = frozenset({"一定", "肯定", "绝对", "毫无疑问", "必然", "百分之百", "稳赢", "必胜", "铁定", "无疑",
                        "板上钉钉", "确定无疑", "必定", "稳操胜券"})
_ZH_NEGATORS = frozenset({"不", "未必", "并不", "不是", "没", "没有", "无法", "不能", "难以"})
_ZH_NON_ASSERTIVE_NEXT = frozenset({"程度", "的", "范围", "数量", "期限", "比例", "金额", "时间", "条件", "数额",
                                    "影响", "风险", "难度", "作用"})
_EN_DANGER = frozenset({"definitely", "certainly", "absolutely", "undoubtedly", "guaranteed", "surely",
                        "unquestionably", "100"})
_EN_DANGER_SEQ = [("no", "doubt"), ("without", "a", "doubt"), ("without", "doubt"), ("for", "sure")]
_EN_NEGATORS = frozenset({"not", "never", "no", "cannot", "can't", "don't", "doesn't", "isn't", "won't"})
# "100%" asserts certainty, but not as the end of a range ("50%以上100%以下", "50% to 100%")
_PERCENT_100 = re.compile(r"(?<![\d.])(?<!至)(?<!到)(?<!~)(?<!-)(?<!to )100\s*%(?!\s*(?:以下|以内|之间))")


def dangerous_assertions(response: str) -> list[str]:
    """Overconfident words and phrases, one entry per occurrence (negated and non-assertive uses excluded)."""
    found: list[str] = []
    for sentence in _sentences(response):
        words = tokens(sentence)
        for i, w in enumerate(words):
            prev = words[i - 1] if i else ""
            nxt = words[i + 1] if i + 1 < len(words) else ""
            if w in _ZH_DANGER:
                if prev in _ZH_NEGATORS or (w == "一定" and nxt in _ZH_NON_ASSERTIVE_NEXT):
                    continue
                found.append(w)
            elif w in _EN_DANGER:
                if w == "100":
                    continue  # counted below, only as "100%"
                if prev in _EN_NEGATORS:
                    continue
                if w == "certainly" and i == 0 and len(words) <= 3:
                    continue  # "Certainly!" as a reply opener asserts nothing
                found.append(w)
        for seq in _EN_DANGER_SEQ:
            n = len(seq)
            for i in range(len(words) - n + 1):
                if tuple(words[i:i + n]) == seq:
                    found.append(" ".join(seq))
        found.extend("100%" for _ in _PERCENT_100.finditer(normalize(sentence)))
    return found


# --- insufficiency flag ------------------------------------------------------------------------------------
_ZH_FLAG_SEQS = [("信息", "不足"), ("信息", "不够"), ("无法", "判断"), ("无法", "确定"), ("难以", "判断"),
                 ("难以", "确定"), ("具体", "情况"), ("更多", "信息"), ("进一步", "了解"), ("进一步", "信息"),
                 ("取决于",), ("视", "情况"), ("需要", "了解"), ("需要", "知道"), ("需要", "确认"), ("需要", "更多"),
                 ("补充",), ("不能", "一概而论"), ("一概而论",)]
_EN_FLAG_SEQS = [("more", "information"), ("more", "details"), ("depends", "on"), ("it", "depends"),
                 ("cannot", "say"), ("can't", "say"), ("hard", "to", "say"), ("not", "enough", "information"),
                 ("need", "to", "know"), ("would", "need"), ("without", "knowing"), ("further", "details"),
                 ("additional", "information"), ("unclear",)]


def flags_insufficiency(response: str) -> bool:
    """True when the response says the facts given are not enough to conclude."""
    words = tokens(response)
    return any(_contains_seq(words, seq) for seq in _ZH_FLAG_SEQS + _EN_FLAG_SEQS)


# --- all signals together ----------------------------------------------------------------------------------
@dataclass
class ClarificationSignals:
    clarifying_questions: list[str] = field(default_factory=list)
    conditionals: list[str] = field(default_factory=list)
    dangerous: list[str] = field(default_factory=list)
    flags_insufficiency: bool = False
    length_chars: int = 0
    length_tokens: int = 0

    @property
    def asked(self) -> bool:
        return bool(self.clarifying_questions)

    @property
    def flagged(self) -> bool:
        """Asked, said the facts are not enough, or answered only conditionally."""
        return self.asked or self.flags_insufficiency or bool(self.conditionals)


def clarification_signals(response: str, query: str = "") -> ClarificationSignals:
    return ClarificationSignals(
        clarifying_questions=clarifying_units(response, query),
        conditionals=conditional_markers(response),
        dangerous=dangerous_assertions(response),
        flags_insufficiency=flags_insufficiency(response),
        length_chars=sum(1 for ch in response if not ch.isspace()),
        length_tokens=len(tokens(response)),
    )


def gap_sentences(response: str, query: str = "") -> list[str]:
    """Sentences that treat a fact as unknown: clarifying questions and requests, conditional statements,
    statements that the facts are not enough, and the list items that follow such a statement."""
    asked = set(clarifying_units(response, query))
    out: list[str] = []
    listing = False
    for sentence in _sentences(response):
        if sentence in asked or conditional_markers(sentence) or flags_insufficiency(sentence):
            out.append(sentence)
            listing = True
        elif listing and _list_continues(sentence):
            out.append(sentence)
        else:
            listing = False
    return out


_HEADER_WORDS = frozenset({"请问", "请", "以下", "如下", "信息", "问题", "几个", "一些", "下列", "please", "following",
                           "questions", "question", "information", "details"})


def _has_substance(sentence: str) -> bool:
    """More than a list header: some word that is not a request word, a stopword or a number."""
    return any(not w.isdigit() and w not in _HEADER_WORDS for w in content_tokens(sentence))


def question_items(response: str, query: str = "") -> list[str]:
    """The individual things the response asks for: each clarifying question, and for a request that
    introduces a list ("请提供以下信息：" / "Please tell me:"), the list items instead of the header."""
    asked = set(clarifying_units(response, query))
    out: list[str] = []
    listing = False
    for sentence in _sentences(response):
        stripped = sentence.strip()
        if sentence in asked:
            if stripped.endswith((":", "：")) or not _has_substance(sentence):
                listing = True
                continue
            out.append(_LIST_ITEM.sub("", stripped, count=1).strip())
            listing = listing and bool(_LIST_ITEM.match(sentence))
        elif listing and _list_continues(sentence) and not conditional_markers(sentence):
            out.append(_LIST_ITEM.sub("", stripped, count=1).strip())
        else:
            listing = False
    return out


def gap_items(response: str, query: str = "") -> list[str]:
    """The individual missing facts the response names or asks about: its question items, plus its other gap
    sentences (conditional statements, statements that a fact is unknown, the list items after them) that say
    more than a header ("请提供以下信息：", "It depends on the facts." keeps its words and counts)."""
    return merge_gap_items(question_items(response, query), gap_sentences(response, query),
                           clarifying_units(response, query))


def merge_gap_items(questions: list[str], gaps: list[str], asked: list[str]) -> list[str]:
    """:func:`gap_items` from a response's already computed question items, gap sentences and clarifying
    units (so a scorer that has them does not segment the response again)."""
    items = list(questions)
    asked_set = set(asked)
    seen = set(items)
    for sentence in gaps:
        if sentence in asked_set:
            continue
        item = _LIST_ITEM.sub("", sentence.strip(), count=1).strip()
        if item and item not in seen and not item.endswith((":", "：")) and _has_substance(item):
            items.append(item)
            seen.add(item)
    return items
