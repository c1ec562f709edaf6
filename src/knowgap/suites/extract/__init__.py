"""``extract``: review extraction, faithfulness and injection robustness. See :mod:`.suite`."""

from knowgap.suites.extract.dataset import ExtractCase
from knowgap.suites.extract.suite import GATE_FILE, ExtractOptions, ExtractSuite

__all__ = ["GATE_FILE", "ExtractCase", "ExtractOptions", "ExtractSuite"]
