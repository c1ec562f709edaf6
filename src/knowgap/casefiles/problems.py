"""Problems of a user's file, reported together: one line each, at most :data:`MAX_PROBLEMS`, with a
did-you-mean for a misspelt name."""

from __future__ import annotations

from collections.abc import Sequence

from knowgap.errors import KnowgapError
from knowgap.errors import did_you_mean as did_you_mean  # re-exported: the casefiles modules import it here

MAX_PROBLEMS = 20
"""Problems listed at most (then how many more there are)."""


def raise_problems(problems: Sequence[str]) -> None:
    """Raise one error listing ``problems`` (one per line), if there are any."""
    if problems:
        more = len(problems) - MAX_PROBLEMS
        lines = list(dict.fromkeys(problems[:MAX_PROBLEMS])) + ([f"... and {more} more problems"] if more > 0 else [])
        raise KnowgapError("\n".join(lines))
