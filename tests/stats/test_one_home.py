"""knowgap.stats is the one home of the statistics: no module elsewhere (the package, experiments, benchmarks)
reads percentiles off draws itself (numpy's or statistics' quantile functions, or the 2.5% / 97.5% positions by
hand) or defines a function of the stats package's name (a second Wilson, bootstrap, Rogan-Gladen or McNemar)."""

from __future__ import annotations

import ast
from pathlib import Path

import knowgap.stats
from tests.helpers import REPO

ROOTS = [REPO / "src" / "knowgap", REPO / "experiments", REPO / "benchmarks"]
STATS = REPO / "src" / "knowgap" / "stats"
QUANTILE_CALLS = {"quantile", "quantiles", "percentile", "nanquantile", "nanpercentile"}
HAND_PICKED = {0.025, 0.975}
DESCRIPTIVE = {("src/knowgap/suites/extract/calibration.py", "_quantiles")}
"""Quantiles that are no interval: the p10-p90 of the calibration report's score distributions."""


def _offences(path: Path, rel: str) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
    out = []

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name in knowgap.stats.__all__:
                out.append(f"{rel}:{node.lineno} defines {node.name}, a function of knowgap.stats")
            function = node.name
        if (rel, function) not in DESCRIPTIVE:
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in QUANTILE_CALLS):
                out.append(f"{rel}:{node.lineno} calls {node.func.attr}()")
            if isinstance(node, ast.Constant) and isinstance(node.value, float) and node.value in HAND_PICKED:
                out.append(f"{rel}:{node.lineno} picks the {node.value} position by hand")
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, "")
    return out


def test_no_module_outside_the_stats_package_computes_an_interval_of_its_own() -> None:
    files = [p for root in ROOTS for p in sorted(root.rglob("*.py")) if STATS not in p.parents]
    assert len(files) > 200
    offences = [o for path in files for o in _offences(path, path.relative_to(REPO).as_posix())]
    assert offences == [], "\n".join(offences)


def test_the_check_finds_a_hand_made_interval(tmp_path: Path) -> None:
    bad = tmp_path / "hand_made.py"
    bad.write_text("import numpy as np\n\ndef wilson(k, n):\n    return k / n\n\n"
                   "def ci(draws):\n    d = sorted(draws)\n    return d[int(0.025 * len(d))], np.quantile(d, 0.5)\n",
                   encoding="utf-8")
    found = _offences(bad, "src/knowgap/report/hand_made.py")
    assert [o.split(" ", 1)[1] for o in found] == ["defines wilson, a function of knowgap.stats",
                                                   "picks the 0.025 position by hand", "calls quantile()"]
