"""``knowgap data import``: reading CSV in any common encoding and delimiter and XLSX, mapping columns to case
fields, converting cells explicitly, and every problem named by file, row, column and field."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from knowgap.casefiles.suite_formats import check_file
from knowgap.casefiles.tabular import import_table, read_table, sniff_delimiter
from knowgap.errors import KnowgapError
from knowgap.suites.extract.dataset import load_cases
from tests.helpers import REPO

REVIEWS = REPO / "tests" / "fixtures" / "extract" / "reviews" / "my_reviews.csv"
MAP = ["Review text=review", "Overall=expected_sentiment", "Mixed feelings?=expected_conflicting"]
SETS = ["kind=normal", "lang=en"]
LATIN = [["review", "lang"], ["Crème brûlée was perfect; the café, though, was cold", "en"],
         ["Service: slow, but “worth it”", "en"]]
CHINESE = [["review", "lang"], ["菜很好吃，服务一般。", "zh"], ["价格偏高；环境不错", "zh"]]


def _fixture_records() -> list[list[str]]:
    with REVIEWS.open(encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


def _write(path: Path, records: list[list[str]], encoding: str, delimiter: str = ",") -> Path:
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n").writerows(records)
    path.write_bytes(buffer.getvalue().encode(encoding))
    return path


def _import(tmp_path: Path, source: Path, *, maps: Sequence[str] = MAP, ignore: Sequence[str] = ("Aspects (MAMS)",),
            sets: Sequence[str] = SETS, out: str = "cases.jsonl", **kwargs: str) -> Path:
    target = tmp_path / out
    import_table("extract", source, target, maps=maps, ignore=ignore, sets=sets, **kwargs)
    return target


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(("records", "encoding", "sniffed"), [
    (LATIN, "utf-8", "utf-8"), (LATIN, "utf-8-sig", "utf-8-sig"), (CHINESE, "utf-16", "utf-16"),
    (LATIN, "cp1252", "cp1252"), (CHINESE, "gb18030", "gb18030"), (CHINESE, "utf-8-sig", "utf-8-sig"),
])
@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_encoding_and_delimiter_are_sniffed(tmp_path: Path, records: list[list[str]], encoding: str, sniffed: str,
                                            delimiter: str) -> None:
    table = read_table(_write(tmp_path / "t.csv", records, encoding, delimiter))
    assert (table.encoding, table.delimiter) == (sniffed, delimiter)
    assert table.columns == records[0]
    assert [(n, list(cells.values())) for n, cells in table.rows] == [(2, records[1]), (3, records[2])]


def test_a_delimiter_inside_quoted_cells_does_not_fool_the_sniffer() -> None:
    text = 'a;b\n"x, y, z";1\n"p, q";2\n'
    assert sniff_delimiter(text) == ";"
    assert sniff_delimiter(text.replace(";", ",")) == ","


def test_the_fixture_imports_and_passes_the_suites_check(tmp_path: Path) -> None:
    out = _import(tmp_path, REVIEWS)
    assert check_file("extract", out) == []
    records = _fixture_records()[1:]
    cases = load_cases(out)
    assert [c.review for c in cases] == [r[0] for r in records]
    assert [c.expected_sentiment for c in cases] == [r[1] or None for r in records]  # an empty cell: not scored
    assert [c.expected_conflicting for c in cases] == [r[2] == "1" for r in records]
    assert [c.id for c in cases] == [f"my_reviews-{i}" for i in range(1, 9)]
    assert cases[0].label_source == "my_reviews.csv, row 2 (knowgap data import)"
    assert list(_rows(out)[0])[:4] == ["id", "kind", "lang", "review"]  # the case model's field order


def test_id_prefix_and_a_mapped_id_column(tmp_path: Path) -> None:
    out = _import(tmp_path, REVIEWS, id_prefix="shop-")
    assert [c.id for c in load_cases(out)][:2] == ["shop-1", "shop-2"]
    records = _fixture_records()
    with_ids = _write(tmp_path / "ids.csv", [["id", *records[0]]] + [[f"r{i}", *r] for i, r in
                                                                      enumerate(records[1:])], "utf-8")
    assert [c.id for c in load_cases(_import(tmp_path, with_ids))] == [f"r{i}" for i in range(8)]
    dup = _write(tmp_path / "dup.csv", [["id", *records[0]], ["a", *records[1]], ["a", *records[2]]], "utf-8")
    with pytest.raises(KnowgapError, match=r"dup.csv, row 3, column 'id' \(field 'id'\): duplicate id 'a' "
                                           r"\(also row 2\)"):
        _import(tmp_path, dup)


def test_columns_that_fill_no_field_are_listed_and_ignore_drops_them(tmp_path: Path) -> None:
    with pytest.raises(KnowgapError) as info:
        _import(tmp_path, REVIEWS, ignore=[])
    assert "columns that fill no field: Aspects (MAMS)" in str(info.value)
    with pytest.raises(KnowgapError) as info:
        _import(tmp_path, REVIEWS, maps=MAP[:1], ignore=[])
    assert "columns that fill no field: Overall, Mixed feelings?, Aspects (MAMS)" in str(info.value)
    assert not (tmp_path / "cases.jsonl").exists()


def test_unknown_column_or_field_in_a_map_says_which_and_suggests(tmp_path: Path) -> None:
    with pytest.raises(KnowgapError) as info:
        _import(tmp_path, REVIEWS, maps=["Review txt=review", "Overall=expected_sentment",
                                         "Mixed feelings?=expected_conflicting"])
    lines = str(info.value).splitlines()
    assert lines[0].startswith("--map Review txt=review: no column 'Review txt' (did you mean 'Review text'?)")
    assert lines[1].startswith("--map Overall=expected_sentment: no field 'expected_sentment' (did you mean "
                               "'expected_sentiment'?)")


def test_a_required_field_no_column_fills_is_named_once(tmp_path: Path) -> None:
    with pytest.raises(KnowgapError, match=r"no column fills the required field 'kind' \(map one with --map "
                                           r"COLUMN=kind, or give every row the same value with --set kind=VALUE\)"):
        _import(tmp_path, REVIEWS, sets=["lang=en"])


def test_cells_are_converted_explicitly_and_every_bad_cell_is_named(tmp_path: Path) -> None:
    records = _fixture_records()
    records[2][2] = "yes"          # row 3: a boolean written as yes
    records[4][1] = "Postive"      # row 5: a choice misspelt (in the wrong case it is read: test_value_mapping)
    records[6][2] = "TRUE"         # row 7: accepted (any case of true/false)
    bad = _write(tmp_path / "bad.csv", records, "utf-8")
    with pytest.raises(KnowgapError) as info:
        _import(tmp_path, bad)
    assert str(info.value).splitlines() == [
        f"{bad}, row 3, column 'Mixed feelings?' (field 'expected_conflicting'): expected true, false, 1 or 0, "
        "got 'yes'",
        f"{bad}, row 5, column 'Overall' (field 'expected_sentiment'): 'Postive' is not one of positive, "
        "negative, neutral (did you mean 'positive'?) (a sheet's own values are mapped with --values "
        "FIELD=FROM:TO,...)",
    ]
    assert not (tmp_path / "cases.jsonl").exists()
    with pytest.raises(KnowgapError, match=r"--set lang=fr: 'fr' is not one of en, zh"):
        _import(tmp_path, REVIEWS, sets=["kind=normal", "lang=fr"])


def test_a_rule_of_the_case_model_names_the_row(tmp_path: Path) -> None:
    records = [["Review text", "kind"], ["The soup was cold.", "adversarial"]]
    with pytest.raises(KnowgapError, match=r"k.csv, row 2: Value error, a adversarial case needs base_id"):
        import_table("extract", _write(tmp_path / "k.csv", records, "utf-8"), tmp_path / "o.jsonl",
                     maps=["Review text=review"], sets=["lang=en"])


def test_xlsx_round_trip_gives_the_same_cases_as_the_csv(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    records = _fixture_records()
    book = openpyxl.Workbook()
    book.active.title = "notes"
    book.active.append(["nothing to import here"])
    sheet = book.create_sheet("reviews")
    sheet.append(records[0])
    for text, overall, mixed, aspects in records[1:]:
        sheet.append([text, overall or None, mixed == "1", aspects])  # a real boolean cell, an empty cell
    path = tmp_path / "my_reviews.xlsx"
    book.save(path)
    from_xlsx = _import(tmp_path, path, out="x.jsonl", sheet="reviews")
    from_csv = _import(tmp_path, REVIEWS, out="c.jsonl")
    xlsx_rows, csv_rows = _rows(from_xlsx), _rows(from_csv)
    assert xlsx_rows[0]["label_source"] == "my_reviews.xlsx (sheet 'reviews'), row 2 (knowgap data import)"
    assert [{**r, "label_source": ""} for r in xlsx_rows] == [{**r, "label_source": ""} for r in csv_rows]
    with pytest.raises(KnowgapError, match=r"no sheet 'Sheet9' \(sheets: notes, reviews\)"):
        _import(tmp_path, path, sheet="Sheet9")


def test_other_suites_take_lists_numbers_and_nested_fields(tmp_path: Path) -> None:
    starter = _write(tmp_path / "starter.csv", [
        ["context", "question", "answerable", "answers", "lang"],
        ["The shop opens at 9.", "When does it open?", "1", '["9", "nine"]', "en"],
        ["The shop opens at 9.", "Who owns it?", "false", "", "en"]], "utf-8")
    out = tmp_path / "starter.jsonl"
    import_table("starter", starter, out)
    assert check_file("starter", out) == []
    assert [(r["answerable"], r.get("answers")) for r in _rows(out)] == [(True, ["9", "nine"]), (False, None)]
    bad = _write(tmp_path / "bad_list.csv", [["context", "question", "answerable", "answers", "lang"],
                                             ["c", "q", "1", "9; nine", "en"]], "utf-8")
    with pytest.raises(KnowgapError, match=r"row 2, column 'answers' \(field 'answers'\): expected JSON such as "
                                           r"\[\"a\", \"b\"\], got '9; nine'"):
        import_table("starter", bad, out)
    kb = _write(tmp_path / "kb.csv", [["Q", "A"], ["How old must a driver be?", "18"]], "utf-8")
    out_kb = tmp_path / "kb.jsonl"
    import_table("abstain", kb, out_kb, maps=["Q=question", "A=answer"])
    assert check_file("abstain", out_kb) == []
    assert _rows(out_kb) == [{"question": "How old must a driver be?", "answer": "18",
                              "source": "kb.csv, row 2 (knowgap data import)"}]


def test_a_workbook_saved_as_csv_and_an_xls_are_refused_plainly(tmp_path: Path) -> None:
    zipped = tmp_path / "book.csv"
    zipped.write_bytes(b"PK\x03\x04rest")
    with pytest.raises(KnowgapError, match="ZIP file .*save it as .xlsx"):
        read_table(zipped)
    old = tmp_path / "book.xls"
    old.write_bytes(b"\xd0\xcf\x11\xe0")
    with pytest.raises(KnowgapError, match=r"\.xls files are not read: save the sheet as \.xlsx or CSV"):
        read_table(old)


def test_the_command_line_prints_each_problem_on_its_own_line_and_exits_2(tmp_path: Path) -> None:
    from tests.helpers import knowgap_cli

    records = _fixture_records()
    records[2][2], records[3][2] = "yes", "no"
    bad = _write(tmp_path / "bad.csv", records, "utf-8")
    result = knowgap_cli("data", "import", "extract", str(bad), *(x for m in MAP for x in ("--map", m)),
                         "--ignore", "Aspects (MAMS)", "--set", "kind=normal", "--set", "lang=en",
                         "--out", str(tmp_path / "cases.jsonl"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"error: {bad}, row 3, column 'Mixed feelings?'")
    assert lines[1].startswith(f"{bad}, row 4, column 'Mixed feelings?'")
    assert not (tmp_path / "cases.jsonl").exists()


@pytest.mark.parametrize(("text", "annotation", "value"), [
    ("TRUE", bool, True), ("0", bool, False), ("-3", int, -3), ("2.5", float, 2.5), ("neutral", "sentiment", "neutral"),
    ('{"a": [1]}', dict[str, list[int]], {"a": [1]}), ("7", int | str, 7), ("seven", int | str, "seven"),
    ("x=y", str | None, "x=y"),
])
def test_convert_by_field_type(text: str, annotation: object, value: object) -> None:
    from typing import Literal

    from knowgap.casefiles.tabular import convert

    kind = Literal["positive", "negative", "neutral"] if annotation == "sentiment" else annotation
    assert convert(text, kind) == value and type(convert(text, kind)) is type(value)


@pytest.mark.parametrize(("text", "annotation", "message"), [
    ("yes", bool, "expected true, false, 1 or 0, got 'yes'"), ("3.0", int, "expected a whole number, got '3.0'"),
    ("nan", float, "expected a finite number, got 'nan'"), ("[1, 2", list[int], "expected JSON such as"),
])
def test_convert_refuses_what_it_would_have_to_guess(text: str, annotation: object, message: str) -> None:
    from knowgap.casefiles.tabular import convert

    with pytest.raises(ValueError, match=re.escape(message)):
        convert(text, annotation)


def test_a_set_value_may_hold_an_equals_sign(tmp_path: Path) -> None:
    out = _import(tmp_path, REVIEWS, sets=[*SETS, "label_source=team labels, rule v2 (a=b)"])
    assert {c.label_source for c in load_cases(out)} == {"team labels, rule v2 (a=b)"}


def test_without_openpyxl_an_xlsx_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    path = tmp_path / "book.xlsx"
    path.write_bytes(b"PK\x03\x04")
    monkeypatch.setitem(sys.modules, "openpyxl", None)  # import openpyxl now raises ImportError
    with pytest.raises(KnowgapError, match=re.escape("reading .xlsx files needs openpyxl: pip install "
                                                     "'knowgap[xlsx]'")):
        read_table(path)
