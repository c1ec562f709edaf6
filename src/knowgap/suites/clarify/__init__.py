"""``clarify``: underspecified legal questions (InsufficiencyBench, seed 000). See :mod:`.suite`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowgap.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "knowgap.suites.clarify.dataset": ("ClarifyCase",),
    "knowgap.suites.clarify.suite": ("ClarifyOptions", "ClarifySuite"),
})
__all__ = ["ClarifyCase", "ClarifyOptions", "ClarifySuite"]

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use
    from knowgap.suites.clarify.dataset import ClarifyCase
    from knowgap.suites.clarify.suite import ClarifyOptions, ClarifySuite
