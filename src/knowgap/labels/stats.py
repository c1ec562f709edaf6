"""Agreement statistics for nominal labels: percent agreement, Cohen's kappa, confusion matrices, Fleiss'
kappa, Krippendorff's alpha (nominal, missing data allowed). Their intervals: :func:`knowgap.stats.bootstrap_ci`.

Values are any hashable category keys. A statistic that is undefined on its data (e.g. kappa when both
raters used one single category) is ``nan``; callers show it as "-".
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from typing import TypeVar

H = TypeVar("H", bound=Hashable)
Key = Hashable


def percent_agreement(a: Sequence[Key], b: Sequence[Key]) -> float:
    if len(a) != len(b):
        raise ValueError("two raters need the same number of items")
    if not a:
        return math.nan
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def cohen_kappa(a: Sequence[Key], b: Sequence[Key]) -> float:
    """Cohen's kappa of two raters over the same items: (p_o - p_e) / (1 - p_e)."""
    n = len(a)
    if n != len(b):
        raise ValueError("two raters need the same number of items")
    if n == 0:
        return math.nan
    p_o = percent_agreement(a, b)
    ca, cb = Counter(a), Counter(b)
    p_e = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if p_e >= 1.0:
        return math.nan
    return (p_o - p_e) / (1 - p_e)


def confusion(a: Sequence[Key], b: Sequence[Key], categories: Sequence[Key]) -> list[list[int]]:
    """matrix[i][j] = items where ``a`` said categories[i] and ``b`` said categories[j]."""
    index = {c: i for i, c in enumerate(categories)}
    matrix = [[0] * len(categories) for _ in categories]
    for x, y in zip(a, b, strict=True):
        matrix[index[x]][index[y]] += 1
    return matrix


def fleiss_kappa(ratings: Sequence[Sequence[Key]]) -> float:
    """Fleiss' kappa: each item rated by the same number (>= 2) of raters; ``ratings[i]`` is item i's labels."""
    if not ratings:
        return math.nan
    m = len(ratings[0])
    if m < 2 or any(len(r) != m for r in ratings):
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of ratings per item")
    n = len(ratings)
    totals: Counter[Key] = Counter()
    p_items = 0.0
    for item in ratings:
        counts = Counter(item)
        totals.update(counts)
        p_items += (sum(c * c for c in counts.values()) - m) / (m * (m - 1))
    p_bar = p_items / n
    p_e = sum((t / (n * m)) ** 2 for t in totals.values())
    if p_e >= 1.0:
        return math.nan
    return (p_bar - p_e) / (1 - p_e)


def coincidences(units: Sequence[Sequence[H]]) -> tuple[dict[tuple[H, H], float], dict[H, float]]:
    """Krippendorff's coincidence matrix o_ck = sum_u (pairs c-k in unit u) / (m_u - 1) over the pairable units
    (two values or more), and its margins n_c."""
    coincidence: dict[tuple[H, H], float] = defaultdict(float)
    for unit in units:
        m_u = len(unit)
        if m_u < 2:
            continue
        counts = Counter(unit)
        for c, nc in counts.items():
            for k, nk in counts.items():
                pairs = nc * (nc - 1) if c == k else nc * nk
                coincidence[(c, k)] += pairs / (m_u - 1)
    n_c: dict[H, float] = defaultdict(float)
    for (c, _k), v in coincidence.items():
        n_c[c] += v
    return coincidence, n_c


def krippendorff_alpha_nominal(units: Sequence[Sequence[Key]]) -> float:
    """Krippendorff's alpha for nominal data. ``units[u]`` holds the values the coders gave unit u (missing
    values simply left out); units with fewer than two values are not pairable and are ignored.

    alpha = 1 - D_o / D_e with the coincidence matrix o_ck = sum_u (pairs c-k in u) / (m_u - 1).
    """
    coincidence, n_c = coincidences(units)
    n = sum(n_c.values())
    if n <= 1:
        return math.nan
    observed = sum(v for (c, k), v in coincidence.items() if c != k)
    expected = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k) / (n - 1)
    if expected == 0:
        return math.nan
    return 1 - observed / expected
