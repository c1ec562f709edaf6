"""``starter``: a tiny built-in suite (16 cases, zh + en) for the tests and the demo. See :mod:`.suite`."""

from knowgap.suites.starter.dataset import DATA, StarterCase
from knowgap.suites.starter.prompts import PROMPTS
from knowgap.suites.starter.suite import StarterOptions, StarterSuite

__all__ = ["DATA", "PROMPTS", "StarterCase", "StarterOptions", "StarterSuite"]
