"""Each suite names the judge prompts its options use, for the manifest (and the resume check)."""

from __future__ import annotations

from typing import Any

import pytest

from knowgap.suites import get_suite


@pytest.mark.parametrize(("suite", "options", "expected"), [
    ("clarify", {}, {"rubric": "clarify-rubric-v2-geval", "correctness": "clarify-correctness-v1"}),
    ("clarify", {"no_rubric": True, "turns": 2}, {"correctness": "clarify-correctness-v1",
                                                  "simulated_user": "clarify-user-v1"}),
    ("partial", {}, {"rubric": "partial-rubric-v2-geval"}),
    ("partial", {"no_rubric": True}, {}),
    ("extract", {}, {"claims": "extract-claims-v1"}),
    ("extract", {"faithfulness_runs": 0}, {}),
    ("abstain", {"factuality_judge": "llm"}, {"abstention": "offline:zh+en detector",
                                              "factuality": "factuality_v1"}),
    ("starter", {}, {}),
])
def test_judge_versions(suite: str, options: dict[str, Any], expected: dict[str, str]) -> None:
    cls = get_suite(suite)
    assert cls(cls.Options(**options)).judge_versions() == expected
