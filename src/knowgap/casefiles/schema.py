"""The JSON Schema of a suite's case file (one line of it): what ``knowgap data schema SUITE`` prints."""

from __future__ import annotations

from typing import Any

from knowgap.casefiles.strict import case_suite, scenario_file


def case_schema(suite_name: str, scenario: str | None = None) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12, as pydantic writes it) of one line of ``suite_name``'s case file (with
    ``scenario``: of an abstain scenario's question file)."""
    model = case_suite(suite_name).case_file_model
    if scenario_file(suite_name, scenario):
        from knowgap.suites.abstain.scenario_data import ScenarioItem

        model = ScenarioItem
    assert model is not None  # case_suite refuses a suite without one
    schema = model.model_json_schema()
    schema.setdefault("description", f"One line (a JSON object) of a knowgap '{suite_name}' case file (JSONL).")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
