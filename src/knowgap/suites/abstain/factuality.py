"""Factuality of an answered question against the expected answer, in KnowOrNot's tiers: tier_1 (functionally
equivalent), tier_2 (substitutable), tier_3 (unacceptable), and agreement of tiers with reference tiers.

The judges live in :mod:`knowgap.judges`: the offline judge (:mod:`knowgap.judges.factuality`, the default), the
first hand-set approximation (:mod:`knowgap.judges.factuality_approximate`, re-exported here) and the LLM judge,
the spec ``judges/data/factuality.yaml`` (version factuality_v1) run as the ``judge`` role.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel

from knowgap.judges.factuality_approximate import TierVerdict, approximate_tier, approximate_tiers, numbers

__all__ = ["TIERS", "TierAgreement", "TierVerdict", "approximate_tier", "approximate_tiers", "numbers",
           "tier_agreement"]

TIERS = ("tier_1", "tier_2", "tier_3")


class HasTier(Protocol):
    @property
    def tier(self) -> str | None: ...


class TierAgreement(BaseModel):
    """A judge's tiers against reference tiers, on the rows that have one (tier_1/2/3; others skipped). A verdict
    that could not be parsed (an LLM judge's) stays in the denominator as a wrong one (column ``unparsed``)."""

    n: int
    skipped: int
    exact: int
    exact_rate: float
    exact_ci: tuple[float, float]
    acceptable_agree: int
    """Rows where both say acceptable (tier 1 or 2) or both say tier_3."""
    acceptable_rate: float
    acceptable_ci: tuple[float, float]
    acceptable_kappa: float | None
    balanced_accuracy: float | None
    """Mean of recall on acceptable and recall on tier_3 (the classes are unbalanced)."""
    confusion: dict[str, dict[str, int]]
    """reference tier -> judged tier (or ``unparsed``) -> rows."""
    unparsed: int = 0


def tier_agreement(labels: Sequence[str], verdicts: Sequence[HasTier | str | None]) -> TierAgreement:
    """``verdicts``: tiers, or objects with a ``tier``; None for a verdict that could not be parsed."""
    from knowgap.stats import wilson

    confusion = {t: dict.fromkeys((*TIERS, "unparsed"), 0) for t in TIERS}
    skipped = 0
    for label, verdict in zip(labels, verdicts, strict=True):
        if label not in TIERS:
            skipped += 1
            continue
        tier = verdict if verdict is None or isinstance(verdict, str) else verdict.tier
        confusion[label][tier if tier in TIERS else "unparsed"] += 1
    n = sum(sum(row.values()) for row in confusion.values())
    if not n:
        raise ValueError("no row has a reference tier (tier_1, tier_2 or tier_3)")
    exact = sum(confusion[t][t] for t in TIERS)
    good = ("tier_1", "tier_2")
    tp = sum(confusion[a][b] for a in good for b in good)
    fn = sum(confusion[a]["tier_3"] + confusion[a]["unparsed"] for a in good)
    fp = sum(confusion["tier_3"][b] for b in (*good, "unparsed"))
    tn = confusion["tier_3"]["tier_3"]
    po = (tp + tn) / n
    pe = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / n ** 2
    recalls = [tp / (tp + fn) if tp + fn else None, tn / (tn + fp) if tn + fp else None]
    return TierAgreement(
        n=n, skipped=skipped, exact=exact, exact_rate=exact / n, exact_ci=wilson(exact, n), acceptable_agree=tp + tn,
        acceptable_rate=po, acceptable_ci=wilson(tp + tn, n), acceptable_kappa=(po - pe) / (1 - pe) if pe < 1 else None,
        balanced_accuracy=None if None in recalls else (recalls[0] + recalls[1]) / 2,  # type: ignore[operator]
        confusion=confusion, unparsed=sum(row["unparsed"] for row in confusion.values()))
