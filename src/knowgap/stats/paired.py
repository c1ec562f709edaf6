"""Paired tests of two runs on the same cases: the exact McNemar test on discordant pairs, and its clustered
form, a sign test on clusters (``knowgap compare``'s flipped trials; docs/statistics.md)."""

from __future__ import annotations

import math
from collections.abc import Iterable


def mcnemar_exact(fixed: int, regressed: int) -> float:
    """Two-sided exact McNemar (binomial) p-value for discordant pairs."""
    n = fixed + regressed
    if n == 0:
        return 1.0
    k = min(fixed, regressed)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def clustered_mcnemar(per_cluster: Iterable[tuple[int, int]]) -> tuple[int, int, float]:
    """(clusters fixed, clusters regressed, p) from (fixed, regressed) trial counts per cluster: a cluster counts
    as fixed when its trials fixed more than they regressed, as regressed when the reverse, and not at all when
    they balance; the exact McNemar (sign) test then runs on those clusters. Trials of one cluster (repeats of a
    case, cases on one source) are not independent, so they count as one unit: identical repeats give the
    p-value of one repeat, and clusters of one trial give the exact McNemar test on trials."""
    fixed = regressed = 0
    for f, r in per_cluster:
        fixed += f > r
        regressed += r > f
    return fixed, regressed, mcnemar_exact(fixed, regressed)
