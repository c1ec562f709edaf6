"""``knowgap judge faithfulness FILE``: the offline checker over any JSONL file.

Each row gets ``score`` (0..1, higher = more faithful; null for an empty summary or a refusal) and ``verdict``
(faithful / unfaithful / empty / refusal), in the same order. The output is written to a temporary file and
renamed at the end, so a bad row leaves nothing half-written.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from knowgap.jsonl import file_mode, read_objects
from knowgap.judges.faithfulness import DEFAULT_THRESHOLD, OfflineFaithfulness


def judge_file(path: Path, out: Path, *, source_field: str = "doc", text_field: str = "summary",
               threshold: float = DEFAULT_THRESHOLD, details: bool = False,
               checker: OfflineFaithfulness | None = None,
               progress: Callable[[int, int], None] | None = None) -> Counter[str]:
    """Score every row of ``path`` and write them with ``score`` and ``verdict`` to ``out``; the verdict counts."""
    rows = [row for _, row in read_objects(path, (source_field, text_field))]
    checker = checker or OfflineFaithfulness(threshold=threshold)
    verdicts: Counter[str] = Counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "w", encoding="utf-8") as sink:
            for i, row in enumerate(rows):
                result = checker.check(row[source_field], row[text_field])
                verdicts[result.verdict] += 1
                extra: dict[str, Any] = {"score": result.score, "verdict": result.verdict}
                if details:
                    extra["claims"] = [c.model_dump() for c in result.claims]
                sink.write(json.dumps({**row, **extra}, ensure_ascii=False) + "\n")
                if progress:
                    progress(i + 1, len(rows))
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return verdicts
