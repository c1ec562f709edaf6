"""Which suites exist: the built-in ones, every installed package's ``knowgap.suites`` entry points, and
classes registered in Python with :func:`register`.

Names are known without importing a suite (:func:`suite_names`); a suite's module is imported when the suite
is used (:func:`get_suite`) or when all are listed (:func:`available`). A plugin suite that cannot be loaded is
left out of :func:`available` with one :class:`knowgap.plugins.PluginWarning` naming its package; asked for by
name, it is a :class:`KnowgapError` saying the same.
"""

from __future__ import annotations

from knowgap.engine.suite import Suite
from knowgap.errors import KnowgapError
from knowgap.plugins import Plugin, discover, warn

ENTRY_POINTS = "knowgap.suites"
BUILTIN: dict[str, str] = {
    "starter": "knowgap.suites.starter:StarterSuite",
    "abstain": "knowgap.suites.abstain:AbstainSuite",
    "clarify": "knowgap.suites.clarify:ClarifySuite",
    "partial": "knowgap.suites.partial:PartialSuite",
    "extract": "knowgap.suites.extract:ExtractSuite",
}
"""The built-in suites (also declared as ``knowgap.suites`` entry points in knowgap's pyproject.toml)."""

_SUITES: dict[str, type[Suite]] = {}


def register(cls: type[Suite]) -> type[Suite]:
    """Make a :class:`Suite` subclass runnable by its ``name`` (a class decorator)."""
    _SUITES[cls.name] = cls
    return cls


def plugins() -> dict[str, Plugin]:
    """Every discovered suite by name, not imported."""
    return discover(ENTRY_POINTS, BUILTIN)


def suite_names() -> list[str]:
    """Every suite's name, sorted, without importing any suite."""
    return sorted(set(plugins()) | set(_SUITES))


def _load(plugin: Plugin) -> type[Suite]:
    """The plugin's Suite class; KnowgapError naming the package when it cannot be used."""
    if plugin.name in _SUITES:  # imported before (its module registered it) or registered in Python
        return _SUITES[plugin.name]
    obj = plugin.load_or_raise()
    if not (isinstance(obj, type) and issubclass(obj, Suite)):
        raise KnowgapError(plugin.problem("does not name a knowgap Suite subclass"))
    if getattr(obj, "name", None) != plugin.name:
        raise KnowgapError(plugin.problem(f"names a suite called '{getattr(obj, 'name', None)}', "
                                          f"not '{plugin.name}'"))
    _SUITES[plugin.name] = obj
    return obj


def available() -> dict[str, type[Suite]]:
    """Every usable suite by name, sorted; a plugin that cannot be loaded is skipped with a warning."""
    suites = dict(_SUITES)
    for name, plugin in plugins().items():
        try:
            suites[name] = _load(plugin)
        except KnowgapError as exc:
            warn(f"{exc}; skipped")
    return dict(sorted(suites.items()))


def get_suite(name: str) -> type[Suite]:
    """The suite ``name``, importing only its own module."""
    found = plugins()
    if name in found:
        return _load(found[name])
    if name in _SUITES:
        return _SUITES[name]
    raise KnowgapError(f"unknown suite '{name}' (available: {', '.join(suite_names())})")


def origin(name: str) -> str:
    """Where the suite ``name`` comes from: built in, a package (name and version), or Python code."""
    plugin = plugins().get(name)
    if plugin is not None:
        return plugin.origin
    cls = _SUITES.get(name)
    return f"registered in Python by {cls.__module__}" if cls is not None else "unknown"
