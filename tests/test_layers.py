"""The layers point one way: `lint-imports` checks the import-linter contracts in pyproject.toml (layers
cli > web > api > report > suites > judges > engine > models, no suite imports another, no cycles)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

pytest.importorskip("importlinter", reason="import-linter is not installed (it is in the dev extras: "
                                           "pip install -e '.[dev]')")



def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the package under ``root/src`` with ``root/pyproject.toml``'s contracts."""
    path = os.pathsep.join(p for p in (str(root / "src"), os.environ.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()",
                           "--no-cache"], cwd=root, env={**os.environ, "PYTHONPATH": path},
                          capture_output=True, text=True, timeout=120, check=False)


def test_the_package_keeps_every_import_contract() -> None:
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def _sources_copy(tmp_path: Path) -> Path:
    """The package's Python files and the contracts, copied to ``tmp_path`` (data files left out)."""
    def data_files(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if not n.endswith(".py") and not (Path(folder) / n).is_dir()]

    shutil.copytree(REPO / "src" / "knowgap", tmp_path / "src" / "knowgap", ignore=data_files)
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


@pytest.mark.parametrize(("module", "line", "broken"), [
    ("engine/tally.py", "from knowgap.suites import get_suite",
     "knowgap.engine is not allowed to import knowgap.suites"),
    ("stats/bootstrap.py", "from knowgap.engine.records import MetricValue",
     "knowgap.stats is not allowed to import knowgap.engine"),
    ("stats/proportions.py", "from knowgap.errors import KnowgapError",
     "knowgap.stats is not allowed to import knowgap.errors"),
    ("engine/store.py", "from knowgap.report.markdown import write_report",
     "knowgap.engine is not allowed to import knowgap.report"),
    ("models/base.py", "from knowgap.engine.records import RunConfig",
     "knowgap.models is not allowed to import knowgap.engine"),
    ("suites/starter/suite.py", "from knowgap.suites.abstain.dataset import load_kb",
     "knowgap.suites.starter is not allowed to import knowgap.suites.abstain"),
    ("suites/partial/transforms.py", "from knowgap.suites.partial.view import Secret",
     "No cycles are allowed in knowgap.suites.partial"),
])
def test_an_import_the_wrong_way_breaks_a_contract(tmp_path: Path, module: str, line: str, broken: str) -> None:
    root = _sources_copy(tmp_path)
    path = root / "src" / "knowgap" / module
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}  # noqa\n", encoding="utf-8")
    result = lint_imports(root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert broken in " ".join(result.stdout.split()), result.stdout
