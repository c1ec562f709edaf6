"""Every trial of one or more runs as a flat table: CSV always, Parquet when pyarrow is installed
(``pip install 'knowgap[parquet]'``). Columns: run facts, the trial's ids and status, ``config.*``,
``score.*``, ``output.*`` (non-scalar values as JSON), the target's prompt and response, tokens and time."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from knowgap.errors import KnowgapError
from knowgap.redaction import redact
from knowgap.report.data import RunData, prompt_text, response_text

FIXED = ["run_id", "suite", "target", "trial_id", "case_id", "config_id", "repeat", "status", "error", "failed",
         "duration_s", "prompt_tokens", "completion_tokens", "prompt", "response"]


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return redact(value) if isinstance(value, str) else value
    return redact(json.dumps(value, ensure_ascii=False, sort_keys=True))


def trial_rows(runs: Sequence[RunData]) -> tuple[list[str], list[dict[str, Any]]]:
    """(column names, one dict per trial)."""
    rows: list[dict[str, Any]] = []
    extra: dict[str, None] = {}
    for run in runs:
        for r in run.records:
            row: dict[str, Any] = {
                "run_id": run.run_id, "suite": run.manifest.config.suite, "target": run.target,
                "trial_id": r.trial_id, "case_id": r.case_id, "config_id": r.config_id, "repeat": r.repeat,
                "status": r.status, "error": redact(r.error) if r.error else None,
                "failed": run.trial_failed(r), "duration_s": round(r.duration_s, 6),
                "prompt_tokens": sum(c.response.usage.prompt_tokens for c in r.calls if c.response),
                "completion_tokens": sum(c.response.usage.completion_tokens for c in r.calls if c.response),
                "prompt": redact(prompt_text(r)), "response": redact(response_text(r)),
            }
            for prefix, values in (("config", r.config), ("score", r.scores), ("output", r.output)):
                for key, value in values.items():
                    if prefix == "output" and key == "response":
                        continue
                    row[f"{prefix}.{key}"] = _scalar(value)
                    extra.setdefault(f"{prefix}.{key}")
            rows.append(row)
    return FIXED + list(extra), rows


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def render_csv(runs: Sequence[RunData]) -> str:
    columns, rows = trial_rows(runs)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in columns])
    return buf.getvalue()


def write_csv(runs: Sequence[RunData], out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_csv(runs), encoding="utf-8")
    return out


def _column_type(values: list[Any]) -> str:
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "bool"
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "int"
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return "float"
    return "string"


def write_parquet(runs: Sequence[RunData], out: Path) -> Path:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise KnowgapError("Parquet export needs pyarrow: pip install 'knowgap[parquet]'") from None
    columns, rows = trial_rows(runs)
    arrays = {}
    types = {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "string": pa.string()}
    for c in columns:
        values = [row.get(c) for row in rows]
        kind = _column_type(values)
        if kind == "string":
            values = [None if v is None else _cell(v) for v in values]
        elif kind == "float":
            values = [None if v is None else float(v) for v in values]
        arrays[c] = pa.array(values, type=types[kind])
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(arrays), out)
    return out
