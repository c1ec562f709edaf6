"""Reading JSONL input files (datasets, response files, calibration files) with errors that name the file,
the line and the field, and writing them atomically.

Every reader skips blank lines and keeps the 1-based line number of each record, so a later check (a
duplicate id, a rule pydantic cannot express) can still point at the line. A UTF-8 byte-order mark and CRLF
line ends (what Excel and Notepad save) are accepted; every other reader of a user's file opens it the same way
(encoding ``utf-8-sig``).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from knowgap.errors import InputError

M = TypeVar("M", bound=BaseModel)


def read_lines(path: str | Path) -> list[tuple[int, Any]]:
    """(line number, parsed JSON value) for each non-blank line of ``path``."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(str(file), "file not found") from None
    except IsADirectoryError:
        raise InputError(str(file), "is a folder, expected a JSONL file") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(file), f"not UTF-8 text ({exc.reason})") from None
    return parse_lines(text, file)


def parse_lines(text: str, file: str | Path) -> list[tuple[int, Any]]:
    """(line number, parsed JSON value) for each non-blank line of ``text``, read from ``file``."""
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((number, json.loads(line)))
        except ValueError as exc:
            raise InputError(str(file), f"not valid JSON ({exc})", line=number) from None
    return out


def read_objects(path: str | Path, required: Sequence[str] = (), *,
                 what: str = "rows") -> list[tuple[int, dict[str, Any]]]:
    """(line number, row) for each row: a JSON object holding each ``required`` field as a string."""
    rows = []
    for number, row in read_lines(path):
        if not isinstance(row, dict):
            raise InputError(str(path), f"expected a JSON object, got {type(row).__name__}", line=number)
        for name in required:
            if name not in row:
                raise InputError(str(path), f"missing (the row has: {', '.join(row) or 'no fields'})",
                                 line=number, field=name)
            if not isinstance(row[name], str):
                raise InputError(str(path), f"expected a string, got {type(row[name]).__name__}", line=number,
                                 field=name)
        rows.append((number, row))
    if not rows:
        raise InputError(str(path), f"holds no {what}")
    return rows


def read_models(path: str | Path, model: type[M], *, what: str = "records") -> list[tuple[int, M]]:
    """(line number, record) for each line, validated as ``model``."""
    out = []
    for number, row in read_lines(path):
        if not isinstance(row, dict):
            raise InputError(str(path), f"expected a JSON object, got {type(row).__name__}", line=number)
        try:
            out.append((number, model.model_validate(row)))
        except ValidationError as exc:
            raise InputError.from_validation(str(path), exc, line=number) from None
    if not out:
        raise InputError(str(path), f"holds no {what}")
    return out


def file_mode() -> int:
    """The mode a newly created file gets under the current umask (0644 under the usual 022)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> Path:
    """Write rows atomically (a temporary file renamed into place: nothing half-written is left, also when
    ``rows`` is a generator that fails half-way)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode())  # mkstemp makes 0600 files; the result should read like any other output
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
