"""Every metric a built-in suite can produce is classified: decided by a named judge of the catalogue, or
computed by an exact rule. A new metric that is neither fails here, so no number reaches a report without
saying what decided it."""

from __future__ import annotations

from typing import Any

import pytest

from knowgap.suites import BUILTIN, get_suite

CATALOGUE = {"abstention", "abstention-scenarios", "abstention-llm", "factuality", "factuality-llm", "answer-match",
             "answer-overlap",
             "clarification", "dangerous-assertion", "citation-check", "element-coverage", "clarify-rubric",
             "clarify-correctness", "clarify-correctness-approx", "extract-claims", "faithfulness",
             "summary-coverage", "partial-rubric", "leak-detector", "gap-matcher", "clarify-silent-failure",
             "extract-takeover"}
MODEL_BACKED = {"abstention-llm", "factuality-llm", "clarify-rubric", "clarify-correctness", "extract-claims",
                "partial-rubric", "clarify-silent-failure"}
# the default options and every alternative that switches a judge
OPTIONS: dict[str, list[dict[str, Any]]] = {
    "starter": [{}],
    "abstain": [{}, {"abstention_judge": "llm", "factuality_judge": "llm"}, {"scenario": "false-premise"},
                {"scenario": "unknowable", "abstention_judge": "llm"}],
    "clarify": [{}, {"no_rubric": True, "no_correctness": True, "no_silent_failure": True, "turns": 2}],
    "extract": [{}, {"faithfulness_runs": 0, "offline_checker": False, "coverage": False}],
    "partial": [{}, {"no_rubric": True}],
}


def test_every_builtin_suite_is_checked() -> None:
    assert set(OPTIONS) == set(BUILTIN)


@pytest.mark.parametrize("suite", sorted(OPTIONS))
def test_every_metric_is_judged_or_computed(suite: str) -> None:
    cls = get_suite(suite)
    assert cls.metric_names is not None and cls.computed_metrics is not None
    uses = [cls(cls.Options(**options)).metric_judges() for options in OPTIONS[suite]]
    judged_somewhere = set().union(*uses)
    assert not judged_somewhere & cls.computed_metrics, "a metric is both judged and computed"
    assert judged_somewhere | cls.computed_metrics == cls.metric_names, (
        f"unclassified: {sorted(cls.metric_names - judged_somewhere - cls.computed_metrics)}; "
        f"not metrics: {sorted((judged_somewhere | cls.computed_metrics) - cls.metric_names)}")
    for judged in uses:
        for name, use in judged.items():
            assert use.judge in CATALOGUE, f"{suite}.{name}: {use.judge} is not a catalogue name"
            assert (use.role == "judge") == (use.judge in MODEL_BACKED), f"{suite}.{name}: {use}"
            assert use.role is None or use.role in cls.roles


@pytest.mark.parametrize("suite", sorted(OPTIONS))
def test_judge_versions_follow_the_metric_judges(suite: str) -> None:
    cls = get_suite(suite)
    for options in OPTIONS[suite]:
        s = cls(cls.Options(**options))
        versions = {use.judge: use.version for use in s.metric_judges().values()}
        assert {k: v for k, v in s.judge_versions().items() if k != "simulated_user"} == versions


def test_a_judge_switched_off_leaves_its_metrics_unjudged() -> None:
    cls = get_suite("clarify")
    off = cls(cls.Options(no_rubric=True)).metric_judges()
    assert "rubric_total" not in off and off["clarification_rate"].judge == "clarification"
    on = cls(cls.Options()).metric_judges()
    assert on["rubric_total"].judge == "clarify-rubric" and on["rubric_total"].role == "judge"
