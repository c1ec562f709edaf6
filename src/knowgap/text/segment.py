"""Normalisation, tokens, stopwords and sentences for Chinese and English.

Chinese is segmented into words with jieba (loaded lazily, once per process, silently); English and other
Latin text is split into words by a regex. Both are NFKC-normalised and lower-cased first, so full-width
digits and letters match their half-width forms.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from knowgap.text.lang import _CJK

_WORD = re.compile(r"[a-z0-9]+(?:['.\-][a-z0-9]+)*|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_jieba_lock = threading.Lock()
_jieba: Any = None

EN_STOPWORDS = frozenset("""
a about above after again against all am an and any are aren't as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have having
he her here hers herself him himself his how i if in into is it its itself just let me more most my myself
no nor not of off on once only or other our ours ourselves out over own same she should so some such than
that the their theirs them themselves then there these they this those through to too under until up very
was we were what when where which while who whom why will with would you your yours yourself yourselves
""".split())

ZH_STOPWORDS = frozenset("""
的 了 和 是 在 就 都 而 及 与 着 或 一个 没有 我们 你们 他们 她们 它们 这 那 这个 那个 之 于 以 把 被 让 给
对 从 到 向 也 还 又 并 很 更 最 吗 呢 吧 啊 呀 哦 嗯 么 什么 怎么 如何 为什么 哪 哪些 哪里 谁 多少 能 会 可以
要 应该 我 你 他 她 它 自己 其 该 此 等 等等 如果 但是 但 因为 所以 然后 而且 虽然 可是 只是 一些 一下 有 个
""".split())


def _segmenter() -> Any:
    global _jieba
    if _jieba is None:
        with _jieba_lock:
            if _jieba is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba = jieba
    return _jieba


def normalize(text: str) -> str:
    """NFKC, lower case, whitespace collapsed to one space, curly quotes made straight."""
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'").replace("‘", "'")
    return " ".join(text.split())


@lru_cache(maxsize=65536)
def _cut_cjk(run: str) -> tuple[str, ...]:
    return tuple(w for w in _segmenter().lcut(run, HMM=True) if w.strip())


def tokens(text: str) -> list[str]:
    """Word tokens of ``text`` after :func:`normalize`: jieba words for Chinese runs, regex words otherwise.

    Punctuation is dropped; numbers are kept (``3.5``, ``2024``) because they carry facts.
    """
    out: list[str] = []
    for match in _WORD.finditer(normalize(text)):
        word = match.group(0)
        if _CJK.match(word):
            out.extend(_cut_cjk(word))
        else:
            out.append(word)
    return out


def content_tokens(text: str, extra_stopwords: Iterable[str] = ()) -> list[str]:
    """:func:`tokens` without Chinese and English stopwords (and without ``extra_stopwords``)."""
    stop = EN_STOPWORDS | ZH_STOPWORDS | frozenset(extra_stopwords)
    return [t for t in tokens(text) if t not in stop]


_SENTENCE_END = re.compile(
    r"(?<=[。！？!?；;])[\"'”’」』）)]*\s*"        # Chinese and exclamation/question/semicolon ends
    r"|(?<=[.])[\"'”’)]*\s+(?=[A-Z0-9\"“(\u4e00-\u9fff])"  # an English full stop followed by a new sentence
    r"|\n\s*\n+|\n(?=\s*(?:[-*•·]|\d+[.)、])\s)"  # blank lines and list items
)
_ABBREV = re.compile(r"\b(?:e\.g|i\.e|etc|mr|mrs|ms|dr|prof|no|vs|st|inc|ltd|co|jr|sr|fig|approx)\.$", re.I)


def sentences(text: str) -> list[str]:
    """Split ``text`` into sentences (Chinese and English), keeping each sentence's own punctuation.

    Abbreviations such as "e.g." and "Dr." and decimal numbers do not end a sentence.
    """
    pieces: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        piece = text[start:match.start()]
        if _ABBREV.search(piece.rstrip()):
            continue
        if piece.strip():
            pieces.append(piece.strip())
        start = match.end()
    tail = text[start:].strip()
    if tail:
        pieces.append(tail)
    return pieces


def quoted_start(text: str, limit: int = 60) -> str:
    """The start of ``text`` as a quoted one-liner (whitespace collapsed, cut with "…" at ``limit`` characters):
    how a verdict's part names the answer it is about."""
    one = " ".join(str(text).split())
    return repr(one if len(one) <= limit else one[:limit - 1] + "…")
