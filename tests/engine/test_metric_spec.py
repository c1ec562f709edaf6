"""A metric's one declaration (:class:`MetricSpec`) and what the suite contract derives from it: names, computed
metrics, the judge under a run's options, what a run lacks, families of names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import pytest

from knowgap.engine.metric_spec import Choice, MetricSpec, Need, computed_names, described, metric_names, spec_of
from knowgap.engine.suite import Configuration, Suite, SuiteOptions


@dataclass(frozen=True)
class FakeJudge:
    name: str
    kind: Literal["offline", "model"] = "offline"
    current: str = "v1"

    def version(self) -> str:
        return self.current


RULE, LLM = FakeJudge("rule"), FakeJudge("llm", "model", "spec-3")


class Opts(SuiteOptions):
    judge: Literal["rule", "llm"] = "rule"
    inject: bool = False


SPECS = (
    MetricSpec("rate", "proportion", "share that did it", judge=Choice("judge", {"rule": RULE, "llm": LLM}),
               counts="positive"),
    MetricSpec("recall_<category>", "mean", "recall of {part} elements", members=("a", "b")),
    MetricSpec("score_<family>", "mean", "per family", judge=RULE),
    MetricSpec("attack_success_rate", "proportion", "attacks that worked", lower_is_better=True,
               needs=Need("--inject", lambda suite: suite.options.inject)),
    MetricSpec("errors", "count", "failed trials", cluster=None),
)


class Declared(Suite):
    name = "declared"
    description = "a suite that declares its metrics"
    Options = Opts
    metric_specs = SPECS

    def cases(self) -> list[Any]:
        return []

    def configurations(self) -> list[Configuration]:
        return []

    async def run_trial(self, trial: Any, ctx: Any) -> Any:
        raise NotImplementedError

    def metrics(self, records: Any) -> list[Any]:
        return []


def test_names_and_computed_metrics_are_derived_from_the_specs() -> None:
    assert Declared.metric_names == metric_names(SPECS) == {"rate", "recall_a", "recall_b", "attack_success_rate",
                                                            "errors"}
    assert Declared.computed_metrics == computed_names(SPECS) == {"recall_a", "recall_b", "attack_success_rate",
                                                                  "errors"}
    assert described(SPECS)["recall_b"] == "recall of b elements"


@pytest.mark.parametrize(("name", "declared"), [
    ("rate", True), ("rate:position=end", True), ("recall_a", True), ("recall_c", False),
    ("score_billing", True), ("score_", False), ("scores", False), ("nothing", False)])
def test_a_name_is_declared_by_its_spec_a_family_or_its_base_name(name: str, declared: bool) -> None:
    assert Declared.declares_metric(name) is declared
    assert (spec_of(SPECS, name) is not None) is declared


def test_the_judge_of_each_metric_follows_the_options() -> None:
    rule = Declared(Opts()).metric_judges()
    assert set(rule) == {"rate"} and (rule["rate"].judge, rule["rate"].version, rule["rate"].role) == \
        ("rule", "v1", None)
    llm = Declared(Opts(judge="llm")).metric_judges()["rate"]
    assert (llm.judge, llm.version, llm.role, llm.counts) == ("llm", "spec-3", "judge", "positive")
    assert [j.name for j in SPECS[0].judges()] == ["rule", "llm"]


def test_what_a_run_lacks_is_the_specs_need() -> None:
    assert Declared(Opts()).metric_needs("attack_success_rate:family=x") == "--inject"
    assert Declared(Opts(inject=True)).metric_needs("attack_success_rate") is None
    assert Declared(Opts()).metric_needs("rate") is None and Declared(Opts()).metric_needs("unknown") is None


def test_a_choice_may_hold_a_choice_and_name_no_judge() -> None:
    @dataclass
    class Run:
        scenario: str
        judge: str

    nested = Choice("scenario", {"loo": None}, otherwise=Choice("judge", {"rule": RULE, "llm": LLM}))
    assert nested.pick(Run("loo", "llm")) is None and nested.pick(Run("other", "llm")) is LLM
    assert nested.candidates() == [RULE, LLM]


def test_a_suite_declares_specs_or_names_not_both() -> None:
    with pytest.raises(TypeError, match="derived from metric_specs"):
        type("Both", (Declared,), {"metric_specs": SPECS, "metric_names": frozenset({"rate"})})
    with pytest.raises(ValueError, match="exactly one <part>"):
        MetricSpec("plain", "mean", "x", members=("a",))
