"""Factuality tiers for every row of a JSONL file (``knowgap judge factuality``), by one of three judges:

- ``offline`` (default): the learned offline judge, :mod:`knowgap.judges.factuality`;
- ``approximate``: the first hand-set approximation, :mod:`knowgap.judges.factuality_approximate` (a baseline);
- any model spec: the LLM judge, spec ``judges/data/factuality.yaml``, through the model gateway.

Every row gets ``tier`` (tier_1 / tier_2 / tier_3, or null when an LLM judge's reply could not be parsed, with
``tier_parse_failure``), ``acceptable`` (tier 1 or 2), ``score`` (0..1, P(acceptable); null for the LLM
judge), ``tier_method`` and ``tier_version``. A bad line or a missing field is an error naming file, line and
field before anything is written; the output is written whole at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from knowgap.jsonl import read_objects, write_jsonl
from knowgap.models.structured import ParseFailure


class TierResult(BaseModel):
    tier: str | None
    acceptable: bool | None
    score: float | None
    method: str
    version: str
    parse_failure: str | None = None


def _offline(rows: list[dict[str, Any]], fields: tuple[str, str, str | None],
             progress: Callable[[int], None] | None) -> list[TierResult]:
    from knowgap.judges.factuality import OfflineFactuality
    from knowgap.judges.factuality_features import FactualityRow

    text, expected, question = fields
    judge = OfflineFactuality()
    verdicts = judge.judge([FactualityRow(str(r[question]) if question else "", r[expected], r[text]) for r in rows],
                           progress=progress)
    return [TierResult(tier=v.tier, acceptable=v.acceptable, score=v.score, method="offline", version=v.version)
            for v in verdicts]


def _approximate(rows: list[dict[str, Any]], fields: tuple[str, str, str | None],
                 progress: Callable[[int], None] | None) -> list[TierResult]:
    from knowgap.judges.factuality_approximate import approximate_tiers
    from knowgap.text.embed import default_embedder

    text, expected, question = fields
    verdicts = approximate_tiers([r[text] for r in rows], [r[expected] for r in rows],
                                 [r[question] if question else "" for r in rows], default_embedder(),
                                 progress=progress)
    return [TierResult(tier=v.tier, acceptable=v.tier != "tier_3", score=None, method="approximate",
                       version="approximate") for v in verdicts]


def _llm(model: str, rows: list[dict[str, Any]], fields: tuple[str, str, str | None],
         progress: Callable[[int], None] | None) -> list[TierResult]:
    from knowgap.judges.spec import load_spec
    from knowgap.judges.validation import spec_outcomes

    text, expected, question = fields
    version = load_spec("factuality").version
    records = [{"question": str(r[question]) if question else "", "expected_answer": r[expected],
                "response": r[text]} for r in rows]
    out = []
    for outcome in spec_outcomes(model, "factuality", records, progress=progress):
        if isinstance(outcome, ParseFailure):
            out.append(TierResult(tier=None, acceptable=None, score=None, method=f"llm:{model}", version=version,
                                  parse_failure=outcome.reason))
        else:
            out.append(TierResult(tier=outcome, acceptable=outcome != "tier_3", score=None, method=f"llm:{model}",
                                  version=version))
    return out


def judge_factuality_file(path: str | Path, *, text_field: str = "response", expected_field: str = "expected_answer",
                          question_field: str | None = None, judge: str = "offline", out: str | Path | None = None,
                          progress: Callable[[int], None] | None = None
                          ) -> tuple[list[dict[str, Any]], list[TierResult]]:
    """Tier every row of ``path`` by ``judge`` (offline, approximate, or a model spec); write the rows with the
    verdict's fields to ``out`` (same order) when given."""
    fields = (text_field, expected_field, question_field)
    rows = [row for _, row in read_objects(path, [f for f in fields if f])]
    if judge == "offline":
        results = _offline(rows, fields, progress)
    elif judge == "approximate":
        results = _approximate(rows, fields, progress)
    else:
        results = _llm(judge, rows, fields, progress)
    if out is not None:
        write_jsonl(out, [{**row, "tier": r.tier, "acceptable": r.acceptable, "score": r.score,
                           "tier_method": r.method, "tier_version": r.version,
                           **({"tier_parse_failure": r.parse_failure} if r.parse_failure else {})}
                          for row, r in zip(rows, results, strict=True)])
    return rows, results
