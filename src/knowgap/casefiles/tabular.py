"""``knowgap data import``: a spreadsheet (CSV or XLSX) of cases into a suite's JSONL case file.

Reading: a CSV's encoding (UTF-8 with or without a byte-order mark, UTF-16 with one, GB18030/GBK, Windows-1252)
is decided on evidence unless given (:mod:`.encodings`: a file that could be read two ways is refused, asking
for ``--encoding``), its delimiter (``,`` ``;`` tab ``|``) sniffed unless given; an XLSX sheet is read with
openpyxl (the ``xlsx`` extra). Rows are numbered as a spreadsheet shows them: the header is row 1.

Mapping: ``--map COLUMN=FIELD`` names the case field a column fills (``source.dataset`` reaches into a nested
object); a column named like a field fills it without a map; any other column is an error unless ``--ignore``d;
``--set FIELD=VALUE`` gives every row the same value; ``--values FIELD=FROM:TO,...`` reads a sheet's own values
as the field's (``Pos:positive``, ``N/A:`` to leave it out). Each cell's text is converted to its field's type
explicitly: a boolean is ``true``/``false``/``1``/``0`` (any case) and nothing else, a whole number is digits,
a choice must be one of its values in any case (``Positive`` is ``positive``; said in a note), a list or object is
JSON; an empty cell leaves the field out. Every problem
is one line naming the file, the row, the column and the field.

What a case is comes from the suite's data part (:class:`knowgap.engine.suite_data.SuiteData`): its model (the
fields, their types, a ``Literal`` field's choices), the field a made-up id goes in and the one that says where a
case came from; a plugin's suite is imported like a built-in one. The written file passes the suite's case-file
check (:func:`knowgap.casefiles.suite_formats.check_file`), or nothing is written.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import re
import types
import typing
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ValidationError

from knowgap.casefiles.encodings import sniff_encoding, wide_words
from knowgap.casefiles.problems import did_you_mean, raise_problems
from knowgap.casefiles.strict import case_data
from knowgap.casefiles.suite_formats import write_checked
from knowgap.engine.suite_data import SuiteData
from knowgap.errors import InputError, KnowgapError

DELIMITERS = (",", ";", "\t", "|")
XLSX_SUFFIXES = (".xlsx", ".xlsm")


@dataclass
class Table:
    """A spreadsheet read as text: its header and its rows (row number, cells by column)."""

    file: str
    """The file (and sheet) as named in messages."""
    columns: list[str]
    rows: list[tuple[int, dict[str, str]]]
    encoding: str | None = None
    """CSV only: the encoding read (sniffed or given)."""
    encoding_sniffed: bool = False
    """CSV only: the encoding was decided from the bytes (not given)."""
    wide_words: list[str] = field(default_factory=list)
    """CSV only: the first words holding a non-ASCII character, as read (shown so that a person can check)."""
    delimiter: str | None = None
    """CSV only: the delimiter read (sniffed or given)."""
    sheet: str | None = None
    """XLSX only: the sheet read."""


@dataclass
class ImportResult:
    out: Path
    cases: int
    table: Table
    mapping: dict[str, str]
    """Column -> field."""
    ignored: list[str]
    generated_ids: tuple[str, str] | None = None
    """The first and last id made up (when the file maps none)."""
    constants: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    """What was read other than as written: cells mapped by ``--values``, choices matched ignoring case."""


# ------------------------------------------------------------------------------------------------- reading


def sniff_delimiter(text: str) -> str:
    """The delimiter that splits the first records of ``text`` into the same number (more than one) of cells
    most often; ``,`` when none does."""
    best, best_score = ",", (0, 0)
    for delimiter in DELIMITERS:
        records = []
        try:
            for record in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter):
                if any(cell.strip() for cell in record):
                    records.append(len(record))
                if len(records) >= 50:
                    break
        except csv.Error:  # not CSV with this delimiter (read_csv reports what is wrong with the chosen one)
            continue
        if not records or records[0] < 2:
            continue
        score = (sum(n == records[0] for n in records), records[0])
        if score > best_score:
            best, best_score = delimiter, score
    return best


def read_csv(path: Path, *, encoding: str | None = None, delimiter: str | None = None) -> Table:
    raw = path.read_bytes()
    if raw.startswith(b"PK\x03\x04"):
        raise InputError(str(path), "this is a ZIP file (an XLSX workbook?), not CSV text: save it as .xlsx")
    sniffed = encoding is None
    encoding = encoding or sniff_encoding(raw, str(path))
    try:
        text = raw.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise InputError(str(path), f"cannot be read as {encoding} ({exc}); give the file's --encoding") from None
    text = text.removeprefix("\ufeff")
    if delimiter is None:
        delimiter = "\t" if path.suffix.lower() == ".tsv" else sniff_delimiter(text)
    try:
        records = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as exc:
        raise InputError(str(path), f"not readable as CSV ({exc})") from None
    table = _table(str(path), records)
    table.encoding, table.delimiter = encoding, delimiter
    table.encoding_sniffed, table.wide_words = sniffed, wide_words(text)
    return table


def read_xlsx(path: Path, *, sheet: str | None = None) -> Table:
    try:
        import openpyxl
    except ImportError:
        raise KnowgapError("reading .xlsx files needs openpyxl: pip install 'knowgap[xlsx]'") from None
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises zipfile, KeyError and its own errors for a file it cannot read
        raise InputError(str(path), f"not a readable XLSX workbook ({type(exc).__name__}: {exc})") from None
    try:
        if sheet is not None and sheet not in book.sheetnames:
            raise InputError(str(path), f"no sheet '{sheet}' (sheets: {', '.join(book.sheetnames)})")
        ws = book[sheet] if sheet is not None else book.worksheets[0]
        records = [[_cell_text(v) for v in row] for row in ws.iter_rows(values_only=True)]
    finally:
        book.close()
    table = _table(f"{path} (sheet '{ws.title}')", records)
    table.sheet = ws.title
    return table


def _cell_text(value: Any) -> str:
    """An XLSX cell as the text a person sees: TRUE -> ``true``, 3.0 -> ``3``, a date in ISO form."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    return str(value)


def _table(file: str, records: list[list[str]]) -> Table:
    """Header and rows of ``records``; empty rows skipped, trailing unnamed empty columns dropped."""
    if not records or not any(cell.strip() for cell in records[0]):
        raise InputError(file, "the first row must be a header naming the columns", line=1)
    header = [cell.strip() for cell in records[0]]
    while header and not header[-1] and not any(len(r) >= len(header) and r[len(header) - 1].strip()
                                                for r in records[1:]):
        header.pop()
    for i, name in enumerate(header):
        if not name:
            raise InputError(file, f"row 1: column {i + 1} has no name (name it, or delete the column)")
        if name in header[:i]:
            raise InputError(file, f"row 1: two columns are named '{name}' (columns {header.index(name) + 1} "
                                   f"and {i + 1})")
    rows = []
    for number, record in enumerate(records[1:], start=2):
        if not any(cell.strip() for cell in record):
            continue
        extra = [c for c in record[len(header):] if c.strip()]
        if extra:
            raise InputError(file, f"row {number} has {len(header) + len(extra)} cells, the header names "
                                   f"{len(header)} columns (a delimiter or quote inside a cell?)")
        rows.append((number, {name: (record[i] if i < len(record) else "") for i, name in enumerate(header)}))
    if not rows:
        raise InputError(file, "holds a header but no rows")
    return Table(file=file, columns=header, rows=rows)


def read_table(path: Path, *, encoding: str | None = None, delimiter: str | None = None,
               sheet: str | None = None) -> Table:
    """A CSV (``.csv``, ``.tsv``, ``.txt``) or XLSX (``.xlsx``, ``.xlsm``) file as a :class:`Table`."""
    if not path.is_file():
        raise InputError(str(path), "file not found")
    suffix = path.suffix.lower()
    if suffix in XLSX_SUFFIXES:
        return read_xlsx(path, sheet=sheet)
    if suffix == ".xls":
        raise InputError(str(path), "old Excel .xls files are not read: save the sheet as .xlsx or CSV")
    return read_csv(path, encoding=encoding, delimiter=delimiter)


# ----------------------------------------------------------------------------------------- field types


def _plain(annotation: Any) -> Any:
    """``annotation`` without Optional and Annotated."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(args) != 1:
                return annotation
            annotation = args[0]
        else:
            return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def field_paths(model: type[BaseModel], prefix: str = "") -> dict[str, Any]:
    """Every field a cell can fill, by dotted path (a nested object's fields too), with its type."""
    out: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        annotation = _plain(info.annotation)
        out[prefix + name] = annotation
        if _is_model(annotation):
            out.update(field_paths(annotation, f"{prefix}{name}."))
    return out


def convert(text: str, annotation: Any) -> Any:
    """The value of a cell's ``text`` for a field of type ``annotation``; ValueError says what was expected."""
    kind = _plain(annotation)
    if kind is bool:
        low = text.lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        raise ValueError(f"expected true, false, 1 or 0, got '{text}'")
    if kind is int:
        if not re.fullmatch(r"[+-]?\d+", text):
            raise ValueError(f"expected a whole number, got '{text}'")
        return int(text)
    if kind is float:
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"expected a number, got '{text}'") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise ValueError(f"expected a finite number, got '{text}'")
        return number
    if typing.get_origin(kind) is Literal:  # in any case, as a sheet writes it (Positive): one value, or refused
        allowed = [str(v) for v in typing.get_args(kind)]
        same = [a for a in allowed if a.casefold() == text.casefold()]
        if text not in allowed and len(same) != 1:
            raise ValueError(f"'{text}' is not one of {', '.join(allowed)}{did_you_mean(text, allowed)} (a sheet's "
                             "own values are mapped with --values FIELD=FROM:TO,...)")
        return typing.get_args(kind)[allowed.index(text if text in allowed else same[0])]
    if kind is str:
        return text
    if typing.get_origin(kind) in (typing.Union, types.UnionType):  # e.g. int | str: the first that fits, text last
        options = sorted((a for a in typing.get_args(kind) if a is not type(None)), key=lambda a: a is str)
        for option in options:
            try:
                return convert(text, option)
            except ValueError:
                continue
        raise ValueError(f"'{text}' fits none of {', '.join(getattr(a, '__name__', str(a)) for a in options)}")
    try:
        return json.loads(text)
    except ValueError:
        if kind is Any:
            return text
        shape = '["a", "b"]' if typing.get_origin(kind) in (list, tuple, set) else '{"key": "value"}'
        raise ValueError(f"expected JSON such as {shape}, got '{text[:40]}'") from None


def _put(row: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for part in parents:
        row = row.setdefault(part, {})
    row[last] = value


# ------------------------------------------------------------------------------------------------ mapping


def _pairs(items: list[str], flag: str, left: str, right: str) -> list[tuple[str, str]]:
    """``LEFT=RIGHT`` items split at the ``=`` a field name cannot hold: the last one after a column name (which
    may hold one), the first one before a value."""
    out = []
    for item in items:
        head, sep, tail = item.rpartition("=") if right == "FIELD" else item.partition("=")
        if not sep or not head.strip() or not tail.strip():
            raise KnowgapError(f"{flag} '{item}': expected {left}={right}")
        out.append((head.strip(), tail.strip()))
    return out


def plan_columns(table: Table, fields: dict[str, Any], maps: list[str], ignore: list[str],
                 constants: dict[str, str]) -> dict[str, str]:
    """Column -> field: the ``--map`` pairs, then columns named like a field; every other column must be
    ignored. Problems (unknown columns or fields, a field filled twice) raise one error listing them all."""
    problems: list[str] = []
    known_fields = list(fields)
    mapping: dict[str, str] = {}
    for column, name in _pairs(maps, "--map", "COLUMN", "FIELD"):
        if column not in table.columns:
            problems.append(f"--map {column}={name}: no column '{column}'{did_you_mean(column, table.columns)} "
                            f"(columns: {', '.join(table.columns)})")
        elif name not in fields:
            problems.append(f"--map {column}={name}: no field '{name}'{did_you_mean(name, known_fields)} "
                            f"(fields: {', '.join(known_fields)})")
        else:
            mapping[column] = name
    for column in ignore:
        if column not in table.columns:
            problems.append(f"--ignore {column}: no column '{column}'{did_you_mean(column, table.columns)}")
    for column in table.columns:
        if column not in mapping and column not in ignore and column in fields:
            mapping[column] = column
    leftover = [c for c in table.columns if c not in mapping and c not in ignore]
    if leftover:
        problems.append(f"{table.file}: columns that fill no field: {', '.join(leftover)} (map each with --map "
                        "COLUMN=FIELD or drop it with --ignore COLUMN; fields: " + ", ".join(known_fields) + ")")
    by_field: dict[str, list[str]] = {}
    for column, name in mapping.items():
        by_field.setdefault(name, []).append(column)
    for name, columns in by_field.items():
        if len(columns) > 1:
            problems.append(f"field '{name}' is filled by more than one column: {', '.join(columns)}")
        if name in constants:
            problems.append(f"field '{name}' is filled by column '{columns[0]}' and by --set")
    for path in list(mapping.values()) + list(constants):
        for other in list(mapping.values()) + list(constants):
            if other.startswith(path + "."):
                problems.append(f"field '{path}' and its part '{other}' are both filled")
    raise_problems(problems)
    return mapping


ValueMaps = dict[str, dict[str, tuple[str, str]]]
"""Field -> {a sheet's value, case-folded: (that value as given, the value the field gets)} (``--values``)."""


def value_maps(items: Sequence[str], fields: dict[str, Any], mapping: dict[str, str]) -> ValueMaps:
    """The ``--values FIELD=FROM:TO,FROM:TO`` items (repeatable; a field's pairs add up): a cell of a column that
    fills FIELD whose text is FROM (any case, outer spaces ignored) is read as TO; ``FROM:`` leaves the field
    out. Every TO must be a value of the field. Problems raise one error listing them all."""
    problems: list[str] = []
    out: ValueMaps = {}
    for item in items:
        name, sep, spec = (part.strip() for part in item.partition("="))
        if not sep or not name or not spec:
            problems.append(f"--values '{item}': expected FIELD=FROM:TO,FROM:TO (e.g. "
                            "expected_sentiment=Pos:positive,Neg:negative)")
            continue
        if name not in fields:
            column = f" (column '{name}' fills field '{mapping[name]}')" if name in mapping else ""
            problems.append(f"--values {name}: no field '{name}'{column or did_you_mean(name, list(fields))}")
            continue
        if name not in mapping.values():
            problems.append(f"--values {name}: no column fills field '{name}' (--values reads the cells of the column "
                            "that fills it)")
            continue
        pairs = out.setdefault(name, {})
        for part in spec.split(","):
            source, colon, target = (p.strip() for p in part.rpartition(":"))
            if not colon or not source:
                problems.append(f"--values {name}: '{part.strip()}' is not FROM:TO")
                continue
            if target:
                try:
                    convert(target, fields[name])
                except ValueError as exc:
                    problems.append(f"--values {name}: {source}:{target}: {exc}")
                    continue
            key = source.casefold()
            if key in pairs and pairs[key][1] != target:
                problems.append(f"--values {name}: '{source}' is mapped to '{pairs[key][1]}' and to '{target}'")
            pairs[key] = (source, target)
    raise_problems(problems)
    return out


def _counted(counts: Counter[tuple[str, str]]) -> str:
    return ", ".join(f"'{a}' -> {b or '(left out)'}: {n}" for (a, b), n in sorted(counts.items()))


# ------------------------------------------------------------------------------------------------- import


def _where(file: str, row: int, column: str | None, name: str | None) -> str:
    where = f"{file}, row {row}"
    if column is not None:
        where += f", column '{column}'"
    if name is not None:
        where += f" (field '{name}')"
    return where


def build_rows(table: Table, fmt: SuiteData, mapping: dict[str, str], constants: dict[str, str],
               id_prefix: str, source: str, *, values: ValueMaps | None = None,
               notes: list[str] | None = None) -> tuple[list[dict[str, Any]], tuple[str, str] | None]:
    """The case rows of ``table`` (each validated by the suite's case model) and the ids made up, if any;
    ``source`` names the spreadsheet in a made-up provenance field. ``values``: the ``--values`` maps; ``notes``
    gets a line for each map (the cells it mapped, its values that matched no cell) and for each field whose
    cells matched a choice only ignoring case."""
    values = values or {}
    mapped: dict[str, Counter[tuple[str, str]]] = {name: Counter() for name in values}
    folded: dict[str, Counter[tuple[str, str]]] = {}
    fields = field_paths(fmt.model)
    problems: list[str] = []
    fixed: dict[str, Any] = {}
    for name, text in constants.items():
        try:
            fixed[name] = convert(text, fields[name])
        except ValueError as exc:
            problems.append(f"--set {name}={text}: {exc}")
    make_ids = fmt.id_field is not None and fmt.id_field not in mapping.values() and fmt.id_field not in fixed
    filled = {name.split(".")[0] for name in [*mapping.values(), *fixed, fmt.id_field, fmt.provenance_field] if name}
    for name, info in fmt.model.model_fields.items():
        if info.is_required() and name not in filled:
            problems.append(f"{table.file}: no column fills the required field '{name}' (map one with --map "
                            f"COLUMN={name}, or give every row the same value with --set {name}=VALUE)")
    raise_problems(problems)
    width = len(str(len(table.rows)))
    column_of = {name: column for column, name in mapping.items()}
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for index, (number, cells) in enumerate(table.rows, start=1):
        row: dict[str, Any] = {}
        before = len(problems)
        if make_ids and fmt.id_field:
            row[fmt.id_field] = f"{id_prefix}{index:0{width}d}"
        for column, name in mapping.items():
            text = cells[column].strip()
            if text and text.casefold() in values.get(name, {}):
                given, text = values[name][text.casefold()]
                mapped[name][(given, text)] += 1
            if not text:
                continue
            try:
                value = convert(text, fields[name])
            except ValueError as exc:
                problems.append(f"{_where(table.file, number, column, name)}: {exc}")
                continue
            if isinstance(value, str) and value != text:  # a choice matched ignoring case
                folded.setdefault(name, Counter())[(text, value)] += 1
            _put(row, name, value)
        for name, value in fixed.items():
            _put(row, name, value)
        if fmt.provenance_field and fmt.provenance_field not in mapping.values() and \
                fmt.provenance_field not in fixed:
            row[fmt.provenance_field] = f"{source}, row {number} (knowgap data import)"
        if len(problems) > before:
            continue  # a cell that did not convert: its field would only be reported again as missing
        try:
            fmt.model.model_validate(row)
        except ValidationError as exc:
            for error in exc.errors():
                path = ".".join(str(p) for p in error["loc"])
                owner = next((n for n in column_of if path == n or path.startswith(n + ".")), None)
                where = _where(table.file, number, column_of[owner] if owner else None, path or None)
                problems.append(f"{where}: {error['msg']}")
            continue
        ident = row.get(fmt.id_field) if fmt.id_field else None
        if isinstance(ident, str):
            if ident in seen:
                problems.append(f"{_where(table.file, number, column_of.get(fmt.id_field or ''), fmt.id_field)}: "
                                f"duplicate id '{ident}' (also row {seen[ident]})")
            seen[ident] = number
        rows.append({name: row[name] for name in fmt.model.model_fields if name in row})  # the model's order
    raise_problems(problems)
    if notes is not None:
        for name, counts in mapped.items():
            notes.append(f"--values {name}: {sum(counts.values())} cells mapped ({_counted(counts) or 'none'})")
            unused = [given for key, (given, _) in values[name].items()
                      if not any(g.casefold() == key for g, _ in counts)]
            if unused:
                notes.append(f"--values {name}: no cell holds {', '.join(repr(u) for u in unused)}")
        for name, counts in folded.items():
            notes.append(f"field '{name}': {sum(counts.values())} cells matched a value ignoring case "
                         f"({_counted(counts)})")
    ids = (rows[0][fmt.id_field], rows[-1][fmt.id_field]) if make_ids and fmt.id_field else None
    return rows, ids


def import_table(suite: str, path: Path, out: Path, *, maps: Sequence[str] = (), ignore: Sequence[str] = (),
                 sets: Sequence[str] = (), values: Sequence[str] = (), id_prefix: str | None = None,
                 encoding: str | None = None, delimiter: str | None = None, sheet: str | None = None) -> ImportResult:
    """Convert the spreadsheet ``path`` into ``suite``'s case file ``out`` (see the module's docstring)."""
    fmt = case_data(suite)
    fields = field_paths(fmt.model)
    constants = dict(_pairs(list(sets), "--set", "FIELD", "VALUE"))
    unknown = [f"--set {name}: no field '{name}'{did_you_mean(name, list(fields))}" for name in constants
               if name not in fields]
    if fmt.id_field in constants:
        unknown.append(f"--set {fmt.id_field}: every case needs its own id (map a column, or let ids be made)")
    raise_problems(unknown)
    table = read_table(path, encoding=encoding, delimiter=delimiter, sheet=sheet)
    mapping = plan_columns(table, fields, list(maps), list(ignore), constants)
    maps_of_values = value_maps(values, fields, mapping)
    prefix = id_prefix if id_prefix is not None else re.sub(r"[^\w-]+", "-", path.stem).strip("-") + "-"
    source = path.name + (f" (sheet '{table.sheet}')" if table.sheet else "")
    notes: list[str] = []
    rows, ids = build_rows(table, fmt, mapping, constants, prefix, source, values=maps_of_values, notes=notes)
    write_checked(suite, out, rows)
    return ImportResult(out=out, cases=len(rows), table=table, mapping=mapping,
                        ignored=[c for c in table.columns if c not in mapping], generated_ids=ids,
                        constants=constants, notes=notes)
