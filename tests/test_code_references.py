"""Every reference to knowgap's code made by a string is imported here for real, so a wrong one fails CI instead of
the user's command (``knowgap judge validate NAME --labels`` once resolved a module that did not exist, and a test
that stood a fake module in at that path hid it).

Code is referenced as code: a registry holds objects, and the only ``module:attribute`` strings are entry points,
the built-in lists of the suite and judge registries that repeat knowgap's own pyproject.toml entry points (so a
source tree finds them). The strings: every string literal in src/knowgap that reads as ``knowgap.module`` or
``knowgap.module:attribute`` (the built-in entry points, the command modules, package exports, data packages), the
command modules the CLI imports, the names each package exports on first use, and the entry points in
pyproject.toml; every judge's validator takes the one signature. Logger names and entry-point group names read the
same but name no code; they are told apart by where they stand, not by a list."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
import tomllib
from pathlib import Path

import pytest

from knowgap.judges.judge import Judge
from knowgap.suites import judge_registry
from knowgap.suites import registry as suite_registry
from tests.helpers import REPO

SRC = REPO / "src" / "knowgap"
REFERENCE = re.compile(r"knowgap(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_][\w.]*)?")
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
GROUPS = set(PYPROJECT["project"]["entry-points"])
"""Entry-point group names (``knowgap.suites``, ``knowgap.providers``): names, not code."""


def load(ref: str) -> object:
    """What ``module:attribute`` (or ``module``) names, imported for real."""
    module, _, attribute = ref.partition(":")
    obj: object = importlib.import_module(module)
    for part in filter(None, attribute.split(".")):
        obj = getattr(obj, part)
    return obj


def _logger_names(tree: ast.AST) -> set[int]:
    """ids of the string nodes given to ``logging.getLogger(...)``."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and (
                getattr(node.func, "attr", None) == "getLogger" or getattr(node.func, "id", None) == "getLogger"):
            out.add(id(node.args[0]))
    return out


def string_references() -> dict[str, list[str]]:
    """Every string literal in src/knowgap that names knowgap code -> where it stands (file:line)."""
    found: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        loggers = _logger_names(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and REFERENCE.fullmatch(node.value)
                    and id(node) not in loggers and node.value not in GROUPS):
                found.setdefault(node.value, []).append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


REFERENCES = string_references()


def test_the_scan_finds_the_references_it_is_meant_to() -> None:
    """The scan sees the built-in entry points and the command modules (a scan that found nothing would pass)."""
    assert "knowgap.judges.validation:ABSTENTION" in REFERENCES
    assert "knowgap.suites.starter:StarterSuite" in REFERENCES
    assert "knowgap.labels.judge_commands" in REFERENCES
    assert "knowgap.run" not in REFERENCES and "knowgap.providers" not in REFERENCES  # a logger, a group
    assert len(REFERENCES) > 50


@pytest.mark.parametrize("ref", sorted(REFERENCES))
def test_every_string_reference_in_the_package_imports(ref: str) -> None:
    try:
        load(ref)
    except (ImportError, AttributeError) as exc:
        pytest.fail(f"{ref} (at {', '.join(REFERENCES[ref])}) names nothing: {exc}")


def test_the_only_references_to_attributes_are_entry_points() -> None:
    """A ``module:attribute`` string stands only in a registry's built-in list, and that list is knowgap's own entry
    points of its group in pyproject.toml: no registry of strings that only fail at run time."""
    registries = {"knowgap.suites": suite_registry, "knowgap.judges": judge_registry}
    entry_points = {ref for group in registries for ref in PYPROJECT["project"]["entry-points"][group].values()}
    homes = {str(Path(module.__file__).resolve().relative_to(REPO)) for module in registries.values()}  # type: ignore[arg-type]
    attributes = {ref: places for ref, places in REFERENCES.items() if ":" in ref}
    assert set(attributes) == entry_points
    for ref, places in attributes.items():
        assert {place.rsplit(":", 1)[0] for place in places} <= homes, (ref, places)
    for group, module in registries.items():
        assert PYPROJECT["project"]["entry-points"][group] == module.BUILTIN, group


@pytest.mark.parametrize("judge", judge_registry.judges(), ids=lambda j: j.name)
def test_every_judge_has_a_version_and_a_validator_of_the_one_signature(judge: Judge) -> None:
    assert judge.version()  # imports the module (or loads the judge spec) that holds it
    inspect.signature(judge.validator).bind(None, None, None, None)  # TypeError when it takes another signature


def test_every_command_module_the_cli_imports_exists() -> None:
    from knowgap.cli import COMMAND_MODULES

    for name in COMMAND_MODULES:
        if importlib.util.find_spec(name) is None:  # only a built-in suite may have no commands module
            package = name.removesuffix(".commands")
            assert name.startswith("knowgap.suites.") and importlib.util.find_spec(package), name
        else:
            assert callable(getattr(importlib.import_module(name), "register", None)), name


def test_every_name_a_package_exports_on_first_use_imports() -> None:
    packages = [p.parent for p in SRC.rglob("__init__.py") if "lazy_exports(" in p.read_text(encoding="utf-8")]
    assert len(packages) >= 10
    for folder in packages:
        name = ".".join(folder.relative_to(SRC.parent).parts)
        package = importlib.import_module(name)
        for exported in package.__dir__():
            if not exported.startswith("__"):
                assert getattr(package, exported) is not None, f"{name}.{exported}"


def test_every_entry_point_in_pyproject_imports() -> None:
    points = {f"[project.scripts] {k}": v for k, v in PYPROJECT["project"]["scripts"].items()}
    points |= {f"[project.entry-points.{group!r}] {k}": v
               for group, table in PYPROJECT["project"]["entry-points"].items() for k, v in table.items()}
    assert len(points) >= 14
    for where, ref in points.items():
        assert load(ref) is not None, where
