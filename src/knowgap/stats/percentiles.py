"""The one percentile rule: how every bootstrap and Monte Carlo interval in knowgap is read off its draws.

With the B draws sorted, the (1 - alpha) interval is the pair of **equal-tailed order statistics**: the lower
bound is draw ``floor(B * alpha / 2)`` (counting from 0) and the upper bound its mirror image, draw
``B - 1 - floor(B * alpha / 2)``. For B = 2,000 and alpha = 0.05 that is draws 50 and 1,949: 50 draws lie below
the interval and 50 above it. Why this rule:

- it is symmetric: as many draws fall outside on each side, so the interval of a statistic negated (B - A
  against A - B) is the mirror image of its interval;
- it does not interpolate: both bounds are values the statistic took (a share's bounds are shares its resamples
  had), with no assumption about the distribution between two draws;
- it was already the rule of the engine's bootstrap of means (every suite's mean metrics), the label agreement
  intervals, the judge calibration and ``knowgap compare``; since this package it is also the rule of partial's
  bootstrapped statistics (which left 25 draws below and 24 above of 1,000), abstain's F1 (which took the outer
  neighbours of linear interpolation's positions) and the judges' Monte Carlo intervals (numpy's linear
  interpolation, "type 7"). With 1,000 draws or more the rules differ by about one draw's step.

An interval also needs enough draws: where the statistic is undefined on a resample (None or nan: a kappa with
one category, an F1 with no positive), that resample is dropped, and with fewer than half of the resamples left
there is no interval (:func:`interval_of_draws`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def percentile_interval(draws: Iterable[float], alpha: float = 0.05) -> tuple[float, float]:
    """The (1 - ``alpha``) equal-tailed order-statistic interval of ``draws`` (in any order; at least one)."""
    ordered = sorted(draws)
    if not ordered:
        raise ValueError("a percentile interval needs at least one draw")
    low = int(math.floor(alpha / 2 * len(ordered)))
    return float(ordered[low]), float(ordered[len(ordered) - 1 - low])


def interval_of_draws(draws: Iterable[float | None], reps: int, alpha: float = 0.05) -> tuple[float, float] | None:
    """:func:`percentile_interval` of the draws that have a value (None and nan dropped), or None when fewer
    than half of the ``reps`` draws made have one (or none has)."""
    kept = [float(d) for d in draws if d is not None and not math.isnan(d)]
    if not kept or len(kept) < reps / 2:
        return None
    return percentile_interval(kept, alpha)
