"""Case files users bring: check a suite's case file strictly, print its JSON Schema, import a spreadsheet
(:mod:`.tabular`), build injected cases (:mod:`.inject`) (``knowgap data``).

The Python API (stable; ``knowgap data import`` / ``inject`` call it on what they write):

- :func:`check_file` ``(suite_name, path) -> list[Problem]``: every problem of ``path`` read as ``suite_name``'s
  case file, one :class:`Problem` each (file, 1-based line, dotted field, message; ``str(problem)`` is the line
  to print); [] when the file is fine. Raises :class:`~knowgap.errors.KnowgapError` only for an unknown suite or
  a suite without a data part.
- :func:`check` ``(suite_name, path) -> CaseFileCheck``: the same, with the records that validated and their
  count by kind (``summary()`` is the "N cases OK (kinds...)" line).
- :func:`case_schema` ``(suite_name) -> dict``: the JSON Schema of one line of the suite's case file.

The reading itself lives in :mod:`knowgap.strictjsonl` (below the suites, whose loaders use it). Each suite
declares its case file in its data part (:attr:`knowgap.Suite.data`, a :class:`~knowgap.engine.suite_data.SuiteData`:
the model of a line, its check, the fields an import fills, its other kinds of file, its injection hook); this
package asks the part for everything and names no suite, so a plugin's suite gets every ``knowgap data`` command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowgap.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "knowgap.casefiles.schema": ("case_schema",),
    "knowgap.casefiles.strict": ("check", "check_file"),
    "knowgap.strictjsonl": ("CaseFileCheck", "Problem"),
})
__all__ = ["CaseFileCheck", "Problem", "case_schema", "check", "check_file"]

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use
    from knowgap.casefiles.schema import case_schema
    from knowgap.casefiles.strict import check, check_file
    from knowgap.strictjsonl import CaseFileCheck, Problem
