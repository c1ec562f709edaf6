"""``abstain``: KnowOrNot-style leave-one-out abstention. See :mod:`.suite`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowgap.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "knowgap.suites.abstain.dataset": ("AbstainCase",),
    "knowgap.suites.abstain.suite": ("AbstainOptions", "AbstainSuite"),
})
__all__ = ["AbstainCase", "AbstainOptions", "AbstainSuite"]

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use
    from knowgap.suites.abstain.dataset import AbstainCase
    from knowgap.suites.abstain.suite import AbstainOptions, AbstainSuite
