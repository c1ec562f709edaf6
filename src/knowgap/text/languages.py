"""Which language a short text (a summary, a review) is written in, beyond ``zh`` / ``en``: scripts first
(Chinese, Japanese kana, Korean, Cyrillic, Arabic), then, for Latin-script text, the language whose common
function words it uses most (English, German, French, Spanish, Italian, Portuguese, Dutch).

:func:`identify_language` answers ``None`` when a text is too short or too mixed to tell: a takeover check must
not call a two-word summary "German". Mixed text is decided by a clear majority (60%) of its words (a Chinese character
counts as about 0.6 of a word): an English sentence quoting 服务很好 stays English, a Chinese one naming
``overall_sentiment`` stays Chinese.
"""

from __future__ import annotations

import functools
import re

LANGUAGE_NAMES = {"en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian",
                  "pt": "Portuguese", "nl": "Dutch", "zh": "Chinese", "ja": "Japanese", "ko": "Korean",
                  "ru": "Russian", "ar": "Arabic"}
"""Every code :func:`identify_language` can answer, with its English name."""

_FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset("the a an and or but of to in on at for with is are was were be been it this that these those "
                    "they he she we you i his her their our my not no very was has have had from by as "
                    "about which who what there than so too also".split()),
    "de": frozenset("der die das den dem des ein eine einen einem einer und oder aber ist sind war waren nicht "
                    "kein keine sehr mit von zu zum zur im auf für ich wir sie er es auch noch nur wie dass "
                    "bei aus nach über hat haben wurde wurden man sich".split()),
    "fr": frozenset("le la les un une des du de et ou mais est sont était étaient ne pas très avec pour dans sur "
                    "au aux ce cette ces il elle ils elles nous vous je qui que qu où leur son sa ses été "
                    "avons avait ont plus bien".split()),
    "es": frozenset("el la los las un una unos unas y o pero es son era eran no muy con para por en del al lo "
                    "que se su sus este esta estos estas fue fueron hay más también como está están le nos "
                    "mi".split()),
    "it": frozenset("il lo la gli le un una uno e o ma è sono era erano non molto con per di del della dei nel "
                    "nella che si suo sua questo questa anche come sono più ha hanno".split()),
    "pt": frozenset("o a os as um uma uns umas e ou mas é são era eram não muito com para por em do da dos das "
                    "no na nos nas que se seu sua este esta foi foram há mais também como está".split()),
    "nl": frozenset("de het een en of maar is zijn was waren niet geen erg heel met van voor op aan ik wij "
                    "zij hij ook nog dat die dit deze er bij".split()),
}
_LATIN_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ]+")
_SCRIPTS = {"zh": re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"),
            "ja": re.compile(r"[\u3040-\u30ff]"),
            "ko": re.compile(r"[\uac00-\ud7af]"),
            "ru": re.compile(r"[\u0400-\u04ff]+"),
            "ar": re.compile(r"[\u0600-\u06ff]+")}
_CJK_WORDS_PER_CHAR = 0.6
_MAJORITY = 0.6
"""The share of a text's words one script must hold; below it the text is too mixed to tell."""
_MIN_LATIN_WORDS = 4
"""A Latin-script text needs this many words, and function-word evidence, to be named."""
_MIN_HITS = 2
_ACCENTS = {"de": set("äöüß"), "fr": set("àâçèéêëîïôùûœ"), "es": set("áéíñóú¿¡"), "pt": set("ãõâêôáéíóúç"),
            "it": set("àèéìòù")}


def _latin_language(words: list[str]) -> str | None:
    lowered = [w.lower() for w in words]
    scores: dict[str, float] = {lang: sum(w in vocab for w in lowered) for lang, vocab in _FUNCTION_WORDS.items()}
    letters = set("".join(lowered))
    for lang, marks in _ACCENTS.items():  # a distinctive letter is worth half a function word
        scores[lang] += 0.5 * len(letters & marks)
    ranked = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)
    (best, top), (_, second) = ranked[0], ranked[1]
    if top < _MIN_HITS or top < 1.5 * second + 0.5:
        return None
    return best


@functools.lru_cache(maxsize=256)
def identify_language(text: str) -> str | None:
    """The language of ``text`` as a code of :data:`LANGUAGE_NAMES`, or None when it cannot be told (too short,
    no letters, evenly mixed, or Latin-script words that match no language's function words clearly).

    Remembered for the last 256 texts: the judges ask it of the same source for each of its summaries (about
    0.7 ms for a 4 KB article)."""
    counts: dict[str, float] = {}
    cjk = len(_SCRIPTS["zh"].findall(text))
    kana = len(_SCRIPTS["ja"].findall(text))
    if kana:
        counts["ja"] = (cjk + kana) * _CJK_WORDS_PER_CHAR
    elif cjk:
        counts["zh"] = cjk * _CJK_WORDS_PER_CHAR
    counts["ko"] = len(_SCRIPTS["ko"].findall(text)) * _CJK_WORDS_PER_CHAR
    counts["ru"] = len(_SCRIPTS["ru"].findall(text))
    counts["ar"] = len(_SCRIPTS["ar"].findall(text))
    latin = _LATIN_WORD.findall(text)
    counts["latin"] = len(latin)
    total = sum(counts.values())
    if total == 0:
        return None
    script, amount = max(counts.items(), key=lambda kv: kv[1])
    if amount < _MAJORITY * total:  # no script holds a clear majority of the words
        return None
    if script != "latin":
        return script if amount >= 2 else None
    if len(latin) < _MIN_LATIN_WORDS:
        return None
    return _latin_language(latin)


def different_languages(source: str, text: str) -> bool:
    """Whether ``text`` is written in another language than ``source``, both of them told (a short or mixed text
    is not called different): what a judge that compares words or clause embeddings cannot check (an English
    summary of a Chinese review)."""
    text_language = identify_language(text)
    if text_language is None:
        return False
    source_language = identify_language(source)
    return source_language is not None and source_language != text_language
