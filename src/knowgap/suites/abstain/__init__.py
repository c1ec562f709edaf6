"""``abstain``: KnowOrNot-style leave-one-out abstention. See :mod:`.suite`."""

from knowgap.suites.abstain.suite import AbstainCase, AbstainOptions, AbstainSuite

__all__ = ["AbstainCase", "AbstainOptions", "AbstainSuite"]
