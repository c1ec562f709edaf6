import numpy as np
import pytest

from knowgap.text.embed import default_embedder, similarity


@pytest.mark.slow
def test_e5_embeddings_rank_related_texts_first_across_languages() -> None:
    emb = default_embedder()
    q = emb.embed(["公司违法解除劳动合同，员工能拿多少赔偿？"], "query")
    docs = emb.embed(["用人单位违法解除劳动合同的，应当按经济补偿标准的二倍支付赔偿金。",
                      "Unlawful dismissal entitles the employee to twice the statutory severance.",
                      "今天天气很好，适合去公园散步。"], "passage")
    assert docs.shape == (3, 384)
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-3)
    scores = (docs @ q.T).ravel()
    assert scores[0] > scores[2] and scores[1] > scores[2]


@pytest.mark.slow
def test_similarity_is_symmetric_and_highest_for_paraphrase() -> None:
    a, b = "The refund is paid within 14 days.", "Refunds arrive within two weeks."
    assert abs(similarity(a, b) - similarity(b, a)) < 1e-5
    assert similarity(a, b) > similarity(a, "The museum opens at nine.")
