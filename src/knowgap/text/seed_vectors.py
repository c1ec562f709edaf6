"""Vectors shipped with the package: read-only seeds of the embedding cache.

A seed is one ``.npz`` file holding ``model_id`` (the embedding model and version it was made with, as
``E5Embedder.model_id`` says), ``keys`` (uint8, one row of 16 bytes per vector: :func:`embedding_cache.key` of the
kind and the text) and ``rows`` (float32, one L2-normalised vector per key, exactly as the model returned it). A
suite that ships a knowledge base ships its passages' vectors this way (:func:`register`, e.g. abstain's PolicyBench:
``knowgap.suites.abstain.passage_vectors`` builds it), so no user computes them on a first run.

``E5Embedder`` reads the registered seeds after the user's disk cache misses and before it computes a vector; it
writes nothing to them. Whatever turns the disk cache off turns the seeds off too (``KNOWGAP_EMBED_CACHE=off``,
``E5Embedder(disk=False)``), so compute can still be measured. A seed of another model id is not read. A seed that
cannot be read or is not what it must be (wrong arrays, shapes or dtypes, a row not finite or not of unit length) is
not read either, with one warning naming the file: its vectors are computed, never taken from a damaged file.
"""

from __future__ import annotations

import os
import threading
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from knowgap.text.embedding_cache import EmbeddingCacheWarning, unit_rows

KEY_BYTES = 16
"""The size of an embedding-cache key (:func:`knowgap.text.embedding_cache.key`)."""


class SeedVectorsWarning(EmbeddingCacheWarning):
    """A shipped seed of vectors could not be used; its vectors are computed as without it."""


class DamagedSeed(ValueError):
    """A seed file that cannot be read or does not hold what a seed must (the message says what)."""


_registered: list[Path] = []
_loaded: dict[tuple[Path, str], tuple[tuple[int, int], dict[bytes, np.ndarray]]] = {}
"""(seed, model id) -> (the file's (mtime_ns, size) when read, its vectors); no vectors for a damaged seed."""
_lock = threading.Lock()


def register(path: Path) -> None:
    """Make every ``E5Embedder`` of this process read the seed at ``path`` (once; a missing file is skipped)."""
    with _lock:
        if path not in _registered:
            _registered.append(path)


def registered() -> tuple[Path, ...]:
    with _lock:
        return tuple(_registered)


def load(path: Path, model_id: str, dim: int) -> dict[bytes, np.ndarray]:
    """The vectors of the seed at ``path`` by key: none when it was made with another model id; raises
    :class:`DamagedSeed` when the file is not a sound seed of ``dim``-sized vectors."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in ("model_id", "keys", "rows")}
    except KeyError as exc:
        raise DamagedSeed(f"it lacks the array {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - whatever a damaged zip, npy header or member raises: never a crash
        raise DamagedSeed(f"it cannot be read ({type(exc).__name__}: {exc})") from exc
    made_with, keys, rows = arrays["model_id"], arrays["keys"], arrays["rows"]
    if made_with.shape != () or made_with.dtype.kind != "U":
        raise DamagedSeed(f"model_id is not a string (dtype {made_with.dtype}, shape {made_with.shape})")
    if keys.dtype != np.uint8 or keys.ndim != 2 or keys.shape[1] != KEY_BYTES:
        raise DamagedSeed(f"keys must be uint8 of shape (n, {KEY_BYTES}), not {keys.dtype} {keys.shape}")
    if rows.dtype != np.float32 or rows.shape != (len(keys), dim):
        raise DamagedSeed(f"rows must be float32 of shape ({len(keys)}, {dim}), not {rows.dtype} {rows.shape}")
    if not unit_rows(rows):
        raise DamagedSeed("a row is not finite or not of unit length")
    if str(made_with) != model_id:
        return {}
    return {bytes(k): row for k, row in zip(keys, rows, strict=True)}


def _vectors(path: Path, model_id: str, dim: int) -> dict[bytes, np.ndarray]:
    """The seed's vectors, read once per process (again when the file changes); a damaged seed warns once and
    gives none."""
    try:
        stat = path.stat()
    except OSError:
        return {}  # not shipped (a source tree without it): nothing to read, nothing to say
    signature = (stat.st_mtime_ns, stat.st_size)
    with _lock:
        kept = _loaded.get((path, model_id))
        if kept is not None and kept[0] == signature:
            return kept[1]
        try:
            vectors = load(path, model_id, dim)
        except DamagedSeed as exc:
            warnings.warn(f"shipped embedding vectors {path} are not used: {exc}; those embeddings are computed "
                          f"instead (reinstall knowgap to restore the file)", SeedVectorsWarning, stacklevel=5)
            vectors = {}
        _loaded[(path, model_id)] = (signature, vectors)
        return vectors


def lookup(keys: Sequence[bytes], model_id: str, dim: int) -> dict[bytes, np.ndarray]:
    """The vectors the registered seeds of ``model_id`` hold for ``keys``."""
    found: dict[bytes, np.ndarray] = {}
    for path in registered():
        vectors = _vectors(path, model_id, dim)
        if vectors:
            found.update((k, vectors[k]) for k in keys if k in vectors and k not in found)
    return found


def write(path: Path, model_id: str, vectors: Mapping[bytes, np.ndarray]) -> None:
    """Write a seed (keys in sorted order, fixed zip times: the same vectors give the same bytes), atomically."""
    order = sorted(vectors)
    if any(len(k) != KEY_BYTES for k in order):
        raise ValueError(f"every key must be {KEY_BYTES} bytes")
    arrays = {"model_id": np.array(model_id),
              "keys": np.frombuffer(b"".join(order), dtype=np.uint8).reshape(len(order), KEY_BYTES),
              "rows": np.stack([np.asarray(vectors[k], dtype=np.float32) for k in order])}
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, array in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(info, "w") as member:
                np.lib.format.write_array(member, array, allow_pickle=False)
    os.replace(partial, path)
