"""Where knowgap keeps its files: KNOWGAP_HOME (cache, assembled model packs) and the runs folder."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def home() -> Path:
    """KNOWGAP_HOME, or the user cache dir (e.g. ~/.cache/knowgap)."""
    env = os.environ.get("KNOWGAP_HOME")
    path = Path(env).expanduser() if env else Path(platformdirs.user_cache_dir("knowgap"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def runs_dir(override: str | Path | None = None) -> Path:
    """The folder holding ``<run-id>/`` folders: the argument, KNOWGAP_RUNS, or ./runs."""
    value = override or os.environ.get("KNOWGAP_RUNS") or "runs"
    return Path(value).expanduser()


def cache_path() -> Path:
    return home() / "cache.sqlite"


def models_dir() -> Path:
    path = home() / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path
