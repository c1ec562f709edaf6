"""Summary coverage (seed 004's follow-up): does the summary mention each aspect the review discusses?

Offline, no LLM. The review is cut into aspect clauses (:func:`review_aspects`: the claims of
:func:`knowgap.text.claims.split_claims` -- sentences, contrast clauses, Chinese comma clauses -- with English
claims further cut at commas, semicolons and dashes when each side keeps at least 4 words, since one MAMS
sentence often holds several aspects). The summary is cut the same way (its claims and their clauses). Each
aspect clause is compared with every summary unit by cosine similarity of multilingual-e5-small embeddings
(``query`` prefix on both sides); it is *covered* when its best similarity reaches :data:`THRESHOLD`.
Coverage = covered clauses / clauses.

Validity: **screen**. Card: 135 hand-labelled (clause, summary) pairs of real 0.5B / 1.5B summaries
(``judges/data/labelled/summary_coverage.jsonl``): balanced accuracy 0.69 [0.63, 0.73], sensitivity 0.39
(Chinese reviews with English summaries 0.19), specificity 1.00. The threshold was set on the 6 reviews of
``data/handwritten_calibration.jsonl``: each clause against its own
review's faithful summary (20 pairs, taken as covered) and against the other same-language reviews' faithful
summaries (40 pairs, not covered). At 0.91, 19 of the 20 own pairs are covered (the miss: 0.861, a clause the
summary splits in two) and none of the 40 others (highest 0.908). The gap is narrow and those negatives are
easy (another review's summary), so the number compares summarizers, it does not certify one summary.
Coverage is meant to be about mention, not truth, but e5 similarity also drops when a summary changes an
aspect's facts (the calibration set's unfaithful English summaries cover 1.0, 0.0 and 0.0), so it is not
independent of faithfulness. And it misses paraphrase: on a 1.5B summary, "The waitress was nice and took care
of the customer" scored 0.886 against the clause "Fortunately the waitress was very ncie about this" (not
covered), while 5 of the 40 unrelated pairs above score 0.88 or more; e5-small does not separate a paraphrase
from topic overlap at the clause level, so the score leans low on abstractive summaries.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from knowgap.text.claims import split_claims
from knowgap.text.embed import Embedder, Kind, default_embedder
from knowgap.text.lang import detect_lang

VERSION = "review-clause-coverage-1"
"""Judge ``summary-coverage``; change with THRESHOLD, KIND or the clause rules."""
THRESHOLD = 0.91
KIND: Kind = "query"
MIN_WORDS = 4
_EN_CUT = re.compile(r",\s*|;\s*|\s+-\s+")


class Coverage(BaseModel):
    score: float | None
    """Covered clauses / clauses; None for an empty summary or a review without clauses."""
    clauses: list[str]
    covered: list[bool]
    best: list[float]


def _en_parts(claim: str) -> list[str]:
    parts: list[str] = []
    for part in (p.strip() for p in _EN_CUT.split(claim)):
        if not part:
            continue
        if parts and (len(part.split()) < MIN_WORDS or len(parts[-1].split()) < MIN_WORDS):
            parts[-1] = f"{parts[-1]}, {part}"
        else:
            parts.append(part)
    return parts


def review_aspects(review: str) -> list[str]:
    """The review's aspect clauses, in order."""
    out: list[str] = []
    for claim in split_claims(review):
        out += _en_parts(claim) if detect_lang(claim) == "en" else [claim]
    return out


def summary_coverage(review: str, summary: str, embedder: Embedder | None = None,
                     threshold: float = THRESHOLD) -> Coverage:
    clauses = review_aspects(review)
    units = list(dict.fromkeys(split_claims(summary) + review_aspects(summary)))
    if not clauses or not units:
        return Coverage(score=None, clauses=clauses, covered=[], best=[])
    rows = (embedder or default_embedder()).embed(clauses + units, KIND)  # one call: each has a fixed cost
    best = (rows[: len(clauses)] @ rows[len(clauses):].T).max(axis=1)
    covered = [bool(b >= threshold) for b in best]
    return Coverage(score=sum(covered) / len(clauses), clauses=clauses, covered=covered,
                    best=[round(float(b), 4) for b in best])

