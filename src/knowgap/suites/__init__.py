"""Suites: the contract (``Suite`` and its records) and the registry (built-in, entry-point and registered suites;
see :mod:`knowgap.suites.registry`)."""

from __future__ import annotations

from knowgap.engine.suite import (
    Case,
    Configuration,
    JudgeUse,
    Suite,
    SuiteOptions,
    Trial,
    TrialContext,
    TrialResult,
)
from knowgap.suites.registry import BUILTIN, available, get_suite, origin, register, suite_names

__all__ = ["Case", "Configuration", "JudgeUse", "Suite", "SuiteOptions", "Trial", "TrialContext", "TrialResult",
           "BUILTIN", "available", "get_suite", "origin", "register", "suite_names"]
