"""Leave-one-out contexts: the knowledge base minus the question's own fact, then one retrieval type.

Leak-freedom is structural: every function here receives the question and the *remaining* facts only
(:func:`leave_one_out` drops the held-out fact first); the expected answer is never an argument, so it
cannot reach a retrieval query or a context. (The original KnowOrNot embeds the held-out answer into the
RAG query.) The tests check this end to end on the recorded requests.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from knowgap.suites.abstain.dataset import Fact
from knowgap.text.embed import Embedder

RETRIEVALS = ("direct", "long_context", "rag", "hyde")


def leave_one_out(facts: Sequence[Fact], held_out: Fact) -> list[Fact]:
    """The facts of ``held_out``'s knowledge base, without it."""
    return [f for f in facts if f.kb == held_out.kb and f.id != held_out.id]


def long_context(remaining: Sequence[Fact], max_chars: int) -> tuple[list[Fact], int]:
    """All remaining facts in knowledge-base order, cut at ``max_chars`` (a small model's window);
    returns the facts kept and how many were cut."""
    kept: list[Fact] = []
    used = 0
    for fact in remaining:
        size = len(fact.text()) + 12
        if kept and used + size > max_chars:
            break
        kept.append(fact)
        used += size
    return kept, len(remaining) - len(kept)


def top_k(query_vector: np.ndarray, remaining: Sequence[Fact], embedder: Embedder, k: int) -> list[Fact]:
    """The ``k`` remaining facts most similar to ``query_vector`` (ties broken by knowledge-base order)."""
    if not remaining:
        return []
    passages = embedder.embed([f.text() for f in remaining], "passage")
    scores = passages @ (query_vector / max(float(np.linalg.norm(query_vector)), 1e-12))
    order = sorted(range(len(remaining)), key=lambda i: (-float(scores[i]), i))
    return [remaining[i] for i in order[:k]]


def rag(question: str, remaining: Sequence[Fact], embedder: Embedder, k: int) -> list[Fact]:
    """Top-k by similarity to the QUESTION only."""
    return top_k(embedder.embed([question], "query")[0], remaining, embedder, k)


def hyde(hypotheticals: Sequence[str], remaining: Sequence[Fact], embedder: Embedder, k: int) -> list[Fact]:
    """Top-k by similarity to the mean embedding of the generator's hypothetical answers (written from the
    question alone)."""
    vectors = embedder.embed(list(hypotheticals), "passage")
    return top_k(vectors.mean(axis=0), remaining, embedder, k)
