"""A suite's data part asked by the suite's name (:class:`knowgap.engine.suite_data.SuiteData`: its case file's
model, check, import fields, other kinds of file and injection hook), and checking a case file strictly with it:
what ``knowgap data check SUITE FILE`` and the commands that write case files (``knowgap data import`` /
``inject``) call."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from knowgap.engine.suite_data import SuiteData, data_of
from knowgap.errors import InputError, KnowgapError
from knowgap.strictjsonl import CaseFileCheck, Problem
from knowgap.suites import available, get_suite


def case_data(suite: str) -> SuiteData:
    """The data part of the suite ``suite``; KnowgapError for an unknown suite or one that reads no case file."""
    data = data_of(get_suite(suite))
    if data is None:
        raise KnowgapError(f"suite '{suite}' reads no case file (it declares no data part: docs/architecture.md, "
                           "'Adding a suite')")
    return data


def suites_with(has: Callable[[SuiteData], bool]) -> list[str]:
    """The suites whose data part ``has`` something, sorted (every suite is imported: for messages only)."""
    return [name for name, suite in available().items() if (data := data_of(suite)) is not None and has(data)]


def case_file(suite_name: str, scenario: str | None = None) -> SuiteData:
    """The case file ``suite_name`` reads (with ``scenario``: the other kind of file of that name, abstain's
    question files); KnowgapError for a suite without one, a scenario it does not know or a suite with none."""
    data = case_data(suite_name)
    if scenario is None or scenario == data.main_file:
        return data
    if not data.other_files:
        having = suites_with(lambda d: bool(d.other_files))
        which = f"the {having[0]} suite" if len(having) == 1 else f"the suites {', '.join(having)}"
        raise KnowgapError(f"--scenario applies to {which} only, not '{suite_name}'")
    if scenario not in data.other_files:
        known = [name for name in (data.main_file, *data.other_files) if name]
        raise KnowgapError(f"unknown --scenario '{scenario}' (known: {', '.join(known)})")
    return data.other_files[scenario]


def check(suite_name: str, path: str | Path, scenario: str | None = None) -> CaseFileCheck[Any]:
    """Every problem of ``path`` as ``suite_name``'s case file, the records that validated, their kinds; with
    ``scenario``, as the suite's other kind of file of that name (abstain's question files)."""
    data = case_file(suite_name, scenario)
    try:
        return data.check(Path(path))
    except InputError as exc:  # the file cannot be read at all (missing, a folder, a spreadsheet, not UTF-8)
        return CaseFileCheck(str(path), "cases", problems=[Problem(file=exc.file, line=exc.line, field=exc.field,
                                                                   message=_message_of(exc))])


def check_file(suite_name: str, path: str | Path) -> list[Problem]:
    """Every problem of ``path`` as ``suite_name``'s case file; [] when it is fine."""
    return check(suite_name, path).problems


def _message_of(exc: InputError) -> str:
    """The message of an InputError without the "file, line, field: " it starts with."""
    text = str(exc)
    where = str(Problem(file=exc.file, line=exc.line, field=exc.field, message=""))
    return text[len(where):].strip() if text.startswith(where.rstrip()) else text
