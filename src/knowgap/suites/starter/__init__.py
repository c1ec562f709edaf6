"""``starter``: a tiny built-in suite (16 cases, zh + en) for the tests and the demo. See :mod:`.suite`."""

from knowgap.suites.starter.suite import DATA, PROMPTS, StarterCase, StarterOptions, StarterSuite

__all__ = ["DATA", "PROMPTS", "StarterCase", "StarterOptions", "StarterSuite"]
