"""Packages export their names on first use (``knowgap.lazy``), so importing a package, or asking the command
line for help, does not load every suite, report writer and the engine."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from knowgap.lazy import lazy_exports
from tests.helpers import scripted

LAZY_PACKAGES = ["knowgap.suites.starter", "knowgap.suites.abstain", "knowgap.suites.clarify",
                 "knowgap.suites.partial", "knowgap.suites.extract", "knowgap.labels", "knowgap.report",
                 "knowgap.evaluation", "knowgap.casefiles", "knowgap.models"]

HEAVY = ["knowgap.api", "knowgap.engine.runner", "knowgap.engine.cache", "knowgap.report.html",
         "knowgap.labels.agreement",
         *(f"knowgap.suites.{name}.suite" for name in ("starter", "abstain", "clarify", "partial", "extract")),
         "numpy"]
"""Modules `knowgap --help` has no use for."""


def _loaded_after(code: str) -> tuple[list[str], Any]:
    """What a fresh interpreter holds after ``code``: every module loaded, and what ``code`` left in ``out``."""
    script = f"import json, sys\nout = None\n{code}\nprint(json.dumps({{'modules': sorted(sys.modules), 'out': out}}))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    got = json.loads(done.stdout.splitlines()[-1])
    return got["modules"], got["out"]


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_importing_a_package_loads_none_of_its_exports_until_one_is_used(package: str) -> None:
    modules, out = _loaded_after(f"import {package} as p\n"
                        "loaded_before = sorted(m for m in sys.modules if m.startswith(p.__name__ + '.'))\n"
                        "name = sorted(p.__all__)[0]\n"
                        "value = getattr(p, name)\n"
                        "out = [loaded_before, name, getattr(value, '__module__', None)]")
    loaded_before, _name, module = out
    assert loaded_before == []
    assert module is None or module in modules


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_exported_name_is_its_modules_object(package: str) -> None:
    p = importlib.import_module(package)
    assert p.__all__, package
    for name in p.__all__:
        value = getattr(p, name)
        assert name in dir(p)
        owners = [m for m in list(sys.modules.values()) if getattr(m, "__name__", "").startswith("knowgap")
                  and m is not p and getattr(m, name, None) is value]
        assert owners, f"{package}.{name} is no module's object"
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        p.no_such_name  # noqa: B018


def test_help_loads_no_engine_suite_or_report_writer() -> None:
    modules, out = _loaded_after("sys.argv = ['knowgap', '--help']\n"
                        "from knowgap.cli import main\n"
                        "try:\n    main()\nexcept SystemExit as exc:\n    out = exc.code\n")
    assert out == 0
    assert [m for m in HEAVY if m in modules] == []


def test_a_name_is_kept_after_its_first_use() -> None:
    module = types.ModuleType("knowgap_lazy_probe")
    sys.modules[module.__name__] = module
    try:
        module.__getattr__ = lazy_exports(module.__name__, {"json": ("dumps",)})[0]  # type: ignore[method-assign]
        assert "dumps" not in vars(module)
        assert module.dumps is json.dumps
        assert vars(module)["dumps"] is json.dumps  # the next access is a plain lookup
    finally:
        del sys.modules[module.__name__]


def test_a_run_of_one_suite_loads_no_other_suite(tmp_path: Path) -> None:
    spec = scripted(tmp_path, "I do not know.")
    modules, out = _loaded_after(
        f"sys.argv = ['knowgap', 'run', 'starter', '-m', {spec!r}, '--sample', '2', '--runs-dir', "
        f"{str(tmp_path / 'runs')!r}, '-q']\n"
        "from knowgap.cli import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    out = exc.code\n")
    assert out in (0, None)
    assert "knowgap.suites.starter.suite" in modules
    other = [m for m in modules if m.startswith("knowgap.suites.") and m.count(".") >= 3  # not the packages
             and m.split(".")[2] != "starter" and not m.endswith(".commands")]  # the CLI registers every commands
    assert other == []
