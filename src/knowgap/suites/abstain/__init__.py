"""``abstain``: KnowOrNot-style leave-one-out abstention. See :mod:`.suite`."""

from knowgap.suites.abstain.dataset import AbstainCase
from knowgap.suites.abstain.suite import AbstainOptions, AbstainSuite

__all__ = ["AbstainCase", "AbstainOptions", "AbstainSuite"]
