"""Reading a JSONL case file strictly: every problem of the file, one line each, naming file, line and field.

What :func:`read_strict` refuses, beyond what the record's pydantic model says: an unknown field (with a
did-you-mean: ``expected_sentment`` → ``expected_sentiment``), a value of the wrong JSON type (``"true"`` or
``"yes"`` for a boolean, ``"3"`` for a number: pydantic's strict mode, so nothing is coerced silently), a
duplicate id (naming both lines), and a file that is not JSONL at all (a CSV, an Excel workbook, one JSON
array or one pretty-printed JSON object), which it says plainly, pointing at ``knowgap data import``. Blank lines,
a UTF-8 byte-order mark and CRLF line ends are fine (as in :mod:`knowgap.jsonl`).

It sits below the suites (their loaders call it for ``knowgap run SUITE --data FILE``) and below the engine
(a suite's data part, :meth:`knowgap.engine.suite_data.SuiteData.check`, returns a :class:`CaseFileCheck`), so
``knowgap run`` and ``knowgap data check`` say the same thing about one file.
"""

from __future__ import annotations

import difflib
import json
import types
import typing
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from knowgap.errors import InputError

M = TypeVar("M", bound=BaseModel)

MAX_SHOWN = 20
"""Problems an error message lists (the rest are counted)."""

def import_hint(path: str | Path, suite: str = "SUITE") -> str:
    """How to turn a spreadsheet into a case file (``knowgap data import``)."""
    out = Path(path).with_suffix(".jsonl").name
    return f"convert it with `knowgap data import {suite} {path} --map COLUMN=FIELD ... --out {out}`"


class Problem(BaseModel):
    """One problem of an input file: where (file, 1-based line, dotted field path) and what."""

    model_config = ConfigDict(frozen=True)

    file: str
    line: int | None = None
    field: str | None = None
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f", line {self.line}"
        if self.field:
            where += f", field '{self.field}'"
        return f"{where}: {self.message}"


def format_problems(problems: Sequence[Problem], limit: int = MAX_SHOWN) -> str:
    """One line per problem, the first ``limit`` of them, then how many more there are."""
    lines = [str(p) for p in problems[:limit]]
    if len(problems) > limit:
        lines.append(f"... and {len(problems) - limit} more problems ({len(problems)} in all)")
    return "\n".join(lines)


class ProblemsError(InputError):
    """A file with one or more problems; the message lists them, one line each."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        first = problems[0]
        super().__init__(first.file, first.message, line=first.line, field=first.field)
        self.problems = list(problems)
        self.args = (format_problems(self.problems),)


@dataclass(frozen=True)
class CaseFileCheck(Generic[M]):
    """What checking a case file found: the records that validated (with their line numbers) and every problem.

    ``kinds`` counts the records by kind (extract: normal / adversarial / calibration), for the summary line."""

    file: str
    what: str
    records: list[tuple[int, M]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    kinds: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        """``FILE: 76 cases OK (normal 40, adversarial 24, calibration 12)``."""
        kinds = ", ".join(f"{kind} {n}" for kind, n in self.kinds.items())
        what = self.what[:-1] if len(self.records) == 1 and self.what.endswith("s") else self.what
        return f"{self.file}: {len(self.records)} {what} OK" + (f" ({kinds})" if kinds else "")

    def raise_problems(self) -> None:
        """Raise :class:`ProblemsError` listing every problem (nothing when there is none)."""
        if self.problems:
            raise ProblemsError(self.problems)

    def with_rule(self, rule: Callable[[M], Iterable[tuple[str | None, str]]]) -> CaseFileCheck[M]:
        """This check plus a rule pydantic cannot express: ``rule(record)`` yields (field or None, message) for
        each problem of the record (nothing when it is fine)."""
        found = [Problem(file=self.file, line=number or None, field=name, message=message)
                 for number, record in self.records for name, message in rule(record)]
        return CaseFileCheck(self.file, self.what, self.records, sorted([*self.problems, *found], key=_order),
                             self.kinds)

    def counted(self, kind: Callable[[M], str]) -> CaseFileCheck[M]:
        """This check with its records counted by ``kind(record)``, most frequent first."""
        counts = Counter(kind(record) for _, record in self.records)
        return CaseFileCheck(self.file, self.what, self.records, self.problems, dict(counts.most_common()))


def _order(problem: Problem) -> int:
    """Problems sort by line (those of the whole file first); within a line they keep the order found."""
    return problem.line or 0


# ------------------------------------------------------------------------------------------- reading
def read_text(path: str | Path, what: str = "JSONL", suite: str = "SUITE") -> str:
    """The text of a user's file (UTF-8, a byte-order mark allowed); InputError when it is missing, a folder,
    a spreadsheet or not UTF-8."""
    file = Path(path)
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise InputError(str(file), "file not found") from None
    except IsADirectoryError:
        raise InputError(str(file), f"is a folder, expected a {what} file") from None
    if data.startswith(b"PK\x03\x04") or data.startswith(b"\xd0\xcf\x11\xe0"):
        raise InputError(str(file), f"is an Excel workbook (or another zip/OLE file), not {what}: "
                         f"{import_hint(file, suite)}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(str(file), f"not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8") from None


def not_jsonl(text: str, path: str | Path = "FILE", suite: str = "SUITE") -> str | None:
    """Why ``text`` is plainly not JSONL (a CSV, one JSON array, one pretty-printed JSON object); None when its
    first non-blank line is a JSON value (or when it cannot tell)."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    try:
        json.loads(first)
        return None
    except ValueError:
        pass
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, list):
        return (f"holds one JSON array of {len(whole)} items, not JSONL (one JSON object per line): write each item "
                "on its own line, e.g. `jq -c '.[]' FILE > FILE.jsonl`")
    if isinstance(whole, dict):
        return ("holds one JSON object over several lines, not JSONL (one JSON object per line, each on a single "
                "line): e.g. `jq -c . FILE > FILE.jsonl`")
    if not first.startswith(("{", "[")) and any(sep in first for sep in (",", ";", "\t")):
        return f"looks like a CSV file (first line: {_short(first, 80)}), not JSONL: {import_hint(path, suite)}"
    return None


def read_strict(path: str | Path, model: type[M], *, what: str = "cases", id_field: str | None = "id",
                strict: bool = True, suite: str = "SUITE") -> CaseFileCheck[M]:
    """Every line of ``path`` validated as ``model`` (pydantic strict mode unless ``strict`` is False), every
    problem collected: none of it raises but a file that cannot be read at all (InputError)."""
    file = str(path)
    text = read_text(path, suite=suite)
    reason = not_jsonl(text, path, suite)
    if reason:
        return CaseFileCheck(file, what, problems=[Problem(file=file, message=reason)])
    records: list[tuple[int, M]] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            problems.append(Problem(file=file, line=number, message=f"not valid JSON ({exc})"))
            continue
        if not isinstance(row, dict):
            problems.append(Problem(file=file, line=number,
                                    message=f"expected a JSON object, got {_json_type(row)}"))
            continue
        if id_field and isinstance(row.get(id_field), str | int):
            key = str(row[id_field])
            if key in seen:
                problems.append(Problem(file=file, line=number, field=id_field,
                                        message=f"duplicate {id_field} '{key}' (also on line {seen[key]})"))
            else:
                seen[key] = number
        try:
            records.append((number, model.model_validate(row, strict=strict)))
        except ValidationError as exc:
            problems.extend(validation_problems(exc, model, file, number))
    if not records and not problems:
        problems.append(Problem(file=file, message=f"holds no {what}"))
    return CaseFileCheck(file, what, records, sorted(problems, key=_order))


# ------------------------------------------------------------------------------ pydantic errors, readable
def validation_problems(exc: ValidationError, model: type[BaseModel], file: str,
                        line: int | None = None, prefix: str = "") -> list[Problem]:
    """One problem per error pydantic found, each naming the field; an unknown field gets a did-you-mean."""
    out = []
    for error in exc.errors():
        loc = tuple(error["loc"])
        name = ".".join(str(part) for part in loc)
        out.append(Problem(file=file, line=line, field=(prefix + name) or None,
                           message=_message(error, model, loc)))
    return out


def _message(error: Any, model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    kind, msg = error["type"], str(error["msg"])
    if kind == "extra_forbidden":
        fields = field_names(_annotation_at(model, loc[:-1]))
        close = difflib.get_close_matches(str(loc[-1]), fields, n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'? " if close else ""
        return f"unknown field ({hint}the fields are: {', '.join(fields)})" if fields else "unknown field"
    if kind == "missing":
        return "missing (a required field)"
    if msg.startswith(("Value error, ", "Assertion failed, ")):
        msg = msg.split(", ", 1)[1]
    if "input" in error and kind not in ("model_type", "dict_type") and not isinstance(error["input"], dict | list):
        msg += f" (got {_json_type(error['input'])} {_short(json.dumps(error['input'], ensure_ascii=False), 60)})"
    elif "input" in error and isinstance(error["input"], dict | list) and kind.endswith("_type"):
        msg += f" (got {_json_type(error['input'])})"
    return msg


def field_names(annotation: Any) -> list[str]:
    """The field names (by alias where one is set) of a pydantic model (or of the models of an optional union);
    [] for anything else."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [name for arg in typing.get_args(annotation) for name in field_names(arg)]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [info.alias or name for name, info in annotation.model_fields.items()]
    return []


def _annotation_at(annotation: Any, loc: Iterable[Any]) -> Any:
    """The type found at ``loc`` inside ``annotation`` (models, lists, dicts, optional unions); None when lost."""
    current = annotation
    for part in loc:
        current = _step(current, part)
        if current is None:
            return None
    return current


def _step(annotation: Any, part: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _step(arg, part)
            if found is not None:
                return found
        return None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        for name, info in annotation.model_fields.items():
            if part in (name, info.alias):
                return info.annotation
        return None
    if origin in (list, tuple, set, frozenset, Sequence) and isinstance(part, int):
        args = typing.get_args(annotation)
        return args[0] if args else None
    if origin is dict:
        args = typing.get_args(annotation)
        return args[1] if len(args) == 2 else None
    return None


def _json_type(value: Any) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array",
            dict: "an object", type(None): "null"}.get(type(value), type(value).__name__)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
