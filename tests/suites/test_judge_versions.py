"""Each suite names the judges its options use, by catalogue name, for the manifest (and the resume check)."""

from __future__ import annotations

from typing import Any

import pytest

from knowgap.judges import abstention, clarification, factuality, faithfulness, takeover
from knowgap.suites import get_suite
from knowgap.suites.clarify import citations, coverage, judging
from knowgap.suites.clarify import prompts as clarify_prompts
from knowgap.suites.extract import claims_judge
from knowgap.suites.extract import coverage as extract_coverage
from knowgap.suites.partial import leak, scoring
from knowgap.suites.partial import prompts as partial_prompts
from knowgap.suites.starter.scoring import ANSWER_MATCH_VERSION

# versions come from the judges' constants (other work changes them); the names are the catalogue's
OFFLINE_ABSTAIN = {"abstention": abstention.VERSION, "factuality": factuality.VERSION}
CLARIFY_OFFLINE = {"clarification": clarification.CLARIFICATION_VERSION,
                   # the clarification detector's own flag, with its own card for unqualified_answer_rate
                   "qualified-answer": clarification.CLARIFICATION_VERSION,
                   "dangerous-assertion": clarification.DANGER_VERSION,
                   "clarify-correctness-approx": judging.APPROX_VERSION, "element-coverage": coverage.VERSION,
                   "citation-check": citations.VERSION, "citation-basis": citations.BASIS_VERSION}
PARTIAL_OFFLINE = {"leak-detector": leak.VERSION, "gap-matcher": scoring.GAP_MATCH_VERSION}


@pytest.mark.parametrize(("suite", "options", "expected"), [
    ("clarify", {}, {"clarify-rubric": clarify_prompts.RUBRIC_VERSION,
                     "clarify-correctness": clarify_prompts.CORRECTNESS_VERSION,
                     "clarify-silent-failure": judging.silent_failure_spec().version, **CLARIFY_OFFLINE}),
    ("clarify", {"no_rubric": True, "no_silent_failure": True, "turns": 2},
     {"clarify-correctness": clarify_prompts.CORRECTNESS_VERSION,
      "simulated_user": clarify_prompts.SIMULATED_USER_VERSION, **CLARIFY_OFFLINE}),
    ("partial", {}, {"partial-rubric": partial_prompts.RUBRIC_VERSION, **PARTIAL_OFFLINE}),
    ("partial", {"no_rubric": True}, PARTIAL_OFFLINE),
    ("extract", {}, {"extract-claims": claims_judge.PROMPT_VERSION, "faithfulness": faithfulness.VERSION,
                     "summary-coverage": extract_coverage.VERSION, "extract-takeover": takeover.VERSION}),
    # the takeover check is offline and always on: it reads the injected runs' summaries
    ("extract", {"faithfulness_runs": 0, "offline_checker": False, "coverage": False},
     {"extract-takeover": takeover.VERSION}),
    ("abstain", {}, OFFLINE_ABSTAIN),
    ("abstain", {"factuality_judge": "llm"}, {"abstention": abstention.VERSION, "factuality-llm": "factuality_v1"}),
    ("abstain", {"abstention_judge": "llm"}, {"abstention-llm": "abstention_v1", "factuality": factuality.VERSION}),
    ("starter", {}, {"abstention": abstention.VERSION, "answer-match": ANSWER_MATCH_VERSION}),
])
def test_judge_versions(suite: str, options: dict[str, Any], expected: dict[str, str]) -> None:
    cls = get_suite(suite)
    assert cls(cls.Options(**options)).judge_versions() == expected
