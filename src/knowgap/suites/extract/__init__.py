"""``extract``: review extraction, faithfulness and injection robustness. See :mod:`.suite`."""

from knowgap.suites.extract.dataset import ExtractCase
from knowgap.suites.extract.suite import ExtractOptions, ExtractSuite

__all__ = ["ExtractCase", "ExtractOptions", "ExtractSuite"]
