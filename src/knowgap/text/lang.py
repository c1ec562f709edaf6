"""Language of a text: ``zh`` when CJK ideographs make up a fair share of its letters, else ``en``."""

from __future__ import annotations

import re
from typing import Literal

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")


def cjk_share(text: str) -> float:
    """Share of CJK ideographs among the letters (CJK + Latin) of ``text``; 0.0 for a text without letters."""
    cjk = len(_CJK.findall(text))
    latin = len(_LATIN.findall(text))
    return cjk / (cjk + latin) if cjk + latin else 0.0


def detect_lang(text: str) -> Literal["zh", "en"]:
    """``zh`` if at least 20% of the letters are CJK ideographs (one ideograph carries a word), else ``en``."""
    return "zh" if cjk_share(text) >= 0.2 else "en"
