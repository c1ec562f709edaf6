"""``clarify``: underspecified legal questions (InsufficiencyBench, seed 000). See :mod:`.suite`."""

from knowgap.suites.clarify.dataset import ClarifyCase
from knowgap.suites.clarify.suite import ClarifyOptions, ClarifySuite

__all__ = ["ClarifyCase", "ClarifyOptions", "ClarifySuite"]
