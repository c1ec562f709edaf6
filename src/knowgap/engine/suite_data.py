"""The data part of a suite: the case file users bring, which every ``knowgap data`` command asks for.

A suite declares it as a class attribute, ``data = SuiteData(MyCase, ...)`` (:attr:`knowgap.Suite.data`), and
``knowgap data schema / check / import / inject SUITE`` (:mod:`knowgap.casefiles`) ask it for everything, for a
built-in suite and a plugin's alike, never naming a suite:

- ``model``: one line of the case file (a pydantic model, ``extra="forbid"``): the JSON Schema ``data schema``
  prints; the fields ``data import`` maps a sheet's columns to, each cell converted by its field's type (a
  ``Literal`` field's values are its choices, read in any case); the model every imported row must pass;
- :meth:`SuiteData.check`: every problem of a file, the suite's own rules too (by default each line strictly as
  ``model``, then ``rules``; a suite with a format of its own gives ``checker``). The suite's loader (``run
  --data``) calling the same check makes ``run`` and ``data check`` say the same thing;
- ``id_field`` / ``provenance_field``: what ``data import`` fills when no column does;
- ``other_files``: other kinds of case file the suite reads, by name (``data check SUITE FILE --scenario NAME``);
- ``injection``: how ``data inject`` plants attacks in the file (:class:`~knowgap.engine.case_injection.CaseInjection`);
  None: the suite has no injected cases;
- ``units``: the units of the suite's shipped default dataset, read from its data folder (a case id, a question, a
  role's task): what its dataset card's re-read samples (:mod:`knowgap.suites.dataset_cards`); :func:`record_ids`
  for a JSONL file of records with an ``id``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from knowgap.engine.case_injection import CaseInjection, CaseRecord
from knowgap.errors import InputError
from knowgap.jsonl import read_lines
from knowgap.strictjsonl import CaseFileCheck, read_strict

Rule = Callable[[Any], Iterable[tuple[str | None, str]]]
"""A rule pydantic cannot express: (field or None, message) for each problem of one validated record."""


class SuiteData:
    """A suite's data part (see the module): its case file's model, check, import fields, other file kinds and
    injection hook. Subclass it to read a file another way (:meth:`records`)."""

    def __init__(self, model: type[BaseModel], *, id_field: str | None = "id", provenance_field: str | None = None,
                 what: str = "cases", rules: Sequence[Rule] = (), kind: Callable[[Any], str] | None = None,
                 checker: Callable[[Path], CaseFileCheck[Any]] | None = None,
                 other_files: Mapping[str, SuiteData] | None = None, main_file: str | None = None,
                 injection: CaseInjection | None = None, units: Callable[[Path], list[str]] | None = None) -> None:
        self.model = model
        """One line of the case file."""
        self.id_field = id_field
        """The field naming a record: unique in a file, made by ``data import`` when no column fills it (None: the
        suite numbers its records itself)."""
        self.provenance_field = provenance_field
        """A field saying where a record came from, filled by ``data import`` with the sheet's file and row when
        no column fills it (None: none)."""
        self.what = what
        """What the records are, plural ("cases", "questions"): the check's summary line."""
        self.rules = tuple(rules)
        """The suite's own rules, run by the default check on every validated record."""
        self.kind = kind
        """A record's kind, counted in the check's summary line ("8 cases OK (answerable 4, unanswerable 4)")."""
        self.checker = checker
        """The whole check, replacing the default (a suite that reads another format, or has its loader)."""
        self.other_files: dict[str, SuiteData] = dict(other_files or {})
        """Other kinds of case file the suite reads, by the name ``--scenario`` gives."""
        self.main_file = main_file
        """The name ``--scenario`` may give this (main) file, besides none (abstain: ``loo``)."""
        self.injection = injection
        """How ``knowgap data inject`` plants attacks in the file; None: the suite has no injected cases."""
        self.units = units
        """The unit ids of the suite's shipped default dataset, read from its data folder (the dataset card's re-read
        samples them); None: the suite ships no dataset card."""
        self.suite = "SUITE"
        """The suite's name, set when the part is assigned to a suite class (in messages)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.named(str(getattr(owner, "name", self.suite)))

    def named(self, suite: str) -> SuiteData:
        """This part, knowing the name of its suite (and so its other files)."""
        self.suite = suite
        for other in self.other_files.values():
            other.suite = suite
        return self

    def check(self, path: Path) -> CaseFileCheck[Any]:
        """Every problem of the case file ``path`` and the records that validated, without running anything;
        raises (InputError) only when the file cannot be read at all."""
        if self.checker is not None:
            return self.checker(path)
        result = read_strict(path, self.model, what=self.what, id_field=self.id_field, suite=self.suite)
        for rule in self.rules:
            result = result.with_rule(rule)
        return result.counted(self.kind) if self.kind else result

    def load(self, path: Path) -> list[Any]:
        """The records of ``path``; a file with problems raises one InputError listing them all (a suite's
        ``cases()`` reading ``--data`` through it says what ``knowgap data check`` says)."""
        result = self.check(path)
        result.raise_problems()
        return [record for _, record in result.records]

    def records(self, path: Path) -> list[CaseRecord]:
        """The records of ``path``, checked (a file with problems raises them all), each with its id and its row
        as written (``knowgap data inject``)."""
        result = self.check(path)
        result.raise_problems()
        try:
            rows = dict(read_lines(path))
        except InputError:  # not JSONL (a JSON file the checker reads): the validated records, dumped
            rows = {}
        out = []
        for line, case in result.records:
            row = rows.get(line)
            if not isinstance(row, dict):
                row = case.model_dump(mode="json", exclude_unset=True)
            ident = getattr(case, self.id_field) if self.id_field else line
            out.append(CaseRecord(id=str(ident), row=row, case=case))
        return out

    def schema(self) -> dict[str, Any]:
        """The JSON Schema (draft 2020-12, as pydantic writes it) of one line of the case file."""
        schema = self.model.model_json_schema()
        schema.setdefault("description", f"One line (a JSON object) of a knowgap '{self.suite}' case file (JSONL).")
        return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def record_ids(file: str) -> Callable[[Path], list[str]]:
    """``units`` of a shipped dataset that is one JSONL file in the data folder: each record's ``id``."""

    def read(folder: Path) -> list[str]:
        return [str(row["id"]) for _, row in read_lines(folder / file)]

    return read


def data_of(suite: type) -> SuiteData | None:
    """The data part of the suite class ``suite``: its ``data``; for a suite written before knowgap had the part
    (a plugin declaring ``case_file_model`` and maybe a ``check_case_file`` classmethod), one made from those;
    None: the suite reads no case file."""
    data = getattr(suite, "data", None)
    if isinstance(data, SuiteData):
        return data
    model = getattr(suite, "case_file_model", None)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return None
    checker = getattr(suite, "check_case_file", None)
    return SuiteData(model, checker=checker if callable(checker) else None).named(str(getattr(suite, "name", "SUITE")))
