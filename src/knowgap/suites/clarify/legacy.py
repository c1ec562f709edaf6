"""Score keys of older clarify runs, read under their current names, so metrics, the review queue and
``knowgap compare`` of a run recorded before a rename still work.

- ``silent_answer`` -> ``unqualified_answer`` (issue 16): the score is "no question, no condition, no flag of
  missing facts", not the seed's silent failure (an answer that looks complete but dodges the core question,
  now judged apart as ``silent_failure``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

V = TypeVar("V")

RENAMED_SCORES: dict[str, str] = {"silent_answer": "unqualified_answer"}
"""Old trial score key -> current key."""


def current_scores(scores: Mapping[str, V]) -> dict[str, V]:
    """``scores`` with every old key also under its current name (a current key, if present, wins)."""
    out = dict(scores)
    for old, new in RENAMED_SCORES.items():
        if old in out and new not in out:
            out[new] = out[old]
    return out
