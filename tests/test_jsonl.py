"""The shared JSONL readers: every bad input names the file, the line and the field."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from knowgap.errors import InputError
from knowgap.jsonl import file_mode, read_lines, read_models, read_objects, write_jsonl


class Row(BaseModel):
    id: str
    n: int


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "rows.jsonl"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_line_numbers_count_blank_lines(tmp_path: Path) -> None:
    path = write(tmp_path, '{"id": "a", "n": 1}\n\n   \n{"id": "b", "n": 2}\n')
    assert [n for n, _ in read_lines(path)] == [1, 4]
    assert [(n, r.id) for n, r in read_models(path, Row)] == [(1, "a"), (4, "b")]


@pytest.mark.parametrize(("text", "expected"), [
    ('{"id": "a", "n": 1}\n{"id": "b", "n": \n', r"rows.jsonl, line 2: not valid JSON"),
    ('{"id": "a", "n": 1}\n[1, 2]\n', r"rows.jsonl, line 2: expected a JSON object, got list"),
    ('{"id": "a", "n": "many"}\n', r"rows.jsonl, line 1, field 'n': Input should be a valid integer"),
    ('{"n": 1}\n', r"rows.jsonl, line 1, field 'id': Field required"),
    ("\n\n", r"rows.jsonl: holds no rows"),
])
def test_read_models_errors(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(InputError, match=expected):
        read_models(write(tmp_path, text), Row, what="rows")


def test_read_objects_names_the_missing_field_and_what_the_row_has(tmp_path: Path) -> None:
    path = write(tmp_path, '{"doc": "x", "summary": "y"}\n{"document": "x", "summary": "y"}\n')
    with pytest.raises(InputError, match=r"line 2, field 'doc': missing \(the row has: document, summary\)"):
        read_objects(path, ("doc", "summary"))
    path = write(tmp_path, '{"doc": 3, "summary": "y"}\n')
    with pytest.raises(InputError, match=r"line 1, field 'doc': expected a string, got int"):
        read_objects(path, ("doc",))


def test_missing_folder_and_non_utf8_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_lines(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="is a folder"):
        read_lines(tmp_path)
    with pytest.raises(InputError, match="not UTF-8"):
        read_lines(write(tmp_path, '{"id": "\xe9"}\n'.encode("latin-1")))


def test_write_jsonl_round_trips_and_replaces_atomically(tmp_path: Path) -> None:
    rows = [{"id": "一", "n": 1}, {"id": "b", "n": 2}]
    path = write_jsonl(tmp_path / "sub" / "out.jsonl", rows)
    assert [r for _, r in read_objects(path)] == rows
    assert "一" in path.read_text(encoding="utf-8")  # not \\u escapes
    assert [p.name for p in path.parent.iterdir()] == ["out.jsonl"]  # no temporary file left
    assert path.stat().st_mode & 0o777 == file_mode()  # not mkstemp's 0600


def test_write_jsonl_streams_a_generator_and_leaves_nothing_when_it_fails(tmp_path: Path) -> None:
    out = write_jsonl(tmp_path / "out.jsonl", ({"n": n} for n in range(3)))
    assert [r for _, r in read_lines(out)] == [{"n": 0}, {"n": 1}, {"n": 2}]

    def failing() -> Iterator[dict[str, int]]:
        yield {"n": 9}
        raise InputError("in.jsonl", "bad row", line=2)

    with pytest.raises(InputError, match="bad row"):
        write_jsonl(out, failing())
    assert [r for _, r in read_lines(out)] == [{"n": 0}, {"n": 1}, {"n": 2}]  # the earlier file is untouched
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]
