"""Plugins: what an installed package adds to knowgap through entry points, found without importing it.

Two entry-point groups are read: ``knowgap.suites`` (a :class:`knowgap.Suite` subclass) and
``knowgap.providers`` (a factory ``(spec, rest) -> ChatModel`` for a model spec prefix). A package declares
them in its ``pyproject.toml``::

    [project.entry-points."knowgap.suites"]
    mysuite = "my_package.suite:MySuite"

knowgap's own suites and providers are declared the same way in its ``pyproject.toml``, and are also listed in
the code (the built-in list), so they are found from a source tree whose entry points were never installed.
Discovery reads names only; a plugin's module is imported when it is used, so ``knowgap --help`` stays fast.
A plugin that cannot be loaded is skipped with one :class:`PluginWarning` naming its package.
"""

from __future__ import annotations

import importlib
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points

from knowgap.errors import KnowgapError

OWN_DISTRIBUTION = "knowgap"


class PluginWarning(UserWarning):
    """A plugin that could not be loaded (it is skipped) or whose name is taken."""


@dataclass(frozen=True)
class Plugin:
    """One named thing a package adds: ``target`` is ``module:attribute``; ``package`` is ``NAME VERSION``
    of the distribution that declared it, None for a built-in."""

    group: str
    name: str
    target: str
    package: str | None = None

    @property
    def origin(self) -> str:
        return "built in" if self.package is None else f"package {self.package}"

    def load(self) -> object:
        """Import the target (any exception of the plugin's own code propagates)."""
        module_name, _, attribute = self.target.partition(":")
        obj: object = importlib.import_module(module_name.strip())
        for part in filter(None, attribute.strip().split(".")):
            obj = getattr(obj, part)
        return obj

    def load_or_raise(self, error: Callable[[str], Exception] = KnowgapError) -> object:
        """The target, imported (:meth:`load`); a package's failure to import is raised as ``error`` with one line
        naming the package (:meth:`problem`), a built-in's propagates whole (it is knowgap's own bug)."""
        try:
            return self.load()
        except Exception as exc:
            if self.package is None:
                raise
            raise error(self.problem(f"could not be loaded ({describe_error(exc)})")) from None

    def problem(self, what: str) -> str:
        """One line saying that this plugin is unusable, naming its package."""
        return f"{self.group} entry point '{self.name}' ({self.target}) of {self.origin}: {what}"


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def discover(group: str, builtin: Mapping[str, str]) -> dict[str, Plugin]:
    """The built-ins (name -> ``module:attribute``) merged with every installed package's entry points of
    ``group``. knowgap's own entry points repeat the built-ins and are skipped; a package's entry point whose
    name is taken is ignored with a warning naming both."""
    found = {name: Plugin(group, name, target) for name, target in builtin.items()}
    for ep in entry_points(group=group):
        dist = ep.dist
        if dist is not None and _normalise(dist.name) == OWN_DISTRIBUTION:
            continue
        package = f"{dist.name} {dist.version}" if dist is not None else "an unknown package"
        plugin = Plugin(group, ep.name, ep.value, package)
        if ep.name in found:
            warn(plugin.problem(f"ignored, the name is already taken by {found[ep.name].origin}"))
            continue
        found[ep.name] = plugin
    return found


def warn(message: str) -> None:
    warnings.warn(message, PluginWarning, stacklevel=3)


def describe_error(exc: BaseException) -> str:
    """``Type: message`` on one line (a plugin's failure is reported, never raised as a traceback)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
