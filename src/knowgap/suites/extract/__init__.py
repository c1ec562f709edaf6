"""``extract``: review extraction, faithfulness and injection robustness. See :mod:`.suite`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowgap.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "knowgap.suites.extract.dataset": ("ExtractCase",),
    "knowgap.suites.extract.suite": ("GATE_FILE", "ExtractOptions", "ExtractSuite"),
})
__all__ = ["GATE_FILE", "ExtractCase", "ExtractOptions", "ExtractSuite"]

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use
    from knowgap.suites.extract.dataset import ExtractCase
    from knowgap.suites.extract.suite import GATE_FILE, ExtractOptions, ExtractSuite
