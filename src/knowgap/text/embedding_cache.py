"""Embeddings kept on disk, so a knowledge base is embedded once per machine, not once per run.

One SQLite file per embedding model and version in ``KNOWGAP_HOME/embeddings/`` (``KNOWGAP_EMBED_CACHE`` names
another folder, or ``off`` turns the disk layer off). A row is keyed by the sha256 of the embedding kind and the
text, and holds the float32 vector exactly as the model returned it, so a vector read back is the vector the
model would give (retrieval order does not change with the cache). Several processes may share a file (SQLite
locking; a row is only ever written with the vector its text gives, and a stored row of the wrong size, or not
of unit length as every vector of the model is, is computed and written again: SQLite keeps no checksum, and a page
overwritten by a disk fault reads back as other numbers). The cache must never cost a run: a file that cannot be
opened, read or written (random bytes, a damaged page, a full disk) is reported once as a warning naming the file
and the embedder goes on without it.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import threading
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from knowgap.paths import home

ENV = "KNOWGAP_EMBED_CACHE"
OFF = {"off", "0", "false", "no"}
_CHUNK = 500  # keys per SELECT (SQLite's default limit on variables is 32766; small chunks keep queries short)


def unit_rows(rows: np.ndarray) -> bool:
    """Whether every row of ``rows`` (one vector, or one per row) is finite and of unit length, as every vector of
    the model is: a vector read back from a file that is not (a damaged page, a damaged seed) is not the model's."""
    with np.errstate(all="ignore"):  # a garbled row may hold NaN or inf
        wide = np.atleast_2d(rows).astype(np.float64)
        norms = np.einsum("ij,ij->i", wide, wide)
    return bool(np.all(np.abs(norms - 1.0) < 1e-3))  # NaN and inf fail too


class EmbeddingCacheWarning(UserWarning):
    """The embedding cache file could not be used; embeddings are computed as without it."""


def folder() -> Path | None:
    """Where embedding caches live, or None when ``KNOWGAP_EMBED_CACHE`` turns them off."""
    value = os.environ.get(ENV, "").strip()
    if value.lower() in OFF:
        return None
    return Path(value).expanduser() if value else home() / "embeddings"


def path_for(model_id: str, where: Path) -> Path:
    """The cache file of one embedding model in ``where``."""
    return where / (re.sub(r"[^A-Za-z0-9._-]+", "_", model_id) + ".sqlite")


def key(kind: str, text: str) -> bytes:
    return hashlib.sha256(f"{kind}\0{text}".encode()).digest()[:16]


class EmbeddingCache:
    """The vectors of one embedding model (``model_id`` names the model and its version)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vec BLOB NOT NULL) WITHOUT ROWID")

    @classmethod
    def for_model(cls, model_id: str, where: Path) -> EmbeddingCache:
        return cls(path_for(model_id, where))

    def get(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start:start + _CHUNK]
                rows = self._db.execute(f"SELECT key, vec FROM vectors WHERE key IN ({','.join('?' * len(chunk))})",
                                        chunk).fetchall()
                found.update((k, np.frombuffer(v, dtype=np.float32)) for k, v in rows)
        return found

    def put(self, rows: Iterable[tuple[bytes, np.ndarray]]) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany("INSERT OR REPLACE INTO vectors (key, vec) VALUES (?, ?)",
                                     [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in rows])
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


def warn_unusable(path: Path, exc: BaseException) -> None:
    warnings.warn(f"embedding cache {path} cannot be used ({type(exc).__name__}: {exc}); embeddings are computed "
                  f"without it (set {ENV}=off to silence this, or delete the file)", EmbeddingCacheWarning,
                  stacklevel=3)


def stats(where: Path | None = None) -> list[dict[str, object]]:
    """Each embedding cache file: path, vectors, bytes."""
    where = where if where is not None else folder()
    if where is None or not where.is_dir():
        return []
    out: list[dict[str, object]] = []
    for path in sorted(where.glob("*.sqlite")):
        try:
            cache = EmbeddingCache(path)
            try:
                count = len(cache)
            finally:
                cache.close()
        except sqlite3.Error:
            count = -1
        size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
        out.append({"path": str(path), "vectors": count, "bytes": size})
    return out


def clear(where: Path | None = None) -> int:
    """Delete every embedding cache file; returns how many files (a -wal/-shm companion counts with its file)."""
    where = where if where is not None else folder()
    if where is None or not where.is_dir():
        return 0
    removed = 0
    for path in sorted(where.glob("*.sqlite")):
        for part in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            part.unlink(missing_ok=True)
        removed += 1
    return removed
