"""Value transformations a policy applies before evidence reaches an agent, and what each one hides.

Each transformation returns what the agent sees; :func:`hidden_digit_runs` and :func:`digit_windows` give the
recognisable pieces of the original that the agent must never see (used by the leak detector in :mod:`.leak`,
never by the view itself).

- ``mask_middle``: ``张三`` -> ``张*``, ``李小龙`` -> ``李*龙``, ``13800138000`` -> ``138****8000``;
- ``keep_last`` (n): ``6222020200112233`` -> ``************2233``;
- ``bucket`` (edges, unit): ``1500`` with edges ``[100]`` and unit ``元`` -> ``>100元``;
- ``summarise``: a fixed summary from the scenario (or one written by the generator role);
- ``redact``: ``[REDACTED]``; ``drop``: the field is removed; ``show_full``: unchanged.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

REDACTED = "[REDACTED]"
DIGIT_WINDOW = 4
"""A run of this many hidden digits, in order, is a recognisable part of a masked number."""
MIN_SECRET_NUMBER = 100
"""Hidden numbers below this are too common to count as leaked when they appear (documented limit)."""

_DIGITS = re.compile(r"\d")
_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?!\d|\.\d)")
"""A number, not a piece of a longer one (1.2.3); a full stop after it ends the sentence, not the number."""
_MAGNITUDES = {"千": 10 ** 3, "万": 10 ** 4, "亿": 10 ** 8, "百万": 10 ** 6, "千万": 10 ** 7, "thousand": 10 ** 3,
               "k": 10 ** 3, "million": 10 ** 6, "mn": 10 ** 6, "billion": 10 ** 9, "bn": 10 ** 9}
"""Words after a number that multiply it (a bare m or b is left out: metres, minutes, bytes; 千 before a unit of
weight, length, power or calories is that unit: 千克, 千米, 千瓦, 千卡)."""
_SCALED = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)(?!\d|\.\d)\s*"
                     r"(千万|百万|千(?![克米瓦卡])|万|亿|thousand|million|billion|mn|bn|k)(?![a-z])", re.IGNORECASE)


def is_digit_string(value: str) -> bool:
    """Phone, ID-card, bank-card shaped: mostly digits (spaces, dashes and a final X allowed)."""
    digits = len(_DIGITS.findall(value))
    return digits >= 6 and digits >= 0.7 * len(value.replace(" ", "").replace("-", ""))


def mask_middle(value: str) -> str:
    """Keep the ends, star the middle: names keep the first (and last, from 3 characters) character; numbers
    of 11+ digits keep the first 3 and last 4; an e-mail keeps the domain."""
    if "@" in value and not is_digit_string(value):
        local, _, domain = value.partition("@")
        return mask_middle(local) + "@" + domain if local else value
    n = len(value)
    if n <= 1:
        return "*" if n else ""
    if is_digit_string(value) and n >= 11:
        return value[:3] + "*" * (n - 7) + value[-4:]
    if is_digit_string(value) and n >= 7:
        return value[:2] + "*" * (n - 4) + value[-2:]
    if n == 2:
        return value[0] + "*"
    return value[0] + "*" * (n - 2) + value[-1]


def keep_last(value: str, n: int) -> str:
    """Star everything but the last ``n`` characters: ``************1234``."""
    if n <= 0:
        return "*" * len(value)
    if len(value) <= n:
        return "*" * len(value)  # showing everything would not mask anything
    return "*" * (len(value) - n) + value[-n:]


def _fmt(edge: float) -> str:
    return str(int(edge)) if float(edge).is_integer() else str(edge)


def bucket(value: float, edges: list[float], unit: str = "") -> str:
    """The range ``value`` falls in: ``<100元``, ``100-1000元``, ``>1000元`` for edges [100, 1000]."""
    if value < edges[0]:
        return f"<{_fmt(edges[0])}{unit}"
    for low, high in zip(edges, edges[1:], strict=False):
        if low <= value < high:
            return f"{_fmt(low)}-{_fmt(high)}{unit}"
    return f">{_fmt(edges[-1])}{unit}" if value > edges[-1] else f">={_fmt(edges[-1])}{unit}"


def as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        m = re.fullmatch(r"\s*[¥$€]?\s*(-?\d[\d,]*(?:\.\d+)?)\s*(元|yuan|CNY|USD|EUR|RMB)?\s*", value)
        if m:
            return float(m.group(1).replace(",", ""))
    return None


def digit_windows(digits: str, size: int = DIGIT_WINDOW) -> set[str]:
    """Every run of ``size`` consecutive characters of ``digits`` (the whole string when shorter)."""
    if len(digits) <= size:
        return {digits} if digits else set()
    return {digits[i:i + size] for i in range(len(digits) - size + 1)}


def hidden_digit_runs(original: str, shown: str) -> list[str]:
    """The maximal runs of digits of ``original`` that ``shown`` replaced by stars (position by position,
    for same-length masks); the whole digit string when lengths differ."""
    if len(original) != len(shown):
        return ["".join(_DIGITS.findall(original))]
    runs, current = [], []
    for o, s in zip(original, shown, strict=True):
        if s == "*" and o != "*":
            if o.isdigit():
                current.append(o)
            continue
        if current:
            runs.append("".join(current))
            current = []
    if current:
        runs.append("".join(current))
    return runs


def numbers_in(text: str) -> set[float]:
    """Every number written in ``text``, without its sign (thousands separators removed, also before a Chinese
    unit: 1,500元); a number followed by a magnitude word (千, 万, 亿, 百万, 千万, thousand, million, billion, k,
    mn, bn) also counts at its full value: 38万 is 38 and 380000, 86.4 million is 86.4 and 86400000."""
    clean = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    found = {float(m) for m in _NUMBER.findall(clean)}
    for number, unit in _SCALED.findall(clean):
        found.add(float(Decimal(number) * _MAGNITUDES[unit.lower()]))
    return found
