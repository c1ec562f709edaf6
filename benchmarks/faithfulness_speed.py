"""Offline faithfulness judge: news-length summaries per second, against the checker it replaced, same run.

    .venv/bin/python benchmarks/faithfulness_speed.py [--data /work/shared/data/faithfulness] [--docs 6]
                                                      [--json OUT]

Input: the SummEdits news sample (``summedits/summedits_news_sample250.json``: news articles of about 400-900
words, about ten summaries of each), the first ``--docs`` articles. Two workloads:

- ``shared sources``: every summary of each article (an article's analysis and embeddings are reused);
- ``one per source``: one summary per article (nothing to reuse: the worst case).

Old checker: ``knowgap/judges/faithfulness.py`` as it was before issue 15 (read from git at commit
``BEFORE``), which embedded every source unit and claim with e5; it gets its own fresh e5 embedder (loaded
before timing), so its per-text memo starts empty like the new checker's source cache. New checker: the
shipped ``OfflineFaithfulness``. Both score the same pairs, one after the other, each timed with
``time.perf_counter``. Target: >= 5 summaries/s for the new checker in both workloads.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _shared import print_table, write_json

from knowgap.judges.faithfulness import OfflineFaithfulness
from knowgap.judges.faithfulness_data import DEFAULT_DATA
from knowgap.text.embed import E5Embedder

BEFORE = "a752ea9"
"""The last commit with the checker that embedded every source unit (main before issue 15)."""
TARGET = 5.0
REPO = Path(__file__).resolve().parents[1]


def old_checker() -> Any | None:
    """The checker at ``BEFORE``, imported from git; None when git or the commit is not available."""
    try:
        source = subprocess.run(["git", "show", f"{BEFORE}:src/knowgap/judges/faithfulness.py"], cwd=REPO,
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    path = Path(tempfile.mkdtemp()) / "faithfulness_before.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("faithfulness_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the module's annotations through it
    spec.loader.exec_module(module)
    embedder = E5Embedder()
    embedder.embed(["warm up"], "query")
    return module.OfflineFaithfulness(embedder=embedder)


def pairs(data: Path, docs: int) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    rows = json.loads((data / "summedits" / "summedits_news_sample250.json").read_text(encoding="utf-8"))
    by_doc: dict[str, list[str]] = {}
    for row in rows:
        if row["doc"] in by_doc or len(by_doc) < docs:
            by_doc.setdefault(row["doc"], []).append(row["summary"])
    shared = [(doc, s) for doc, summaries in by_doc.items() for s in summaries]
    single = [(doc, summaries[0]) for doc, summaries in by_doc.items()]
    return shared, single


def rate(check: Callable[[str, str], Any], work: list[tuple[str, str]]) -> float:
    started = time.perf_counter()
    for source, summary in work:
        check(source, summary)
    return len(work) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--docs", type=int, default=6)
    parser.add_argument("--json")
    args = parser.parse_args()
    shared, single = pairs(args.data, args.docs)
    old = old_checker()
    if old is None:
        print(f"git commit {BEFORE} not available: the old checker is not measured", file=sys.stderr)
    rows, out = [], {}
    for name, work in (("shared sources", shared), ("one per source", single)):
        new = OfflineFaithfulness()  # fresh: empty source cache
        new.check("warm up.", "warm up")
        new_rate = rate(new.check, work)
        old_rate = rate(old.check, work) if old is not None else None
        if old is not None:
            old = old_checker()  # fresh embedder memo for the next workload
        rows.append([name, len(work), new_rate, old_rate if old_rate is not None else "n/a",
                     f"{new_rate / old_rate:.1f}x" if old_rate else "n/a",
                     "met" if new_rate >= TARGET else "NOT met"])
        out[name] = {"summaries": len(work), "new_per_s": new_rate, "old_per_s": old_rate}
    print_table(["workload", "summaries", "new /s", "old /s", "new / old", f"target >= {TARGET:g}/s"], rows,
                title=f"offline faithfulness, SummEdits news, {args.docs} articles")
    write_json(args.json, {"docs": args.docs, "results": out})


if __name__ == "__main__":
    main()
