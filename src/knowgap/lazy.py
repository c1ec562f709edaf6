"""Package exports imported when first used: a package's ``__init__`` names what it exports and from which
module, and importing the package imports none of them. So ``knowgap --help``, which imports every command
module (and with it each package's ``__init__``), does not import every suite, report writer and label tool.

A package's ``__init__``::

    from typing import TYPE_CHECKING

    from knowgap.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(__name__, {"knowgap.report.html": ("write_html",)})
    __all__ = ["write_html"]

    if TYPE_CHECKING:  # what type checkers see; at run time the names come on first use
        from knowgap.report.html import write_html
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, Iterable[str]]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module-level ``__getattr__`` and ``__dir__`` for ``package`` that import each exported name from its
    module (``exports``: module -> names) on first access and keep it in the package, so later accesses are plain
    lookups. Any other name is an AttributeError, as for a module without this (submodules still import)."""
    module_of = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module '{package}' has no attribute '{name}'")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(module_of))

    return __getattr__, __dir__
