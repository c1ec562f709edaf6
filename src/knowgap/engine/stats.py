"""Confidence intervals: Wilson for proportions, a seeded percentile bootstrap for means."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for ``successes`` out of ``n`` (0 <= low <= high <= 1)."""
    if n <= 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # at 0 or n successes the bound is exactly 0 or 1; rounding would put p itself outside the interval
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= n else min(1.0, centre + half)
    return (low, high)


def bootstrap_mean(values: Sequence[float], *, reps: int = 2000, seed: int = 0,
                   alpha: float = 0.05) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean (deterministic for a seed)."""
    n = len(values)
    if n == 0:
        return (math.nan, math.nan)
    if n == 1:
        return (float(values[0]), float(values[0]))
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(reps))
    lo = means[int(math.floor(alpha / 2 * reps))]
    hi = means[min(reps - 1, int(math.ceil((1 - alpha / 2) * reps)) - 1)]
    return (lo, hi)
