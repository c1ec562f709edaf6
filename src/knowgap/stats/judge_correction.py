"""A confidence sequence for a judge-corrected rate (``knowgap run --until decided`` with a threshold ``use:
corrected``; docs/statistics.md, "Stopping when the gate is decided").

A metric that counts a judge's positive verdicts observes ``p``; a judge with sensitivity ``se`` and specificity
``sp`` would, if it were perfect, have given the Rogan-Gladen rate ``(p + sp - 1) / (se + sp - 1)``. The judge's
sensitivity and specificity are known only from its validity card (its confusion counts on a labelled set), so the
corrected value is bounded by the worst case over two confidence statements, split by Bonferroni:

- the observed rate's anytime-valid sequence (:func:`knowgap.stats.sequential.wor_betting_cs`) at ``alpha_1``,
  each end one-sided at ``1 - alpha_1`` as a decision uses it: the transform rises with the observed rate, so the
  corrected lower end moves only with the observed lower end (and the box), the upper with the upper, and a wrong
  decision needs the observed end on its side to exclude the observed value or the judge to leave the box;
- the card's box: the card's stated interval (Wilson's, on its confusion counts) of the sensitivity and of the
  specificity, each at level ``1 - alpha_2 / 2``, so the box holds both with probability at least ``1 - alpha_2``;

with ``alpha_1 = alpha_2 = alpha / 2`` (:data:`OBSERVED_SHARE`). The corrected range is the range of the transform
over the box ``[low, high] x [se] x [sp]``: a ratio of affine functions with a positive denominator (wherever
``se + sp > 1``) takes its extremes at the box's corners, so it is the min and max over the 8 corners, clipped to
[0, 1]. Where the box holds a judge no better than chance (``se_low + sp_low <= 1``) the corrected rate is
unbounded and nothing can be decided. A metric counting the judge's negative verdicts is ``1 -`` the corrected
positive rate of ``1 - p``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

from knowgap.stats.proportions import wilson
from knowgap.stats.sequential import decide

Counts = Literal["positive", "negative"]
OBSERVED_SHARE = 0.5
"""The share of alpha the observed rate's sequence gets; the card's box gets the rest, half to each of the
sensitivity and the specificity."""
DECIDABLE_GRID = 1000
"""Observed rates tried (over [0, 1]) when asking whether a threshold can ever be decided."""


@dataclass(frozen=True)
class CardBox:
    """The card's sensitivity and specificity intervals, each at level 1 - ``alpha`` / 2 (the box at 1 - alpha)."""

    sensitivity: tuple[float, float]
    specificity: tuple[float, float]
    alpha: float

    @property
    def youden_low(self) -> float:
        """The smallest ``se + sp - 1`` in the box (nan when the card lacks positives or negatives)."""
        return self.sensitivity[0] + self.specificity[0] - 1


def alpha_split(alpha: float) -> tuple[float, float]:
    """``(alpha_1, alpha_2)``: the observed rate's sequence's level and the card box's, summing to ``alpha``."""
    return alpha * OBSERVED_SHARE, alpha * (1 - OBSERVED_SHARE)


def card_box(tp: int, fn: int, fp: int, tn: int, alpha: float) -> CardBox:
    """The box holding the judge's (sensitivity, specificity) with probability at least ``1 - alpha``: Wilson's
    interval (the one the card states, at 95% there) of each on the card's confusion counts, at level
    ``1 - alpha / 2``."""
    z = NormalDist().inv_cdf(1 - alpha / 4)
    return CardBox(sensitivity=wilson(tp, tp + fn, z), specificity=wilson(tn, tn + fp, z), alpha=alpha)


def rogan_gladen_unclipped(p: float, se: float, sp: float) -> float:
    return (p + sp - 1) / (se + sp - 1)


def corrected_range(low: float, high: float, box: CardBox, counts: Counts = "positive"
                    ) -> tuple[float, float] | None:
    """The range of the corrected rate over an observed rate in [low, high] and the judge in ``box``, clipped to
    [0, 1]; None when the box holds a judge no better than chance (the range is then unbounded)."""
    if counts == "negative":
        flipped = corrected_range(1 - high, 1 - low, box)
        return None if flipped is None else (1 - flipped[1], 1 - flipped[0])
    if not box.youden_low > 0:
        return None
    corners = [rogan_gladen_unclipped(p, se, sp) for p in (low, high) for se in box.sensitivity
               for sp in box.specificity]
    return min(1.0, max(0.0, min(corners))), min(1.0, max(0.0, max(corners)))


def corrected_point(p: float, se: float, sp: float, counts: Counts = "positive") -> float | None:
    """Rogan-Gladen of ``p`` at the card's point sensitivity and specificity, clipped; None for a chance judge."""
    if not se + sp > 1 or math.isnan(p):
        return None
    q = p if counts == "positive" else 1 - p
    value = min(1.0, max(0.0, rogan_gladen_unclipped(q, se, sp)))
    return value if counts == "positive" else 1 - value


def reachable(box: CardBox, op: str, value: float, counts: Counts = "positive", *,
              point: tuple[float, float] | None = None, grid: int = DECIDABLE_GRID) -> set[str]:
    """The decisions (``pass``, ``fail``) a threshold ``corrected OP value`` can reach with this box: those some true
    rate in [0, 1] reaches when its observed rate is known exactly (the best a run can do) and equal to what a judge
    of the card's point sensitivity and specificity ``point`` gives (``1 - sp`` at a true rate 0, ``se`` at 1).
    None: the box holds a judge no better than chance, or its range is too wide (``se + sp - 1`` too close to 0)
    for the threshold. ``point`` None: the box's middle."""
    se, sp = point if point is not None else (sum(box.sensitivity) / 2, sum(box.specificity) / 2)
    found: set[str] = set()
    if not box.youden_low > 0 or not se + sp > 1:
        return found
    for i in range(grid + 1):
        observed = 1 - sp + (se + sp - 1) * i / grid  # the positive verdicts' rate at a true rate i / grid
        corrected = corrected_range(observed, observed, box)
        if corrected is None:
            return set()
        low, high = corrected if counts == "positive" else (1 - corrected[1], 1 - corrected[0])
        found.add(decide(low, high, op, value))
    return found - {"undecided"}


def decidable(box: CardBox, op: str, value: float, counts: Counts = "positive", *,
              point: tuple[float, float] | None = None) -> bool:
    """Whether some run could decide ``corrected OP value`` with this box (:func:`reachable`)."""
    return bool(reachable(box, op, value, counts, point=point))
