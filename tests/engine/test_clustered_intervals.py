"""Clustered intervals (knowgap.stats, Tally, MetricValue): trials that share a case or a source count as one
independent unit. Identical repeats give exactly the interval of one repeat; clusters of one trial give exactly
the plain Wilson / bootstrap interval; Kish's effective n checked by hand."""

from __future__ import annotations

import random

import pytest

from knowgap.engine.records import MetricValue, TrialRecord
from knowgap.engine.tally import Tally
from knowgap.report.markdown import format_metric
from knowgap.stats import (
    bootstrap_mean,
    cluster_bootstrap_mean,
    cluster_counts,
    cluster_resample,
    clustered_wilson,
    effective_n,
    group_by_cluster,
    mean_interval,
    wilson,
    wilson_rate,
)
from knowgap.suites.starter import StarterSuite


def _cases(seed: int, n: int = 23) -> list[tuple[bool, float]]:
    rng = random.Random(seed)
    return [(rng.random() < 0.37, round(rng.uniform(0, 5), 3)) for _ in range(n)]


def _tally(cases: list[tuple[bool, float]], repeats: int) -> Tally:
    t = Tally()
    for i, (ok, value) in enumerate(cases):
        for _ in range(repeats):
            t.hit("rate", ok, f"case-{i}")
            t.add("score", value, f"case-{i}")
    return t


@pytest.mark.parametrize("repeats", [2, 3, 5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_identical_repeats_give_exactly_the_interval_of_one_repeat(repeats: int, seed: int) -> None:
    cases = _cases(seed)
    one, many = _tally(cases, 1), _tally(cases, repeats)
    for name, read in (("rate", Tally.proportion), ("score", Tally.mean)):
        a, b = read(one, name, "g"), read(many, name, "g")
        assert (b.ci_low, b.ci_high) == (a.ci_low, a.ci_high)  # exactly, not approximately
        assert b.value == pytest.approx(a.value, rel=1e-12)
        assert (a.n, a.n_cases, b.n, b.n_cases) == (23, 23, 23 * repeats, 23)
        assert b.n_text() == f"23 / {23 * repeats}" and a.n_text() == "23"


@pytest.mark.parametrize("outcome", [True, False])
def test_identical_repeats_at_zero_or_one_count_the_cases(outcome: bool) -> None:
    one = MetricValue.proportion_of("r", "g", [outcome] * 7, [f"c{i}" for i in range(7)])
    many = MetricValue.proportion_of("r", "g", [outcome] * 21, [f"c{i // 3}" for i in range(21)])
    assert (many.ci_low, many.ci_high) == (one.ci_low, one.ci_high) == wilson(7 * outcome, 7)


def test_clusters_of_one_trial_are_the_plain_wilson_and_bootstrap() -> None:
    cases = _cases(4, n=40)
    outcomes, values = [ok for ok, _ in cases], [v for _, v in cases]
    keys = [f"c{i}" for i in range(40)]
    k = sum(outcomes)
    assert clustered_wilson(cluster_counts(outcomes, keys)) == wilson(k, 40)
    assert effective_n(cluster_counts(outcomes, keys)) == 40.0
    for seed in (0, 5):
        assert cluster_bootstrap_mean(values, keys, seed=seed) == bootstrap_mean(values, seed=seed)
        assert MetricValue.mean("m", "g", values, seed=seed).ci_low == bootstrap_mean(values, seed=seed)[0]
    # a tally fed without keys is unclustered, as before
    t = Tally()
    for ok in outcomes:
        t.hit("rate", ok)
    m = t.proportion("rate", "g")
    assert (m.ci_low, m.ci_high, m.n, m.n_cases) == (*wilson(k, 40), 40, 40)


def test_effective_n_is_kish_on_the_cluster_robust_variance() -> None:
    # 3 of 3, 0 of 3, 1 of 2: N = 8, p = 1/2; sum (k_c - p n_c)^2 = 1.5^2 + 1.5^2 + 0 = 4.5;
    # Var = 4.5 / 64, n_eff = p(1-p) / Var = 0.25 * 64 / 4.5 = 32/9
    clusters = [(3, 3), (0, 3), (1, 2)]
    assert effective_n(clusters) == pytest.approx(32 / 9, rel=1e-15)
    assert clustered_wilson(clusters) == wilson_rate(0.5, 32 / 9)
    lo, hi = clustered_wilson(clusters)
    plain_lo, plain_hi = wilson(4, 8)
    assert lo < plain_lo and hi > plain_hi  # correlated clusters widen the interval
    # no variance between clusters (each at exactly p): capped at the N trials
    assert effective_n([(1, 2), (2, 4), (1, 2)]) == 8.0
    # p = 0: the number of clusters
    assert effective_n([(0, 5), (0, 5), (0, 1)]) == 3.0
    with pytest.raises(ValueError, match="3 outcomes but 2"):
        cluster_counts([True, False, True], ["a", "b"])
    with pytest.raises(ValueError, match="not 2 of 3"):
        MetricValue.proportion("r", "g", 2, 3, clusters=[(1, 1), (0, 1)])


def test_unequal_clusters_resample_whole_clusters() -> None:
    # one big cluster of high values and many single low ones: the cluster bootstrap is wider
    values = [4.0] * 10 + [float(i % 3) for i in range(10)]
    keys = ["big"] * 10 + [f"s{i}" for i in range(10)]
    lo, hi = cluster_bootstrap_mean(values, keys, seed=1)
    plain_lo, plain_hi = bootstrap_mean(values, seed=1)
    assert hi - lo > plain_hi - plain_lo
    assert lo <= sum(values) / 20 <= hi
    assert cluster_bootstrap_mean(values, keys, seed=1) == (lo, hi)  # seeded
    rng = random.Random(0)
    draw = cluster_resample(list(range(20)), group_by_cluster(keys), rng)
    assert (set(range(10)) <= set(draw)) or not (set(range(10)) & set(draw))  # the big cluster whole or not at all


def _starter(case: int, repeat: int, correct: bool) -> TrialRecord:
    return TrialRecord(trial_id=f"c{case}|plain|r{repeat}", case_id=f"c{case}", config_id="plain", repeat=repeat,
                       scores={"answerable": case % 3 != 0, "correct": correct, "abstained": not correct})


@pytest.mark.parametrize("repeats", [2, 3, 5])
def test_a_suite_with_identical_repeats_reports_the_interval_of_one_repeat(repeats: int) -> None:
    rng = random.Random(9)
    right = [rng.random() < 0.6 for _ in range(30)]
    assert 0 < sum(right) < 30
    starter_metrics = StarterSuite(StarterSuite.Options()).metrics  # records without verdicts: derived
    once = {m.name: m for m in starter_metrics([_starter(c, 0, right[c]) for c in range(30)])}
    again = {m.name: m for m in starter_metrics([_starter(c, r, right[c]) for c in range(30)
                                                  for r in range(repeats)])}
    for name in ("accuracy", "over_abstention", "abstention_unanswerable"):
        a, b = once[name], again[name]
        assert (b.value, b.ci_low, b.ci_high, b.n_cases) == (a.value, a.ci_low, a.ci_high, a.n)
        assert b.n == repeats * a.n


def test_a_mean_from_one_case_is_never_a_certain_point() -> None:
    # one partial case with evidence_recall 0.9: a bootstrap can only return [0.9, 0.9], which a gate on the
    # CI's low end (>= 0.8) would pass on one observation
    one = MetricValue.mean("evidence_recall", "g", [0.9])
    assert (one.ci_low, one.ci_high) == wilson_rate(0.9, 1)
    assert one.ci_low is not None and one.ci_low < 0.2 and one.ci_high is not None and one.ci_high < 1.0
    # three repeats of that one case are still one case
    repeated = MetricValue.mean("evidence_recall", "g", [0.9] * 3, keys=["c"] * 3)
    assert (repeated.ci_low, repeated.ci_high) == (one.ci_low, one.ci_high)


@pytest.mark.parametrize("score", [0.0, 1.0])
def test_every_case_scoring_the_same_gets_the_interval_of_that_share(score: float) -> None:
    # 12 cases all 1.0 is as uncertain as 12 of 12: Wilson [0.76, 1], not the bootstrap's point [1, 1]
    m = MetricValue.mean("recall", "g", [score] * 24, keys=[f"c{i // 2}" for i in range(24)])
    assert (m.ci_low, m.ci_high) == wilson(int(score) * 12, 12)
    assert m.ci_high - m.ci_low > 0.2  # type: ignore[operator]


def test_a_score_off_the_unit_range_without_spread_has_no_interval() -> None:
    # a 1-5 rubric score of 4 in every case: nothing to estimate a spread from
    m = MetricValue.mean("rubric", "g", [4.0] * 6)
    assert (m.value, m.ci_low, m.ci_high, m.n_cases) == (4.0, None, None, 6)
    assert format_metric(m) == ("4.000", "")
    assert mean_interval([], []) is None
    # a quantity that is not a [0, 1] score gets none even where its values fall in [0, 1] (tokens per trial: 0)
    tokens = MetricValue.mean("query_tokens", "g", [0.0] * 6, unbounded=True)
    assert (tokens.value, tokens.ci_low, tokens.ci_high) == (0.0, None, None)
    assert MetricValue.mean("query_tokens", "g", [0.0, 2.0, 1.0], unbounded=True).ci_low is not None  # spread


def test_a_mean_with_spread_keeps_the_cluster_bootstrap() -> None:
    values = [1.0, 1.0, 0.5, 0.5, 1.0, 1.0]
    keys = ["a", "a", "b", "b", "c", "c"]
    m = MetricValue.mean("recall", "g", values, keys=keys, seed=4)
    assert (m.ci_low, m.ci_high) == cluster_bootstrap_mean(values, keys, seed=4) == mean_interval(values, keys,
                                                                                                  seed=4)
