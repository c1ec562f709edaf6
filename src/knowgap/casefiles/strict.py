"""Checking a suite's case file strictly, by suite name: what ``knowgap data check SUITE FILE`` and the
commands that write case files (``knowgap data import`` / ``inject``) call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from knowgap.engine.suite import Suite
from knowgap.errors import InputError, KnowgapError
from knowgap.strictjsonl import CaseFileCheck, Problem
from knowgap.suites import get_suite


def case_suite(suite_name: str) -> type[Suite]:
    """The suite ``suite_name``; KnowgapError when it reads no case file."""
    suite = get_suite(suite_name)
    if suite.case_file_model is None:
        raise KnowgapError(f"suite '{suite_name}' reads no case file (it sets no case_file_model)")
    return suite


def check(suite_name: str, path: str | Path, scenario: str | None = None) -> CaseFileCheck[Any]:
    """Every problem of ``path`` as ``suite_name``'s case file, the records that validated, their kinds; with
    ``scenario`` (abstain only, not ``loo``), as a question file of that scenario."""
    suite = case_suite(suite_name)
    try:
        if scenario_file(suite_name, scenario):
            from knowgap.suites.abstain.scenario_data import check_scenario_file

            return check_scenario_file(str(scenario), Path(path))
        return suite.check_case_file(Path(path))
    except InputError as exc:  # the file cannot be read at all (missing, a folder, a spreadsheet, not UTF-8)
        return CaseFileCheck(str(path), "cases", problems=[Problem(file=exc.file, line=exc.line, field=exc.field,
                                                                   message=_message_of(exc))])


def scenario_file(suite_name: str, scenario: str | None) -> bool:
    """True when ``--scenario`` names an abstain question file; KnowgapError for a scenario it does not know or
    another suite."""
    if scenario is None:
        return False
    from knowgap.suites.abstain.scenario_data import SCENARIOS

    if suite_name != "abstain":
        raise KnowgapError(f"--scenario applies to the abstain suite only, not '{suite_name}'")
    if scenario not in SCENARIOS:
        raise KnowgapError(f"unknown --scenario '{scenario}' (known: {', '.join(SCENARIOS)})")
    return scenario != "loo"


def check_file(suite_name: str, path: str | Path) -> list[Problem]:
    """Every problem of ``path`` as ``suite_name``'s case file; [] when it is fine."""
    return check(suite_name, path).problems


def _message_of(exc: InputError) -> str:
    """The message of an InputError without the "file, line, field: " it starts with."""
    text = str(exc)
    where = str(Problem(file=exc.file, line=exc.line, field=exc.field, message=""))
    return text[len(where):].strip() if text.startswith(where.rstrip()) else text
