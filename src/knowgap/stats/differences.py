"""The difference of two proportions or means from unpaired samples: Newcombe's interval from the two
proportions' own intervals, the two-proportion z-test, and a normal approximation from two stored intervals
(``knowgap compare`` without the runs' suite; extract's flip rate above its noise floor)."""

from __future__ import annotations

import math

from knowgap.stats.proportions import Z95, wilson


def newcombe_interval(p1: float, ci1: tuple[float, float], p2: float, ci2: tuple[float, float]
                      ) -> tuple[float, float]:
    """95% interval of p1 - p2 by Newcombe's hybrid score method (1998, method 10) from each proportion's own
    interval (Wilson, or clustered Wilson)."""
    (l1, u1), (l2, u2) = ci1, ci2
    d = p1 - p2
    return d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)


def newcombe(ka: int, na: int, kb: int, nb: int) -> tuple[float, float]:
    """95% CI of pb - pa (``kb`` of ``nb`` against ``ka`` of ``na``), Newcombe's interval from two Wilson
    intervals."""
    return newcombe_interval(kb / nb, wilson(kb, nb), ka / na, wilson(ka, na))


def normal_p(z: float) -> float:
    """The two-sided p-value of a standard normal statistic ``z``."""
    return math.erfc(abs(z) / math.sqrt(2))


def two_proportion_p(ka: int, na: int, kb: int, nb: int) -> float:
    """Two-sided p of the pooled two-proportion z-test of ``kb`` of ``nb`` against ``ka`` of ``na``."""
    pooled = (ka + kb) / (na + nb)
    se = math.sqrt(pooled * (1 - pooled) * (1 / na + 1 / nb))
    if se == 0:
        return 1.0 if ka / na == kb / nb else 0.0
    return normal_p((kb / nb - ka / na) / se)


def difference_from_intervals(a: float, ci_a: tuple[float, float], b: float, ci_b: tuple[float, float]
                              ) -> tuple[float, float, float]:
    """(ci_low, ci_high, p) of b - a from each estimate's own 95% interval, read as a normal one (standard error
    = width / (2 * 1.96)), the two taken as independent."""
    se_a = (ci_a[1] - ci_a[0]) / (2 * Z95)
    se_b = (ci_b[1] - ci_b[0]) / (2 * Z95)
    se = math.hypot(se_a, se_b)
    d = b - a
    return d - Z95 * se, d + Z95 * se, normal_p(d / se) if se > 0 else (1.0 if d == 0 else 0.0)
