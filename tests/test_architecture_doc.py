"""docs/architecture.md names every package and module of knowgap, and what it names exists.

A module is named by its dotted name (`knowgap.engine.tally`), by a path ending in its folder and file
(`engine/tally.py`, `extract/attacks.py`), by a dotted name from its package (`judges.geval`), or, in the table
row or list item of its package, by its short name (`knowgap.engine.stopping`, `.stopping_rule`; `knowgap.stats`:
`bootstrap`; the list of the other modules: `knowgap.engine`: `lock`).
A suite's module is named by its file's row in the table of the files every suite has (`specs.py`) or by its
path. ``__init__.py`` and ``__main__.py`` are their package's. The other way round, every `knowgap.X` the page
writes imports (a module, or a name in one) and every path it gives to a file of the repository exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from tests.helpers import REPO

PAGE = REPO / "docs" / "architecture.md"
TEXT = PAGE.read_text(encoding="utf-8")
SRC = REPO / "src" / "knowgap"
CODE = re.findall(r"`([^`\n]+)`", TEXT)
"""Every stretch of inline code on the page."""
SUITES = SRC / "suites"


def _dotted(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def packages() -> list[Path]:
    return sorted(p.parent for p in SRC.rglob("__init__.py"))


def modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if p.name not in ("__init__.py", "__main__.py"))


def _suite_files() -> set[str]:
    """The file names of the table of the files every suite has (its rows' first cells)."""
    section = TEXT.split("Every built-in suite has the same files", 1)[1].split("\n\n", 2)[1]
    return set(re.findall(r"^\| `([\w*]+\.py)` \|", section, re.M))


def _rows() -> dict[str, str]:
    """Each table row whose first cell, and each list item whose start, names a knowgap package or module -> the
    row (a list item with its continuation lines)."""
    out: dict[str, str] = {}
    items = re.findall(r"^- `knowgap[^\n]*(?:\n  [^\n]*)*", TEXT, re.M)
    for line in [*TEXT.splitlines(), *items]:
        if line.startswith("| `knowgap"):
            first = line.split("|")[1]
        elif line.startswith("- `knowgap"):
            first = line.split(":", 1)[0]
        else:
            continue
        for name in re.findall(r"`(knowgap(?:\.\w+)*)`", first):
            out[name] = out.get(name, "") + line
    return out


ROWS = _rows()


def named(path: Path) -> bool:
    """Whether the page names the module or package at ``path`` (see the module)."""
    dotted = _dotted(path)
    parts = dotted.split(".")
    if re.search(rf"`{re.escape(dotted)}(?![\w])", TEXT) or any(c == dotted or c.startswith(dotted + ".")
                                                                 or c.startswith(dotted + ":") for c in CODE):
        return True
    relative = path.relative_to(SRC)
    tail = "/".join(relative.parts[-2:]) if path.is_file() else "/".join(relative.parts) + "/"
    if tail in TEXT:
        return True
    if len(parts) >= 3 and any(re.search(rf"(?<![\w.]){re.escape('.'.join(parts[i:]))}(?![\w])", c)
                               for c in CODE for i in range(1, len(parts) - 1)):
        return True
    parent = ".".join(parts[:-1])
    row = ROWS.get(parent, "") + "".join(row for name, row in ROWS.items() if name.rpartition(".")[0] == parent)
    if re.search(rf"`\.?{parts[-1]}`", row):
        return True
    if path.is_file() and path.parent.parent == SUITES:
        files = _suite_files()
        return path.name in files or any(f.startswith("*") and path.name.endswith(f[1:]) for f in files)
    return False


@pytest.mark.parametrize("path", packages(), ids=lambda p: _dotted(p))
def test_every_package_is_named(path: Path) -> None:
    assert named(path), f"docs/architecture.md does not name the package {_dotted(path)}"


def test_every_module_is_named() -> None:
    missing = [_dotted(p) for p in modules() if not named(p)]
    assert not missing, f"docs/architecture.md names none of {len(missing)} modules: {', '.join(missing)}"


def _resolves(name: str) -> bool:
    parts = name.replace(":", ".").split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attribute in parts[i:]:
                obj = getattr(obj, attribute)
        except AttributeError:
            return False
        return True
    return False


def test_every_dotted_name_on_the_page_imports() -> None:
    names = {m.rstrip(".") for c in CODE for m in re.findall(r"knowgap(?:\.[A-Za-z_]\w*)+(?::\w+)?", c)}
    names -= {"knowgap.suites", "knowgap.providers", "knowgap.judges"} & {n for n in names if n in TEXT}
    assert len(names) > 40
    assert not [n for n in sorted(names) if not _resolves(n)]


def test_every_file_the_page_points_at_exists() -> None:
    """Paths in inline code or links, relative to src/knowgap, the repository or docs/ (``NAME`` and ``*`` in a
    path are placeholders)."""
    paths = {p for c in CODE for p in re.findall(r"[\w./*-]+/[\w.*-]+\.(?:py|md|yaml|jsonl|toml)\b", c)}
    paths |= set(re.findall(r"\]\((\.\./[^)#\s]+)", TEXT))
    assert len(paths) > 40
    missing = []
    for p in sorted(paths):
        if "NAME" in p or "*" in p or "MODULE" in p or "THING" in p or p.startswith("runs/"):
            continue
        bases = [SRC, REPO, REPO / "docs", SUITES, REPO / "src"]
        if not any((base / p).exists() for base in bases) and not list(SRC.rglob(p)) and not list(
                (REPO / "examples").rglob(p)):
            missing.append(p)
    assert not missing, f"docs/architecture.md points at files that do not exist: {missing}"


def test_the_independence_contract_the_page_describes_lists_every_builtin_suite() -> None:
    """"No suite imports another" holds for the suites pyproject.toml's contract lists: every built-in one."""
    import tomllib

    from knowgap.suites.registry import BUILTIN

    contracts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    [suites] = [c for c in contracts["contracts"] if c["id"] == "suites"]
    assert sorted(suites["modules"]) == sorted(f"knowgap.suites.{name}" for name in BUILTIN)
    assert "No suite imports another" in TEXT or "no suite imports another" in TEXT
