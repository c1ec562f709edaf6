"""The one YAML loader: every bad file is one InputError naming the file, the line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from knowgap.errors import InputError
from knowgap.yamlfile import load_yaml_model, read_yaml


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    n: int = 0


class Doc(BaseModel):
    title: str
    items: list[Item] = []


def write(path: Path, data: str | bytes) -> Path:
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def test_loads_with_a_bom_and_crlf_line_ends(tmp_path: Path) -> None:
    plain = write(tmp_path / "a.yaml", "title: t\nitems:\n  - {name: x, n: 2}\n")
    windows = write(tmp_path / "b.yaml", b"\xef\xbb\xbf" + plain.read_bytes().replace(b"\n", b"\r\n"))
    assert load_yaml_model(windows, Doc) == load_yaml_model(plain, Doc) == Doc(title="t", items=[Item(name="x", n=2)])


@pytest.mark.parametrize(("data", "line", "field", "message"), [
    ("title: t\nitems:\n  - {name: x}\n  - {name: y, n: many}\n", 4, "items[1].n", "valid integer"),
    ("title: t\nitems:\n  - name: x\n    colour: red\n", 4, "items[0].colour", "Extra inputs are not permitted"),
    ("items: []\n", 1, "title", "Field required"),  # a missing field: the line of its mapping
    ("title: t\nitems: [\n", 3, None, "not valid YAML"),
    (b"title: \xff\n", None, None, "not UTF-8 text"),
    ("- a\n- b\n", None, None, "expected a mapping with title"),
])
def test_errors_name_file_line_and_field(tmp_path: Path, data: str | bytes, line: int | None, field: str | None,
                                         message: str) -> None:
    file = write(tmp_path / "bad.yaml", data)
    with pytest.raises(InputError) as info:
        load_yaml_model(file, Doc, expected="a mapping with title")
    assert (info.value.file, info.value.line, info.value.field) == (str(file), line, field)
    assert message in str(info.value)


def test_missing_file_and_folder_say_what_was_expected(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="spec file not found"):
        load_yaml_model(tmp_path / "nope.yaml", Doc, what="spec file")
    with pytest.raises(InputError, match="is a folder, expected a spec file"):
        load_yaml_model(tmp_path, Doc, what="spec file")


def test_a_later_check_points_at_the_line(tmp_path: Path) -> None:
    document = read_yaml(write(tmp_path / "a.yaml", "title: t\nitems:\n  - {name: x}\n  - {name: x}\n"))
    error = document.error("duplicate name", ("items", 1, "name"))
    assert (error.line, error.field) == (4, "items[1].name")
