"""Summary coverage (seed 004's follow-up): does the summary mention each aspect the review discusses?

Offline, no LLM. The review is cut into aspect clauses (:func:`review_aspects`: the claims of
:func:`knowgap.text.claims.split_claims` -- sentences, contrast clauses, Chinese comma clauses -- with English
claims further cut at commas, semicolons and dashes when each side keeps at least 4 words, since one MAMS
sentence often holds several aspects). The summary is cut the same way (its claims and their clauses). Each
aspect clause is compared with every summary unit by cosine similarity of multilingual-e5-small embeddings
(``query`` prefix on both sides); it is *covered* when its best similarity reaches :data:`THRESHOLD`.
Coverage = covered clauses / clauses.

A summary written in another language than its review (an English summary of a Chinese review, which the
embedded models write often) is not scored (``other_language``, score None): e5-small's similarity across the two
languages stays under the threshold, so such a summary covered nothing whatever it said (on the labelled pairs
below, 1 of 58 covered clauses found). Both languages must be told
(:func:`knowgap.text.languages.different_languages`).

Validity: see the card (``judges/cards/``) and docs/judges.md, measured on the 70 same-language pairs of 135
hand-labelled (clause, summary) pairs of real 0.5B / 1.5B summaries
(``judges/data/labelled/summary_coverage.jsonl``); version 1, which scored every pair, had balanced accuracy 0.69
[0.63, 0.73] on all 135.

The threshold was set on the 6 reviews of
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
from knowgap.text.languages import different_languages

VERSION = "review-clause-coverage-2"
"""Judge ``summary-coverage``; change with THRESHOLD, KIND or the clause rules."""
THRESHOLD = 0.91
KIND: Kind = "query"
MIN_WORDS = 4
_EN_CUT = re.compile(r",\s*|;\s*|\s+-\s+")


class Coverage(BaseModel):
    score: float | None
    """Covered clauses / clauses; None for an empty summary, a review without clauses or a summary in another
    language (``other_language``)."""
    clauses: list[str]
    covered: list[bool]
    """One per clause when scored, else empty."""
    best: list[float]
    other_language: bool = False
    """The summary is in another language than the review: not scored."""


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
    if different_languages(review, summary):
        return Coverage(score=None, clauses=clauses, covered=[], best=[], other_language=True)
    rows = (embedder or default_embedder()).embed(clauses + units, KIND)  # one call: each has a fixed cost
    best = (rows[: len(clauses)] @ rows[len(clauses):].T).max(axis=1)
    covered = [bool(b >= threshold) for b in best]
    return Coverage(score=sum(covered) / len(clauses), clauses=clauses, covered=covered,
                    best=[round(float(b), 4) for b in best])

