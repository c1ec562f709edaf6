"""Score keys of older clarify runs, read under their current names, so metrics, the review queue and
``knowgap compare`` of a run recorded before a rename still work.

- ``silent_answer`` -> ``unqualified_answer`` (issue 16): the score is "no question, no condition, no flag of
  missing facts", not the seed's silent failure (an answer that looks complete but dodges the core question,
  now judged apart as ``silent_failure``).
- ``wrong_citation`` -> ``outside_basis_citation`` and ``citation_precision`` -> ``citation_basis_share`` (issue 37,
  citation-check-2): the same values (an article not in the case's reference basis, nonexistent ones included;
  the share in it), named for what they count: an article outside the basis is not thereby a wrong citation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

V = TypeVar("V")

RENAMED_SCORES: dict[str, str] = {"silent_answer": "unqualified_answer", "wrong_citation": "outside_basis_citation",
                                  "citation_precision": "citation_basis_share"}
"""Old trial score key -> current key."""


def current_scores(scores: Mapping[str, V]) -> dict[str, V]:
    """``scores`` with every old key also under its current name (a current key, if present, wins)."""
    out = dict(scores)
    for old, new in RENAMED_SCORES.items():
        if old in out and new not in out:
            out[new] = out[old]
    return out
