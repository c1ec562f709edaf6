"""``--until decided`` in the engine: cases in a seeded random order, a batch at a time, stopped when the gated
metric's confidence sequence decides its threshold, or when a budget runs out; a stopped run resumes to every case
without calling the model again for a stored trial; metrics that cannot be decided early run to the end."""

from __future__ import annotations

import random
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

import pytest

from knowgap.engine.records import MetricValue, RunConfig, TrialRecord
from knowgap.engine.runner import RunInterrupted, RunResult, start_run
from knowgap.engine.stopping import ordered_units
from knowgap.engine.stopping_rule import ComparedMetric, GatedMetric, StoppingRule
from knowgap.engine.store import RunStore
from knowgap.engine.suite import Case, Configuration, Suite, Trial, TrialContext, TrialResult
from knowgap.errors import KnowgapError
from knowgap.models.types import ChatRequest, ChatResponse, Message
from knowgap.stats.sequential import decide, wor_betting_cs
from tests.fakes.models import Echo
from tests.stats.test_sequential import _one_sided_capital

CASES = 200


class GoodCase(Case):
    good: bool
    base_id: str | None = None


class Graded(Suite):
    """CASES cases, 85% of them answered well (drawn with a fixed seed); one model call per trial."""

    name: ClassVar[str] = "graded-unregistered"
    description: ClassVar[str] = "cases whose outcome is fixed in the case"
    rate: ClassVar[float] = 0.85
    extra_statistic: ClassVar[bool] = False

    def cases(self) -> list[Case]:
        rng = random.Random(7)
        return [GoodCase(id=f"c{i:03d}", good=rng.random() < self.rate) for i in range(CASES)]

    def configurations(self) -> list[Configuration]:
        return [Configuration(id="only")]

    async def run_trial(self, trial: Trial, ctx: TrialContext) -> TrialResult:
        await ctx.generate("target", ChatRequest(messages=[Message(role="user", content=trial.case.id)]))
        assert isinstance(trial.case, GoodCase)
        return TrialResult(scores={"good": trial.case.good})

    def metrics(self, records: Iterable[TrialRecord]) -> list[MetricValue]:
        done = [r for r in records if r.status == "ok"]
        k = sum(bool(r.scores["good"]) for r in done)
        out = [MetricValue.proportion("good", "only", k, len(done)),
               MetricValue.count("errors", "only", sum(r.status != "ok" for r in records))]
        if self.extra_statistic:  # the best case's score: no pooled mean of the cases
            out.append(MetricValue(name="best", group="only", value=float(k > 0), n=len(done), kind="mean"))
        return out


def _run(runs_root: Path, rule: StoppingRule, suite: type[Suite] = Graded, resume: str | None = None,
         concurrency: int = 4) -> tuple[RunResult, Echo]:
    model = Echo()
    config = RunConfig(suite=suite.name, models={"target": Echo.spec}, concurrency=concurrency, use_cache=False,
                       stopping=rule)
    return start_run(config, suite, runs_root=runs_root, providers={Echo.spec: model}, progress=False,
                     resume=resume), model


def _gate(text: str, op: str, value: float, metric: str = "good") -> GatedMetric:
    return GatedMetric(metric=metric, op=op, value=value, text=text)  # type: ignore[arg-type]


def test_a_rate_far_from_its_threshold_stops_early_and_resumes_to_every_case(runs_root: Path) -> None:
    rule = StoppingRule(until="decided", thresholds=[_gate("good >= 0.5", ">=", 0.5)], order_seed=3)
    result, model = _run(runs_root, rule)
    record = result.manifest.sequential
    assert record is not None and record.reason == "decided"
    assert result.status == "stopped" and result.ok
    assert record.units_run < CASES / 2 and model.calls == record.trials_run == result.manifest.trials_ok
    [seq] = [s for s in record.sequences if s.metric == "good"]
    assert seq.decision == "pass" and seq.low is not None and seq.low >= 0.5
    assert [p.units for p in seq.path] == sorted(p.units for p in seq.path)
    assert result.metrics[0].n == record.trials_run  # the metrics are those of the trials that ran
    ran = [r.case_id for r in RunStore.open(runs_root, result.run_id).iter_records()]
    assert ran != sorted(ran)  # a random order, not the plan's

    again, model = _run(runs_root, rule.model_copy(update={"until": "all"}), resume=result.run_id)
    assert again.status == "finished" and again.manifest.trials_ok == CASES
    assert model.calls == CASES - record.trials_run  # no stored trial runs again
    final = again.manifest.sequential
    assert final is not None and final.reason == "every case ran" and not final.stopped_early
    [seq] = [s for s in final.sequences if s.metric == "good"]
    exact = again.metrics[0].value
    assert seq.low == seq.high == exact and seq.decision == "pass"


def test_the_order_is_the_seeds(runs_root: Path) -> None:
    rule = StoppingRule(until="decided", thresholds=[_gate("good >= 0.5", ">=", 0.5)], order_seed=11)
    first, _ = _run(runs_root / "a", rule)
    second, _ = _run(runs_root / "b", rule)
    other, _ = _run(runs_root / "c", rule.model_copy(update={"order_seed": 12}))

    def order(result: RunResult, root: Path) -> list[str]:
        return [r.case_id for r in RunStore.open(root, result.run_id).iter_records()]

    assert order(first, runs_root / "a") == order(second, runs_root / "b")
    assert order(first, runs_root / "a")[:20] != order(other, runs_root / "c")[:20]


def test_a_rate_at_its_threshold_is_not_decided_before_the_end(runs_root: Path) -> None:
    class AtThreshold(Graded):
        name: ClassVar[str] = "at-threshold-unregistered"

    cases = Graded(Graded.Options.model_validate({})).cases()
    exact = sum(bool(c.good) for c in cases if isinstance(c, GoodCase)) / CASES
    rule = StoppingRule(until="decided", thresholds=[_gate(f"good >= {exact}", ">=", exact)])
    result, model = _run(runs_root, rule, AtThreshold, concurrency=16)
    record = result.manifest.sequential
    assert record is not None and record.reason == "every case ran" and model.calls == CASES
    assert result.status == "finished"
    [seq] = [s for s in record.sequences if s.metric == "good"]
    assert seq.decision == "pass" and seq.low == seq.high == exact


def test_a_call_budget_stops_the_run_and_says_so(runs_root: Path) -> None:
    rule = StoppingRule(until="decided", thresholds=[_gate("good >= 0.84", ">=", 0.84)], max_calls=30)
    result, model = _run(runs_root, rule, concurrency=4)
    record = result.manifest.sequential
    assert record is not None and record.reason == "max calls" and result.status == "stopped"
    assert 30 <= model.calls <= 33 and record.calls == model.calls
    assert "--max-calls 30 reached" in record.says()
    [seq] = [s for s in record.sequences if s.metric == "good"]
    assert seq.decision == "undecided"


def test_errors_fail_at_once_and_pass_only_at_the_end(runs_root: Path) -> None:
    rule = StoppingRule(until="decided", thresholds=[_gate("errors == 0", "==", 0, metric="errors")])
    result, model = _run(runs_root, rule, concurrency=8)
    record = result.manifest.sequential
    assert record is not None and record.reason == "every case ran" and model.calls == CASES
    assert [s.decision for s in record.sequences] == ["pass"]


def test_a_statistic_that_is_no_pooled_mean_is_decided_at_the_end(runs_root: Path) -> None:
    class WithBest(Graded):
        name: ClassVar[str] = "with-best-unregistered"
        extra_statistic: ClassVar[bool] = True

    rule = StoppingRule(until="decided", thresholds=[_gate("best >= 0.5", ">=", 0.5, metric="best")])
    result, model = _run(runs_root, rule, WithBest, concurrency=16)
    record = result.manifest.sequential
    assert record is not None and model.calls == CASES and record.reason == "every case ran"
    [seq] = record.sequences
    assert seq.decision == "pass" and seq.low == seq.high == 1.0


def test_width_stops_when_every_sequence_is_that_narrow(runs_root: Path) -> None:
    result, model = _run(runs_root, StoppingRule(until="width=0.3"))
    record = result.manifest.sequential
    assert record is not None and record.reason == "narrow" and model.calls < CASES
    [seq] = [s for s in record.sequences if s.metric == "good"]
    assert seq.low is not None and seq.high is not None and seq.high - seq.low <= 0.3


def test_variants_of_one_base_case_run_together(runs_root: Path) -> None:
    class Variants(Graded):
        name: ClassVar[str] = "variants-unregistered"

        def cases(self) -> list[Case]:
            return [GoodCase(id=f"r{i // 3}-v{i % 3}", good=i % 4 != 0, base_id=f"r{i // 3}") for i in range(60)]

    rule = StoppingRule(until="decided", thresholds=[_gate("good >= 0.2", ">=", 0.2)])
    result, _ = _run(runs_root, rule, Variants, concurrency=1)
    ran = [r.case_id.split("-")[0] for r in RunStore.open(runs_root, result.run_id).iter_records()]
    blocks = [key for i, key in enumerate(ran) if i == 0 or ran[i - 1] != key]
    assert len(blocks) == len(set(blocks))  # each review's variants one after another
    record = result.manifest.sequential
    assert record is not None and record.units_total == 20


def test_bad_rules_are_refused(runs_root: Path) -> None:
    with pytest.raises(KnowgapError, match="--until decided needs thresholds"):
        _run(runs_root, StoppingRule(until="decided"))
    with pytest.raises(ValueError, match="expected decided, all, or width=W"):
        StoppingRule(until="width=2")


class CtrlCAt(Echo):
    """Echoes, and raises KeyboardInterrupt (what Ctrl-C raises) at its ``at``-th call."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at = at

    def reply(self, request: ChatRequest) -> ChatResponse:
        if self.calls == self.at:
            raise KeyboardInterrupt
        return super().reply(request)


def test_an_interrupted_run_resumes_in_its_order_and_stops_where_an_unbroken_run_stops(runs_root: Path) -> None:
    rule = StoppingRule(until="decided", thresholds=[_gate("good >= 0.75", ">=", 0.75)], order_seed=5)
    unbroken, _ = _run(runs_root / "unbroken", rule)
    config = RunConfig(suite=Graded.name, models={"target": Echo.spec}, concurrency=4, use_cache=False,
                       stopping=rule)
    broken = CtrlCAt(at=30)
    with pytest.raises(RunInterrupted):
        start_run(config, Graded, runs_root=runs_root / "broken", providers={Echo.spec: broken}, progress=False)
    [folder] = (runs_root / "broken").iterdir()
    stored = RunStore.open(runs_root / "broken", folder.name)
    assert stored.read_manifest().status == "interrupted" and stored.read_manifest().sequential is not None
    before = len(stored.finished_trial_ids())
    assert 20 <= before < 30
    model = Echo()
    resumed = start_run(config, Graded, runs_root=runs_root / "broken", providers={Echo.spec: model},
                        progress=False, resume=folder.name)
    record, expected = resumed.manifest.sequential, unbroken.manifest.sequential
    assert record is not None and expected is not None
    assert (record.reason, record.sequences[0].decision) == (expected.reason, expected.sequences[0].decision)
    # the same order; the looks after the resume fall elsewhere in it, so the stop may move by up to a batch
    assert abs(record.units_run - expected.units_run) <= 4
    assert model.calls == record.trials_run - before  # only the trials the interruption left
    plan = [Trial(case=c, config=Configuration(id="only")) for c in Graded(Graded.Options.model_validate({})).cases()]
    first = [u.key for u in ordered_units(plan, 5)][:record.units_run]
    ran = {r.case_id for r in RunStore.open(runs_root / "broken", folder.name).iter_records()}
    assert ran == set(first)


def test_a_threshold_on_a_group_the_run_never_has_keeps_it_running_to_the_end(runs_root: Path) -> None:
    """A group no trial produces is never decided: the run does not stop on the other thresholds alone."""
    wrong_group = GatedMetric(metric="good", group="nowhere", op=">=", value=0.5, text="good[nowhere] >= 0.5")
    rule = StoppingRule(until="decided", thresholds=[_gate("good >= 0.5", ">=", 0.5), wrong_group])
    result, model = _run(runs_root, rule, concurrency=16)
    record = result.manifest.sequential
    assert record is not None and record.reason == "every case ran" and model.calls == CASES


class ByModel(Graded):
    """Outcomes the model decides: a trial is good when the model says 'good'."""

    name: ClassVar[str] = "by-model-unregistered"

    async def run_trial(self, trial: Trial, ctx: TrialContext) -> TrialResult:
        response = await ctx.generate("target", ChatRequest(messages=[Message(role="user", content=trial.case.id)]))
        return TrialResult(scores={"good": response.text == "good"})


class RateModel(Echo):
    """Says 'good' to a case with probability ``rate``, the same case always alike (seeded by its id)."""

    def __init__(self, rate: float, spec: str) -> None:
        super().__init__(spec)
        self.rate = rate

    def reply(self, request: ChatRequest) -> ChatResponse:
        case = request.messages[-1].content
        return ChatResponse(text="good" if random.Random(case).random() < self.rate else "bad")


def _by_model(runs_root: Path, rate: float, rule: StoppingRule | None) -> tuple[RunResult, RateModel]:
    model = RateModel(rate, spec=f"test:rate-{rate}")
    config = RunConfig(suite=ByModel.name, models={"target": model.spec}, concurrency=4, use_cache=False,
                       stopping=rule)
    return start_run(config, ByModel, runs_root=runs_root, providers={model.spec: model}, progress=False), model


def test_a_candidate_worse_than_its_baseline_is_decided_lower_early(runs_root: Path) -> None:
    baseline, _ = _by_model(runs_root / "base", 0.85, None)
    rule = StoppingRule(until="decided", against=str(baseline.path), compare=[ComparedMetric(metric="good")])
    result, model = _by_model(runs_root / "new", 0.45, rule)
    record = result.manifest.sequential
    assert record is not None and record.reason == "decided" and model.calls < CASES / 2
    [diff] = [s for s in record.sequences if s.kind == "difference"]
    assert diff.comparison == "lower" and diff.decision == "fail"
    assert diff.high is not None and diff.high < 0

    again, _ = _by_model(runs_root / "again", 0.85, rule.model_copy(update={"margin": 0.1}))
    record = again.manifest.sequential
    assert record is not None and record.reason == "decided"
    [diff] = [s for s in record.sequences if s.kind == "difference"]
    assert diff.comparison == "within margin" and diff.decision == "pass"
    assert diff.low is not None and diff.high is not None and -0.1 <= diff.low and diff.high <= 0.1


def test_the_difference_ends_on_the_exact_paired_difference(runs_root: Path) -> None:
    baseline, _ = _by_model(runs_root / "base", 0.6, None)
    rule = StoppingRule(until="all", against=str(baseline.path), compare=[ComparedMetric(metric="good")])
    result, _ = _by_model(runs_root / "new", 0.7, rule)
    record = result.manifest.sequential
    assert record is not None
    [diff] = [s for s in record.sequences if s.kind == "difference"]
    exact = result.metrics[0].value - baseline.metrics[0].value  # type: ignore[operator]
    assert diff.low == diff.high == pytest.approx(exact)


def test_a_baseline_of_another_plan_is_refused(runs_root: Path) -> None:
    baseline, _ = _run(runs_root / "base", StoppingRule(until="width=0.5"))
    rule = StoppingRule(until="decided", against=str(baseline.path), compare=[ComparedMetric(metric="good")])
    with pytest.raises(KnowgapError, match="not 'by-model-unregistered'"):
        _by_model(runs_root / "new", 0.5, rule)
    assert not (runs_root / "new").exists() or not any((runs_root / "new").iterdir())


def test_a_gate_is_decided_when_its_own_sides_capital_reaches_one_over_alpha(runs_root: Path) -> None:
    """The decision rule: the run stops at the first case after which K+(0.75) of the cases so far, computed step by
    step apart from the engine (tests/stats/test_sequential.py), reaches 1/alpha = 20, and the manifest says the
    rule was each end one-sided with aGRAPA bets. The two-sided interval of the rule before (alpha/2 a side,
    predmix bets) had not decided it there."""
    rule = StoppingRule(until="decided", thresholds=[_gate("good >= 0.75", ">=", 0.75)], order_seed=5)
    result, _ = _run(runs_root, rule, concurrency=1)
    record = result.manifest.sequential
    assert record is not None and record.reason == "decided"
    assert (record.bets, record.sides) == ("agrapa", "each")
    assert "each end of a sequence one-sided at 0.95" in record.says()
    x = [float(bool(r.scores["good"])) for r in RunStore.open(runs_root, result.run_id).iter_records()]
    capital = _one_sided_capital(x, 0.75, CASES, 0.05, "agrapa")
    assert record.units_run == next(t for t, k in enumerate(capital) if k >= 20) + 1 == len(x) < CASES / 2
    [seq] = [s for s in record.sequences if s.metric == "good"]
    assert seq.decision == "pass"
    before = wor_betting_cs(x, [1.0] * len(x), CASES)
    assert decide(before.low[-1], before.high[-1], ">=", 0.75) == "undecided"


def test_a_width_rule_keeps_the_two_sided_interval(runs_root: Path) -> None:
    result, _ = _run(runs_root, StoppingRule(until="width=0.3"), concurrency=1)
    record = result.manifest.sequential
    assert record is not None and (record.bets, record.sides) == ("predmix", "two")
    x = [float(bool(r.scores["good"])) for r in RunStore.open(runs_root, result.run_id).iter_records()]
    [seq] = [s for s in record.sequences if s.metric == "good"]
    path = wor_betting_cs(x, [1.0] * len(x), CASES)
    assert (seq.low, seq.high) == (path.low[-1], path.high[-1])
