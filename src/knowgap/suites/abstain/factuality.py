"""Factuality of an answered question against the expected answer, in KnowOrNot's tiers:
tier_1 (functionally equivalent), tier_2 (substitutable), tier_3 (unacceptable).

:func:`approximate_tier` is an OFFLINE APPROXIMATION (embedding similarity plus agreement of numbers and
content words); it is labelled ``approximate`` in every output. The LLM judge is the spec
``judges/data/factuality.yaml`` (version factuality_v1), run as the ``judge`` role.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from pydantic import BaseModel

from knowgap.text import content_tokens
from knowgap.text.embed import Embedder

VERSION = "factuality-approx-1"
"""Judge ``factuality`` (offline); change whenever the tiering changes."""
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


class TierVerdict(BaseModel):
    tier: str
    method: str
    similarity: float
    numbers_missing: list[str]
    note: str = ""


def numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def approximate_tier(response: str, expected: str, embedder: Embedder, *, question: str = "", tier1: float = 0.93,
                     tier2: float = 0.9) -> TierVerdict:
    """tier_1: very similar, most of the expected answer's key words present and every number; tier_2: similar,
    a good share of key words, no contradicting number; else tier_3. Key words are the expected answer's content
    words that the question does not already contain (echoing the question proves nothing). Approximate by
    construction."""
    rows = embedder.embed([response, expected], "passage")
    return _tier(float(rows[0] @ rows[1]), response, expected, question, tier1, tier2)


def approximate_tiers(responses: Sequence[str], expected: Sequence[str], questions: Sequence[str],
                      embedder: Embedder, *, tier1: float = 0.93, tier2: float = 0.9,
                      progress: Callable[[int], None] | None = None, batch: int = 64) -> list[TierVerdict]:
    """:func:`approximate_tier` for many rows, embedded in batches."""
    out: list[TierVerdict] = []
    for start in range(0, len(responses), batch):
        r = embedder.embed(list(responses[start:start + batch]), "passage")
        e = embedder.embed(list(expected[start:start + batch]), "passage")
        for i in range(len(r)):
            j = start + i
            out.append(_tier(float(r[i] @ e[i]), responses[j], expected[j], questions[j], tier1, tier2))
        if progress:
            progress(len(out))
    return out


def _tier(sim: float, response: str, expected: str, question: str, tier1: float, tier2: float) -> TierVerdict:
    want, got = numbers(expected), numbers(response)
    missing = sorted(want - got)
    conflict = bool(want) and bool(got) and not (want & got)
    key = set(content_tokens(expected)) - set(content_tokens(question))
    share = len(key & set(content_tokens(response))) / max(1, len(key))
    if sim >= tier1 and not missing and share >= 0.5:
        tier = "tier_1"
    elif sim >= tier2 and not conflict and share >= 0.35:
        tier = "tier_2"
    else:
        tier = "tier_3"
    return TierVerdict(tier=tier, method="approximate", similarity=round(sim, 4), numbers_missing=missing,
                       note=f"key-word share {share:.2f}" + ("; numbers conflict" if conflict else ""))


TIERS = ("tier_1", "tier_2", "tier_3")


class TierAgreement(BaseModel):
    """The offline tiers against reference tiers, on the rows that have one (tier_1/2/3; others skipped)."""

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
    """reference tier -> offline tier -> rows."""


def tier_agreement(labels: Sequence[str], verdicts: Sequence[TierVerdict]) -> TierAgreement:
    from knowgap.engine.stats import wilson

    confusion = {t: dict.fromkeys(TIERS, 0) for t in TIERS}
    skipped = 0
    for label, verdict in zip(labels, verdicts, strict=True):
        if label not in TIERS:
            skipped += 1
            continue
        confusion[label][verdict.tier] += 1
    n = sum(sum(row.values()) for row in confusion.values())
    if not n:
        raise ValueError("no row has a reference tier (tier_1, tier_2 or tier_3)")
    exact = sum(confusion[t][t] for t in TIERS)
    good = ("tier_1", "tier_2")
    tp = sum(confusion[a][b] for a in good for b in good)
    fn = sum(confusion[a]["tier_3"] for a in good)
    fp = sum(confusion["tier_3"][b] for b in good)
    tn = confusion["tier_3"]["tier_3"]
    po = (tp + tn) / n
    pe = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / n ** 2
    recalls = [tp / (tp + fn) if tp + fn else None, tn / (tn + fp) if tn + fp else None]
    return TierAgreement(
        n=n, skipped=skipped, exact=exact, exact_rate=exact / n, exact_ci=wilson(exact, n), acceptable_agree=tp + tn,
        acceptable_rate=po, acceptable_ci=wilson(tp + tn, n), acceptable_kappa=(po - pe) / (1 - pe) if pe < 1 else None,
        balanced_accuracy=None if None in recalls else (recalls[0] + recalls[1]) / 2,  # type: ignore[operator]
        confusion=confusion)
