"""Claims, numbers, negation and polarity cues for Chinese and English (used by faithfulness checks).

- :func:`split_claims`: a summary split into short, checkable claims (sentences, then contrast clauses);
- :func:`numbers`: the numbers a text states (digits, English number words, Chinese numerals);
- :func:`has_negation`: whether a clause is negated (English cues; Chinese 不/没/未/无..., minus the many
  words that only look negative, such as 不错 "pretty good" and 不过 "but");
- :func:`polarity`: +1 / -1 / 0 from a small evaluative lexicon, flipped by negation;
- :func:`proper_names`: capitalised English words not at a sentence start, and Latin/digit tokens in Chinese.
"""

from __future__ import annotations

import re

from knowgap.text.lang import detect_lang
from knowgap.text.segment import normalize, sentences

_CONTRAST_EN = re.compile(r"(?:,\s*|\s+)(?=(?:but|however|although|though|whereas|yet|while)\b)", re.I)
_CONTRAST_ZH = re.compile(r"[，,；;]\s*(?=但是|但|不过|然而|可是|只是|却|而且|并且|同时)|[；;]")
_ZH_COMMA = re.compile(r"[，,]")


def _merge_short(parts: list[str], min_len: int, lang: str) -> list[str]:
    out: list[str] = []
    for part in (p.strip(" ,，;；") for p in parts):
        if not part:
            continue
        size = len(part.split()) if lang == "en" else len(re.sub(r"\W", "", part))
        if out and size < min_len:
            out[-1] = f"{out[-1]}{'，' if lang == 'zh' else ', '}{part}"
        else:
            out.append(part)
    return out


def split_claims(text: str) -> list[str]:
    """``text`` as a list of claims: its sentences, each further split at contrast words (but, 但是...);
    Chinese sentences are also split at commas when both sides are long enough to state something."""
    claims: list[str] = []
    for sentence in sentences(text):
        lang = detect_lang(sentence)
        if lang == "en":
            claims += _merge_short(_CONTRAST_EN.split(sentence), 3, lang)
        else:
            parts: list[str] = []
            for clause in _CONTRAST_ZH.split(sentence):
                parts += _ZH_COMMA.split(clause)
            claims += _merge_short(parts, 5, lang)
    return claims


_EN_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
    "half": 0.5, "dozen": 12, "first": 1, "second": 2, "third": 3, "once": 1, "twice": 2,
}
_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_NUM = re.compile(r"[零一二两三四五六七八九十百千]+(?=[个位天周年月日次件块元分小星倍层名台张本斤公米晚岁%])")
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")
_EN_WORD = re.compile(r"[a-z]+")


def _zh_value(run: str) -> float | None:
    total, current = 0, 0
    for ch in run:
        if ch in _ZH_DIGITS:
            current = _ZH_DIGITS[ch]
        elif ch in "十百千":
            unit = {"十": 10, "百": 100, "千": 1000}[ch]
            total += (current or 1) * unit
            current = 0
    value = total + current
    return float(value) if value else None


def numbers(text: str) -> set[float]:
    """The numbers stated in ``text`` as floats (``2 weeks``, ``two weeks`` and ``两周`` all give 2.0).

    "one" is left out (it is mostly a pronoun: "the one I bought")."""
    norm = normalize(text)
    found: set[float] = set()
    for match in _DIGITS.finditer(norm):
        try:
            found.add(float(match.group(0).replace(",", "")))
        except ValueError:
            continue
    for word in _EN_WORD.findall(norm):
        if word in _EN_NUMBER_WORDS and word not in ("one", "first", "second", "once"):
            found.add(float(_EN_NUMBER_WORDS[word]))
    for match in _ZH_NUM.finditer(norm):
        value = _zh_value(match.group(0))
        if value is not None:
            found.add(value)
    return found


_NEG_EN = re.compile(r"\b(?:not|no|never|none|nothing|nobody|neither|nor|without|hardly|barely|cannot|"
                     r"\w+n't|dont|didnt|doesnt|isnt|wasnt|wont|cant|couldnt|lack(?:s|ed|ing)?|fail(?:s|ed)?)\b")
_NEG_ZH = re.compile(r"不|没|未|无|非|别|莫|毫无|从不|并非")
_ZH_FALSE_NEG = re.compile(r"不错|不过|不仅|不少|不断|不同|不管|差不多|不得不|无论|无比|并不亚于|非常|没想到|不然|"
                           r"不久|未来|无线|无糖|不但")


def has_negation(text: str) -> bool:
    """Whether ``text`` contains a negation cue (English or Chinese)."""
    norm = normalize(text)
    if _NEG_EN.search(norm):
        return True
    return bool(_NEG_ZH.search(_ZH_FALSE_NEG.sub("", norm)))


_POS_EN = frozenset("""good great excellent amazing awesome love loved loves lovely nice perfect best delicious tasty
fantastic wonderful happy pleased satisfied friendly helpful clean comfortable fresh fast quick recommend
recommended impressive enjoy enjoyed beautiful attentive reasonable cheap affordable superb fine decent
worth""".split())
_NEG_EN_WORDS = frozenset("""bad terrible awful horrible poor worst hate hated hates disappointing disappointed
rude dirty slow cold bland overpriced expensive broken unhappy unfriendly noisy mediocre stale annoying
problem problems issue issues complaint lousy inedible greasy tasteless worse unacceptable""".split())
_POS_ZH = ("好吃", "不错", "满意", "喜欢", "推荐", "很好", "非常好", "干净", "舒适", "方便", "热情", "好评", "划算",
           "值得", "快", "新鲜", "漂亮", "优秀", "棒", "周到", "实惠", "好")
_NEG_ZH_WORDS = ("难吃", "差", "失望", "糟糕", "脏", "慢", "贵", "吵", "坏", "问题", "差评", "冷淡", "退货", "后悔",
                 "垃圾", "不满", "投诉", "恶劣", "破损", "烂")


def polarity(text: str) -> int:
    """+1 (evaluates positively), -1 (negatively) or 0, from a small zh + en lexicon; a negation flips it."""
    norm = normalize(text)
    score = 0
    for word in _EN_WORD.findall(norm):
        score += (word in _POS_EN) - (word in _NEG_EN_WORDS)
    cleaned = _ZH_FALSE_NEG.sub(lambda m: "好" if m.group(0) == "不错" else " ", norm)
    for word in _NEG_ZH_WORDS:
        score -= cleaned.count(word)
    for word in _POS_ZH:
        if word in cleaned:
            score += 1
            cleaned = cleaned.replace(word, " ")
    sign = (score > 0) - (score < 0)
    return -sign if has_negation(text) else sign


_CAPITAL = re.compile(r"\b[A-Z][a-zA-Z0-9]+(?:\s+[A-Z0-9][a-zA-Z0-9]+)*")
_LATIN_IN_ZH = re.compile(r"[A-Za-z][A-Za-z0-9\-]+")
_NOT_NAMES = frozenset({"I", "The", "A", "An", "It", "They", "We", "He", "She", "This", "That", "Overall", "However",
                        "But", "And", "Customer", "Reviewer", "User"})


def proper_names(text: str) -> set[str]:
    """Lower-cased names a text mentions: capitalised English words not opening a sentence; in Chinese text,
    Latin-letter tokens (brands, models)."""
    if detect_lang(text) == "zh":
        return {m.group(0).lower() for m in _LATIN_IN_ZH.finditer(text)}
    names: set[str] = set()
    for sentence in sentences(text):
        for match in _CAPITAL.finditer(sentence):
            words = match.group(0).split()
            if match.start() == 0:  # a capital at the sentence start says nothing
                words = words[1:]
            names |= {w.lower() for w in words if w not in _NOT_NAMES}
    return names
