"""Run a judge over any JSONL file, and measure a judge's agreement with labels in a file.

``judge_file`` (``knowgap judge abstention``) reads every row (a bad line or a missing field is an
:class:`InputError` naming file, line and field, before anything is written), adds the judge's verdict under
``out_field`` and writes the rows in the same order; an LLM judge's calls go through the model gateway.
``judge_faithfulness_file`` (``knowgap judge faithfulness``) adds the offline faithfulness checker's ``score``
and ``verdict`` the same way. ``agreement`` compares verdicts with a label field and gives a Wilson 95% CI.
Output files are written to a temporary file and renamed at the end, so a bad row leaves nothing half-written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from knowgap.errors import InputError
from knowgap.jsonl import read_objects, write_jsonl
from knowgap.judges.abstention import judge_abstention
from knowgap.models.structured import ParseFailure
from knowgap.stats import wilson

if TYPE_CHECKING:
    from knowgap.judges.faithfulness import OfflineFaithfulness

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
    """The LLM abstention judge (a versioned YAML spec) through the model gateway: response cache, retries,
    concurrency limit and accounting, exactly as inside a run."""
    from knowgap.judges.validation import spec_outcomes

    records = [{"question": str(r.get(question_field, "")) if question_field else "", "response": r[text_field]}
               for r in rows]
    outcomes = spec_outcomes(model_spec, spec_name, records, progress=progress)
    return [o if isinstance(o, ParseFailure) else o == "yes" for o in outcomes]


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


def judge_faithfulness_file(path: str | Path, out: str | Path, *, source_field: str = "doc",
                            text_field: str = "summary", threshold: float | None = None, details: bool = False,
                            checker: OfflineFaithfulness | None = None,
                            progress: Callable[[int, int], None] | None = None) -> Counter[str]:
    """Score every row of ``path`` with the offline faithfulness checker and write it to ``out`` with ``score``
    (0..1, higher = more faithful; null for an empty summary or a refusal) and ``verdict`` (faithful /
    unfaithful / empty / refusal), in the same order; returns the verdict counts. ``threshold``: faithful at or
    above (default: 0.5, the combiner's probability cut)."""
    from knowgap.judges.faithfulness import DEFAULT_THRESHOLD, OfflineFaithfulness

    rows = [row for _, row in read_objects(path, (source_field, text_field))]
    checker = checker or OfflineFaithfulness(threshold=DEFAULT_THRESHOLD if threshold is None else threshold)
    verdicts: Counter[str] = Counter()

    def scored() -> Iterator[dict[str, Any]]:
        for i, row in enumerate(rows):
            result = checker.check(row[source_field], row[text_field])
            verdicts[result.verdict] += 1
            extra: dict[str, Any] = {"score": result.score, "verdict": result.verdict}
            if details:
                extra["claims"] = [c.model_dump() for c in result.claims]
            yield {**row, **extra}
            if progress:
                progress(i + 1, len(rows))

    write_jsonl(out, scored())
    return verdicts


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
