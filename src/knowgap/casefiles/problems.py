"""Problems of a user's file, reported together: one line each, at most :data:`MAX_PROBLEMS`, with a
did-you-mean for a misspelt name."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from knowgap.errors import KnowgapError

MAX_PROBLEMS = 20
"""Problems listed at most (then how many more there are)."""


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``known`` (or the one ``name`` begins), or nothing."""
    close = difflib.get_close_matches(name, list(known), n=1) or [k for k in known if name and k.startswith(name)][:1]
    return f" (did you mean '{close[0]}'?)" if close else ""


def raise_problems(problems: Sequence[str]) -> None:
    """Raise one error listing ``problems`` (one per line), if there are any."""
    if problems:
        more = len(problems) - MAX_PROBLEMS
        lines = list(dict.fromkeys(problems[:MAX_PROBLEMS])) + ([f"... and {more} more problems"] if more > 0 else [])
        raise KnowgapError("\n".join(lines))
