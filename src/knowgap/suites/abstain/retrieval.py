"""Leave-one-out contexts: the knowledge base minus the question's own fact, then one retrieval type.

Leak-freedom is structural: every function here receives the question and the *remaining* facts only
(:func:`leave_one_out` drops the held-out fact first); the expected answer is never an argument, so it
cannot reach a retrieval query or a context. (The original KnowOrNot embeds the held-out answer into the
RAG query.) The tests check this end to end on the recorded requests.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from knowgap.suites.abstain.dataset import Fact
from knowgap.text.embed import Embedder

RETRIEVALS = ("direct", "long_context", "rag", "hyde")


def leave_one_out(facts: Sequence[Fact], held_out: Fact) -> list[Fact]:
    """The facts of ``held_out``'s knowledge base, without it."""
    return [f for f in facts if f.kb == held_out.kb and f.id != held_out.id]


CHARS_PER_TOKEN = 3.5
"""Characters per token assumed for text outside CJK scripts (each CJK character counts as one token). Measured
with the Qwen2.5 tokenizer on PolicyBench's 331 QA pairs: 4.72 characters per token overall, 2.93 for the
densest pair; 3.5 leaves the window a margin."""
FACT_OVERHEAD = 12
"""Characters around each fact in the target's message ("Fact 12: ", the newline)."""
_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]")


def estimated_tokens(text: str) -> int:
    """A conservative token count: CJK characters one each, other text :data:`CHARS_PER_TOKEN` characters each."""
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / CHARS_PER_TOKEN)


def long_context(remaining: Sequence[Fact], max_chars: int | None = None,
                 max_tokens: int | None = None) -> tuple[list[Fact], int]:
    """All remaining facts in knowledge-base order, cut before the first fact that would pass ``max_chars``
    characters or ``max_tokens`` estimated tokens (:func:`estimated_tokens`); returns the facts kept and how
    many were cut. The first fact is always kept."""
    kept: list[Fact] = []
    chars = tokens = 0
    for fact in remaining:
        size = len(fact.text()) + FACT_OVERHEAD
        cost = estimated_tokens(fact.text()) + estimated_tokens("Fact 000: \n")
        if kept and ((max_chars is not None and chars + size > max_chars)
                     or (max_tokens is not None and tokens + cost > max_tokens)):
            break
        kept.append(fact)
        chars += size
        tokens += cost
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
