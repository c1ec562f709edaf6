"""The JSON Schema of a suite's case file (one line of it): what ``knowgap data schema SUITE`` prints."""

from __future__ import annotations

from typing import Any

from knowgap.casefiles.strict import case_file


def case_schema(suite_name: str, scenario: str | None = None) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12, as pydantic writes it) of one line of ``suite_name``'s case file (with
    ``scenario``: of the suite's other kind of file of that name, abstain's question files)."""
    return case_file(suite_name, scenario).schema()
