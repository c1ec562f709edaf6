"""The injection package serves every suite in general terms: no code of it names a built-in suite (docstrings may
give one as an example). The library's generator is the exception that proves it: it writes which suites the
shipped attacks are for, as data (``"suites": ["extract"]``)."""

from __future__ import annotations

import ast
from pathlib import Path

from knowgap.suites.registry import BUILTIN
from tests.helpers import REPO

PACKAGE = REPO / "src" / "knowgap" / "injection"
DATA = {"generate.py"}
"""Modules whose strings are the library's data."""
VERBS = {("success.py", "abstain")}
"""A suite's name used as a word: what the clean run must do for the behaviour check ("abstain")."""


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
        if isinstance(node, ast.Module | ast.ClassDef):  # an attribute's docstring: a string after an assignment
            for before, after in zip(node.body, node.body[1:], strict=False):
                if isinstance(before, ast.Assign | ast.AnnAssign) and isinstance(after, ast.Expr) \
                        and isinstance(after.value, ast.Constant):
                    out.add(id(after.value))
    return out


def suite_names_in_code(path: Path) -> list[str]:
    """``file:line: 'string'`` of each string constant (docstrings left out) that holds a built-in suite's name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    return [f"{path.name}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
            and any(name in node.value.split() or node.value == name for name in BUILTIN)]


def test_no_code_of_the_injection_package_names_a_suite() -> None:
    modules = [p for p in sorted(PACKAGE.glob("*.py")) if p.name not in DATA]
    assert len(modules) > 8
    assert not [hit for p in modules for hit in suite_names_in_code(p)
                if (p.name, hit.split(": ", 1)[1].strip("'")) not in VERBS]


def test_the_scan_finds_a_suite_name_in_code(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""About extract."""\nSUITE = "extract"\n"""The suite."""\n\n\ndef f() -> str:\n'
                      '    return "only extract reads it"\n', encoding="utf-8")
    assert sorted(suite_names_in_code(module)) == ["m.py:2: 'extract'", "m.py:7: 'only extract reads it'"]
