"""Run a judge over any JSONL file of responses, and measure a judge's agreement with labels in a file.

``judge_file`` reads every row (a bad line or a missing field is an :class:`InputError` naming file, line
and field, before anything is written), adds the judge's verdict under ``out_field`` and writes the rows
in the same order. ``agreement`` compares verdicts with a label field and gives a Wilson 95% CI.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from knowgap.engine.stats import wilson
from knowgap.errors import InputError, KnowgapError
from knowgap.jsonl import read_objects, write_jsonl
from knowgap.judges.abstention import judge_abstention
from knowgap.models.structured import ParseFailure

_TRUE = {"yes", "true", "1", "y", "abstained", "abstain", "是"}
_FALSE = {"no", "false", "0", "n", "answered", "answer", "否"}


class Agreement(BaseModel):
    """How often a judge agrees with reference labels (Wilson 95% CI)."""

    judge: str
    label_field: str
    n: int
    agree: int
    rate: float
    ci_low: float
    ci_high: float
    confusion: dict[str, int]
    """true_pos (both abstained), true_neg, false_pos (judge abstained, label answered), false_neg."""
    kappa: float | None
    unjudged: int = 0
    """Rows where the judge's answer could not be parsed (counted as disagreements)."""


def label_value(value: Any, *, where: str, line: int, field: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InputError(where, f"label {value!r} is not yes/no/true/false", line=line, field=field)


Verdicts = list[bool | ParseFailure]


def offline_verdicts(texts: Sequence[str]) -> Verdicts:
    return [judge_abstention(t).abstained for t in texts]


def llm_verdicts(model_spec: str, rows: Sequence[dict[str, Any]], text_field: str,
                 question_field: str | None, *, spec_name: str = "abstention",
                 progress: Callable[[int], None] | None = None) -> Verdicts:
    """The LLM abstention judge (a versioned YAML spec) through the model layer: response cache, retries,
    concurrency limit and accounting, exactly as inside a run."""
    from knowgap.engine.cache import ResponseCache
    from knowgap.engine.client import ModelClient, RetryPolicy
    from knowgap.judges.spec import load_spec
    from knowgap.models.registry import create_model
    from knowgap.paths import cache_path

    spec = load_spec(spec_name)
    records = [{"question": str(r.get(question_field, "")) if question_field else "", "response": r[text_field]}
               for r in rows]

    async def go() -> Verdicts:
        model = create_model(model_spec)
        model.prepare()
        cache = ResponseCache(cache_path())
        client = ModelClient(model, run_id=f"judge-{spec.version}", cache=cache, use_cache=True, concurrency=None,
                             retry=RetryPolicy())
        out: Verdicts = []
        try:
            for i, record in enumerate(records):
                call = await client.call("judge", spec.request(record), 0)
                if call.response is None:
                    raise KnowgapError(f"judge model {model_spec} failed on row {i + 1}: {call.error}")
                parsed = spec.parse(call.response.text)
                out.append(parsed if isinstance(parsed, ParseFailure) else parsed == "yes")
                if progress:
                    progress(i + 1)
        finally:
            await model.aclose()
            cache.close()
        return out

    return asyncio.run(go())


def judge_file(path: str | Path, *, text_field: str, question_field: str | None = None,
               out: str | Path | None = None, model: str | None = None,
               out_field: str = "abstained") -> tuple[list[dict[str, Any]], Verdicts]:
    """Judge every row of ``path``; write each row plus ``out_field`` (true/false, or null when an LLM
    judge's answer could not be parsed, with ``out_field + '_parse_failure'``) to ``out`` in the same order."""
    required = [text_field] + ([question_field] if question_field else [])
    rows = [row for _, row in read_objects(path, required)]
    texts = [r[text_field] for r in rows]
    verdicts = offline_verdicts(texts) if model in (None, "offline") else \
        llm_verdicts(model, rows, text_field, question_field)
    if out is not None:
        written = []
        for row, verdict in zip(rows, verdicts, strict=True):
            new = dict(row)
            if isinstance(verdict, ParseFailure):
                new[out_field] = None
                new[f"{out_field}_parse_failure"] = verdict.reason
            else:
                new[out_field] = verdict
            written.append(new)
        write_jsonl(out, written)
    return rows, verdicts


def agreement(path: str | Path, rows: Sequence[dict[str, Any]], verdicts: Verdicts, *, label_field: str,
              judge: str) -> Agreement:
    tp = tn = fp = fn = unjudged = 0
    for number, (row, verdict) in enumerate(zip(rows, verdicts, strict=True), start=1):
        if label_field not in row:
            raise InputError(str(path), "missing label field", line=number, field=label_field)
        gold = label_value(row[label_field], where=str(path), line=number, field=label_field)
        if isinstance(verdict, ParseFailure):
            unjudged += 1
            continue
        if verdict and gold:
            tp += 1
        elif not verdict and not gold:
            tn += 1
        elif verdict:
            fp += 1
        else:
            fn += 1
    n = len(rows)
    agree = tp + tn
    lo, hi = wilson(agree, n)
    judged = tp + tn + fp + fn
    kappa = None
    if judged:
        po = agree / judged
        pe = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / judged ** 2
        kappa = (po - pe) / (1 - pe) if pe < 1 else None
    return Agreement(judge=judge, label_field=label_field, n=n, agree=agree, rate=agree / n, ci_low=lo, ci_high=hi,
                     confusion={"true_pos": tp, "true_neg": tn, "false_pos": fp, "false_neg": fn}, kappa=kappa,
                     unjudged=unjudged)
