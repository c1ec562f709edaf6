"""Write an installed distribution by hand (``NAME-VERSION.dist-info`` with its entry points, beside its
modules), the layout pip leaves in a target folder: what importlib.metadata reads to find plugins."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def write_package(root: Path, dist: str, modules: Mapping[str, str],
                  entry_points: Mapping[str, Mapping[str, str]], version: str = "1.0") -> Path:
    """``modules``: module name -> source; ``entry_points``: group -> {name: "module:attribute"}."""
    root.mkdir(parents=True, exist_ok=True)
    for name, source in modules.items():
        (root / f"{name}.py").write_text(source, encoding="utf-8")
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "".join(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
                for group, eps in entry_points.items()), encoding="utf-8")
    return root
