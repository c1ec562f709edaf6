"""Suite registry. A suite registers itself with ``@register``; built-in suites are imported lazily."""

from __future__ import annotations

import importlib

from knowgap.engine.suite import Suite
from knowgap.errors import KnowgapError

_SUITES: dict[str, type[Suite]] = {}
BUILTIN = ("starter", "abstain", "clarify", "partial", "extract")


def register(cls: type[Suite]) -> type[Suite]:
    _SUITES[cls.name] = cls
    return cls


def _load_builtins() -> None:
    for name in BUILTIN:
        if name not in _SUITES:
            importlib.import_module(f"knowgap.suites.{name}")


def available() -> dict[str, type[Suite]]:
    _load_builtins()
    return dict(sorted(_SUITES.items()))


def get_suite(name: str) -> type[Suite]:
    suites = available()
    if name not in suites:
        raise KnowgapError(f"unknown suite '{name}' (available: {', '.join(suites)})")
    return suites[name]


__all__ = ["available", "get_suite", "register"]
