"""Strict case-file reading: every problem of a file, one line each, naming file, line and field; nothing coerced;
a file that is not JSONL says what it is."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict

from knowgap.errors import InputError
from knowgap.strictjsonl import MAX_SHOWN, Problem, ProblemsError, format_problems, read_strict


class Source(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dataset: str
    row: int | None = None


class Row(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    kind: Literal["normal", "adversarial"]
    expected_sentiment: Literal["positive", "negative"] | None = None
    expected_conflicting: bool | None = None
    runs: int = 1
    source: Source | None = None
    sources: list[Source] = []


def write(tmp_path: Path, text: str | bytes, name: str = "cases.jsonl") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def lines(*rows: dict[str, object]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def messages(problems: list[Problem]) -> list[str]:
    return [str(p) for p in problems]


def test_a_good_file_with_blank_lines_a_bom_and_crlf(tmp_path: Path) -> None:
    text = "\ufeff" + lines({"id": "a", "kind": "normal"}).replace("\n", "\r\n") + "\r\n   \n" + \
        lines({"id": "b", "kind": "adversarial", "expected_conflicting": True, "runs": 3})
    result = read_strict(write(tmp_path, text), Row)
    assert result.ok and [(n, r.id) for n, r in result.records] == [(1, "a"), (4, "b")]
    summary = result.counted(lambda r: r.kind).summary()
    assert summary == f"{tmp_path / 'cases.jsonl'}: 2 cases OK (normal 1, adversarial 1)"


def test_an_unknown_field_names_line_and_field_with_a_did_you_mean(tmp_path: Path) -> None:
    path = write(tmp_path, lines({"id": "a", "kind": "normal", "expected_sentment": "positive"},
                                 {"id": "b", "kind": "normal", "source": {"datset": "x"}},
                                 {"id": "c", "kind": "normal", "sources": [{"dataset": "x"}, {"rows": 2}]}))
    found = messages(read_strict(path, Row).problems)
    assert found[0] == (f"{path}, line 1, field 'expected_sentment': unknown field (did you mean 'expected_sentiment'? "
                        "the fields are: id, kind, expected_sentiment, expected_conflicting, runs, source, sources)")
    assert any(f.startswith(f"{path}, line 2, field 'source.datset': unknown field (did you mean 'dataset'?")
               for f in found)
    assert any(f.startswith(f"{path}, line 3, field 'sources.1.rows': unknown field (did you mean 'row'?")
               for f in found)


@pytest.mark.parametrize(("value", "field", "expected"), [
    ({"expected_conflicting": "true"}, "expected_conflicting", 'Input should be a valid boolean (got a string "true")'),
    ({"expected_conflicting": "yes"}, "expected_conflicting", 'Input should be a valid boolean (got a string "yes")'),
    ({"expected_conflicting": 1}, "expected_conflicting", "Input should be a valid boolean (got a number 1)"),
    ({"runs": "3"}, "runs", 'Input should be a valid integer (got a string "3")'),
    ({"id": 7}, "id", "Input should be a valid string (got a number 7)"),
    ({"kind": "Normal"}, "kind", "Input should be 'normal' or 'adversarial'"),
])
def test_nothing_is_coerced(tmp_path: Path, value: dict[str, object], field: str, expected: str) -> None:
    path = write(tmp_path, lines({"id": "a", "kind": "normal"} | value))
    problems = read_strict(path, Row).problems
    assert len(problems) == 1 and (problems[0].line, problems[0].field) == (1, field)
    assert expected in problems[0].message


def test_a_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path, lines({"id": "a", "kind": "normal"}, {"id": "b", "kind": "normal"}) + "\n" +
                 lines({"id": "a", "kind": "adversarial"}))
    assert messages(read_strict(path, Row).problems) == [
        f"{path}, line 4, field 'id': duplicate id 'a' (also on line 1)"]


def test_every_problem_of_the_file_is_reported_in_line_order(tmp_path: Path) -> None:
    path = write(tmp_path, lines({"id": "a"}, {"id": "b", "kind": "normal"}) + "{oops\n[1]\n" +
                 lines({"id": "c", "kind": "x", "runs": "2"}))
    found = read_strict(path, Row)
    assert [r.id for _, r in found.records] == ["b"]
    assert [(p.line, p.field) for p in found.problems] == [(1, "kind"), (3, None), (4, None), (5, "kind"), (5, "runs")]
    assert found.problems[0].message == "missing (a required field)"
    assert "not valid JSON" in found.problems[1].message
    assert found.problems[2].message == "expected a JSON object, got an array"
    with pytest.raises(ProblemsError) as info:
        found.raise_problems()
    assert isinstance(info.value, InputError) and (info.value.line, info.value.field) == (1, "kind")
    assert str(info.value).splitlines() == messages(found.problems)


def test_the_message_lists_up_to_a_cap_then_counts() -> None:
    problems = [Problem(file="f.jsonl", line=n, field="id", message="bad") for n in range(1, MAX_SHOWN + 6)]
    text = format_problems(problems).splitlines()
    assert len(text) == MAX_SHOWN + 1 and text[0] == "f.jsonl, line 1, field 'id': bad"
    assert text[-1] == f"... and 5 more problems ({MAX_SHOWN + 5} in all)"


def _xlsx_bytes() -> bytes:
    """A real Excel workbook when openpyxl is installed, else a zip holding an xlsx's first part."""
    try:
        from openpyxl import Workbook
    except ImportError:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("[Content_Types].xml", "<Types/>")
        return buffer.getvalue()
    book = Workbook()
    book.active.append(["id", "review"])  # type: ignore[union-attr]
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


@pytest.mark.parametrize(("name", "content", "expected"), [
    ("reviews.jsonl", "id;review\nr1;Great\n", "looks like a CSV file"),
    ("cases.json", json.dumps([{"id": "a", "kind": "normal"}, {"id": "b", "kind": "normal"}], indent=2),
     "holds one JSON array of 2 items, not JSONL (one JSON object per line)"),
    ("cases.json", json.dumps({"id": "a", "kind": "normal"}, indent=2),
     "holds one JSON object over several lines, not JSONL"),
])
def test_a_file_that_is_not_jsonl_says_what_it_is(tmp_path: Path, name: str, content: str, expected: str) -> None:
    path = write(tmp_path, content, name)
    problems = read_strict(path, Row).problems
    assert len(problems) == 1 and problems[0].line is None and problems[0].message.startswith(expected)


def test_a_csv_file_is_pointed_at_data_import(tmp_path: Path) -> None:
    path = write(tmp_path, "id,review,expected_sentiment\nr1,Great food,positive\n", "reviews.csv")
    assert messages(read_strict(path, Row, suite="extract").problems) == [
        f"{path}: looks like a CSV file (first line: id,review,expected_sentiment), not JSONL: convert it with "
        f"`knowgap data import extract {path} --map COLUMN=FIELD ... --out reviews.jsonl`"]


def test_a_one_line_json_array_is_one_problem_not_a_list_of_cases(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps([{"id": "a", "kind": "normal"}]) + "\n")
    assert messages(read_strict(path, Row).problems) == [f"{path}, line 1: expected a JSON object, got an array"]


def test_unreadable_files_raise_one_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"workbook\.jsonl: is an Excel workbook .*knowgap data import"):
        read_strict(write(tmp_path, _xlsx_bytes(), "workbook.jsonl"), Row)
    with pytest.raises(InputError, match=r"latin\.jsonl: not UTF-8 text .*save it as UTF-8"):
        read_strict(write(tmp_path, '{"id": "caf\xe9"}\n'.encode("latin-1"), "latin.jsonl"), Row)
    with pytest.raises(InputError, match="file not found"):
        read_strict(tmp_path / "missing.jsonl", Row)
    assert messages(read_strict(write(tmp_path, "\n\n", "empty.jsonl"), Row).problems) == [
        f"{tmp_path / 'empty.jsonl'}: holds no cases"]
