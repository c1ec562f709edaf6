"""``starter``: a tiny built-in suite (16 cases, zh + en) for the tests and the demo. See :mod:`.suite`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowgap.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "knowgap.suites.starter.dataset": ("DATA", "StarterCase"),
    "knowgap.suites.starter.prompts": ("PROMPTS",),
    "knowgap.suites.starter.suite": ("StarterOptions", "StarterSuite"),
})
__all__ = ["DATA", "PROMPTS", "StarterCase", "StarterOptions", "StarterSuite"]

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use
    from knowgap.suites.starter.dataset import DATA, StarterCase
    from knowgap.suites.starter.prompts import PROMPTS
    from knowgap.suites.starter.suite import StarterOptions, StarterSuite
