"""The first offline factuality approximation (hand-set thresholds), kept as a baseline: ``--judge approximate``.

KnowOrNot's tiers: tier_1 (functionally equivalent), tier_2 (substitutable), tier_3 (unacceptable).
:func:`approximate_tier` uses embedding similarity plus agreement of numbers and content words; it is labelled
``approximate`` in every output. Measured on the PolicyBench dev answers it is far below the reporting bar (see
``docs/judges.md``); the default offline judge is :mod:`knowgap.judges.factuality`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from pydantic import BaseModel

from knowgap.text import content_tokens
from knowgap.text.embed import Embedder

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
