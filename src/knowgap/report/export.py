"""Every trial of one or more runs as a flat table: CSV always, Parquet when pyarrow is installed
(``pip install 'knowgap[parquet]'``). Columns: run facts, the trial's ids and status, ``config.*``,
``score.*``, ``output.*`` (non-scalar values as JSON), tokens and time, and one target call's prompt and response
with the call they are from (``call``, its index in the trial's calls, and ``part``, the part of the trial it is):
the call the trial's first wrong verdict is about, else the one a verdict on the whole trial is about
(:func:`~knowgap.report.examples.trial_call`), so a prompt and its response are always one call's.

A CSV text cell that a spreadsheet would read as a formula (it begins with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return, as a model's reply or a case id may: :data:`FORMULA_STARTS`) is written with a single quote
before it, as OWASP recommends against CSV injection; numbers (a negative delta, a duration) are written as
numbers. Lines end in CRLF (RFC 4180). Parquet keeps every value as it is: a typed format read by programs, which
evaluate no formulas."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from knowgap.engine.records import TrialRecord
from knowgap.errors import KnowgapError
from knowgap.redaction import redact
from knowgap.report.data import RunData
from knowgap.report.examples import call_answer, call_prompt, trial_call

FIXED = ["run_id", "suite", "target", "trial_id", "case_id", "config_id", "repeat", "status", "error", "failed",
         "duration_s", "prompt_tokens", "completion_tokens", "prompt", "response", "call", "part"]


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return redact(value) if isinstance(value, str) else value
    return redact(json.dumps(value, ensure_ascii=False, sort_keys=True))


def _row(run: RunData, r: TrialRecord) -> dict[str, Any]:
    found, part = trial_call(run, r)
    call = r.calls[found.call] if found is not None else None
    row: dict[str, Any] = {
        "run_id": run.run_id, "suite": run.manifest.config.suite, "target": run.target,
        "trial_id": r.trial_id, "case_id": r.case_id, "config_id": r.config_id, "repeat": r.repeat,
        "status": r.status, "error": redact(r.error) if r.error else None,
        "failed": run.trial_failed(r), "duration_s": round(r.duration_s, 6),
        "prompt_tokens": sum(c.response.usage.prompt_tokens for c in r.calls if c.response),
        "completion_tokens": sum(c.response.usage.completion_tokens for c in r.calls if c.response),
        "prompt": redact(call_prompt(call)) if call else "", "response": redact(call_answer(call)) if call else "",
        "call": found.call if found is not None else None, "part": redact(part) if part else None,
    }
    for prefix, key, value in _extra(r):
        row[f"{prefix}.{key}"] = _scalar(value)
    return row


def _extra(r: TrialRecord) -> Iterator[tuple[str, str, Any]]:
    for prefix, values in (("config", r.config), ("score", r.scores), ("output", r.output)):
        for key, value in values.items():
            yield prefix, key, value


def iter_trial_rows(runs: Sequence[RunData]) -> Iterator[dict[str, Any]]:
    """One dict per trial, streamed (a run's records are read as they are needed)."""
    for run in runs:
        for r in run.records:
            yield _row(run, r)


def trial_columns(runs: Sequence[RunData]) -> list[str]:
    """Every column of :func:`iter_trial_rows`, in order of first appearance: one pass over the records,
    holding only the names."""
    extra: dict[str, None] = {}
    for run in runs:
        for r in run.records:
            for prefix, key, _ in _extra(r):
                extra.setdefault(f"{prefix}.{key}")
    return FIXED + list(extra)


def trial_rows(runs: Sequence[RunData]) -> tuple[list[str], list[dict[str, Any]]]:
    """(column names, one dict per trial): every row in memory; :func:`write_csv` and :func:`write_parquet`
    stream instead."""
    return trial_columns(runs), list(iter_trial_rows(runs))


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""The first characters that make a spreadsheet (Excel, LibreOffice, Google Sheets) read a CSV cell as a formula
(OWASP, CSV injection)."""


def spreadsheet_cell(value: Any) -> str:
    """``value`` as a CSV cell no spreadsheet evaluates: a text beginning with one of :data:`FORMULA_STARTS` gets a
    single quote before it (``'=HYPERLINK(...)``, shown as text); a finite number (``-0.25``), a bool or None is
    written as it is."""
    if value is None or isinstance(value, bool) or (isinstance(value, int | float) and math.isfinite(value)):
        return _text(value)
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _write_csv(runs: Sequence[RunData], fh: IO[str]) -> None:
    columns = trial_columns(runs)
    # RFC 4180 line ends: Python 3.11's writer quotes a field holding a line terminator's characters only, so with
    # "\n" a reply holding a bare "\r" was written unquoted and read back as two rows
    writer = csv.writer(fh, lineterminator="\r\n")
    writer.writerow([spreadsheet_cell(c) for c in columns])
    for row in iter_trial_rows(runs):
        writer.writerow([spreadsheet_cell(row.get(c)) for c in columns])


def render_csv(runs: Sequence[RunData]) -> str:
    buf = io.StringIO()
    _write_csv(runs, buf)
    return buf.getvalue()


@contextlib.contextmanager
def _replace_when_written(out: Path) -> Iterator[Path]:
    """A temporary file beside ``out`` to write, moved onto ``out`` when written (nothing half-written is left)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        yield tmp
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)


def write_csv(runs: Sequence[RunData], out: Path) -> Path:
    """Every trial as CSV, written row by row (two passes over the records: the columns, then the rows)."""
    with _replace_when_written(out) as tmp, tmp.open("w", encoding="utf-8", newline="") as fh:
        _write_csv(runs, fh)
    return out


class _ColumnType:
    """The narrowest Parquet type of a column's values seen so far (None values do not count)."""

    def __init__(self) -> None:
        self.seen = False
        self.all_bool = self.all_int = self.all_number = True

    def see(self, value: Any) -> None:
        if value is None:
            return
        self.seen = True
        number = isinstance(value, int | float) and not isinstance(value, bool)
        self.all_bool = self.all_bool and isinstance(value, bool)
        self.all_int = self.all_int and number and isinstance(value, int)
        self.all_number = self.all_number and number

    @property
    def kind(self) -> str:
        if self.seen and self.all_bool:
            return "bool"
        if self.seen and self.all_int:
            return "int"
        if self.seen and self.all_number:
            return "float"
        return "string"


PARQUET_BATCH = 5000
"""Rows held at once while writing Parquet (one row group each)."""


def write_parquet(runs: Sequence[RunData], out: Path) -> Path:
    """Every trial as Parquet with typed columns, written :data:`PARQUET_BATCH` rows at a time (two passes over
    the records: the columns and their types, then the rows)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise KnowgapError("Parquet export needs pyarrow: pip install 'knowgap[parquet]'") from None
    typed: dict[str, _ColumnType] = {c: _ColumnType() for c in FIXED}
    for row in iter_trial_rows(runs):
        for c, value in row.items():
            typed.setdefault(c, _ColumnType()).see(value)
    types = {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "string": pa.string()}
    schema = pa.schema([(c, types[t.kind]) for c, t in typed.items()])

    def table(rows: list[dict[str, Any]]) -> Any:
        arrays = []
        for c, t in typed.items():
            values = [row.get(c) for row in rows]
            if t.kind == "string":
                values = [None if v is None else _text(v) for v in values]
            elif t.kind == "float":
                values = [None if v is None else float(v) for v in values]
            arrays.append(pa.array(values, type=types[t.kind]))
        return pa.Table.from_arrays(arrays, schema=schema)

    with _replace_when_written(out) as tmp:
        writer = pq.ParquetWriter(tmp, schema)
        try:
            batch: list[dict[str, Any]] = []
            for row in iter_trial_rows(runs):
                batch.append(row)
                if len(batch) == PARQUET_BATCH:
                    writer.write_table(table(batch))
                    batch = []
            if batch:
                writer.write_table(table(batch))
        finally:
            writer.close()
    return out
