"""Every metric a built-in suite can produce is classified: decided by a named judge of the catalogue, or
computed by an exact rule. A new metric that is neither fails here, so no number reaches a report without
saying what decided it. Each metric has exactly the judge its declaration (MetricSpec) names, in a run's manifest
and in the catalogue ('knowgap judges --json' lists a metric under the judges its spec names, and no other). The
options each suite is checked under are derived from its specs' judge choices (tests/suites/suite_options.py)."""

from __future__ import annotations

import pytest

from knowgap.engine.metric_spec import Choice
from knowgap.suites import BUILTIN, available, get_suite
from knowgap.suites.judge_registry import judges, metrics_by_judge
from tests.suites.suite_options import options_of

JUDGES = {judge.name: judge for judge in judges()}
CATALOGUE = set(JUDGES)
MODEL_BACKED = {name for name, judge in JUDGES.items() if judge.kind == "model"}


SUITES = sorted(available())
"""Every suite installed: the built-in ones and the plugins' (the example's, where it is installed)."""
OPTIONS = {name: options_of(name) for name in SUITES}


def test_every_builtin_suite_is_checked_under_options_that_switch_each_judge() -> None:
    assert set(BUILTIN) <= set(OPTIONS)
    assert {"scenario": "loo", "abstention_judge": "llm"} in OPTIONS["abstain"]  # a choice under a choice
    assert {"scenario": "false-premise", "abstention_judge": "llm"} in OPTIONS["abstain"]  # and under its otherwise
    assert {"faithfulness_runs": 0} in OPTIONS["extract"] and {"no_rubric": True} in OPTIONS["partial"]


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
    off = cls(cls.Options.model_validate({"no_rubric": True})).metric_judges()
    assert "rubric_total" not in off and off["clarification_rate"].judge == "clarification"
    on = cls(cls.Options()).metric_judges()
    assert on["rubric_total"].judge == "clarify-rubric" and on["rubric_total"].role == "judge"


@pytest.mark.parametrize("suite", sorted(OPTIONS))
def test_a_metric_has_exactly_the_judge_its_spec_names(suite: str) -> None:
    cls = get_suite(suite)
    assert cls.metric_specs is not None
    for options in OPTIONS[suite]:
        s = cls(cls.Options(**options))
        uses = s.metric_judges()
        for spec in cls.metric_specs:
            chosen = spec.judge.pick(s.options) if isinstance(spec.judge, Choice) else spec.judge
            for name in spec.names():
                use = uses.get(name)
                assert (use and use.judge) == (chosen and chosen.name), f"{suite}.{name} under {options}"
                assert chosen is None or JUDGES[chosen.name] is chosen, f"{suite}.{name}: {chosen} is not the " \
                                                                        "catalogue's object"


def test_the_catalogue_lists_each_metric_under_the_judges_its_spec_names() -> None:
    listed = metrics_by_judge()
    for suite in OPTIONS:
        for spec in get_suite(suite).metric_specs or ():
            named = {j.name for j in spec.judges()}
            for metric in spec.names():
                under = {judge for judge, metrics in listed.items() if f"{suite}.{metric}" in metrics}
                assert under == named, f"{suite}.{metric}: listed under {sorted(under)}, its spec names {sorted(named)}"
    # the disagreement the old catalogue had: starter's accuracy is decided by answer-match alone
    assert "starter.accuracy" in listed["answer-match"] and "starter.accuracy" not in listed["abstention"]
    assert set(listed) <= CATALOGUE
