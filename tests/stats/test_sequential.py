"""The anytime-valid confidence sequence of ``--until decided`` (knowgap.stats.sequential): the same capital process
as the authors' confseq package, the ratio estimator's transform, the exact value at the end, the decisions, and a
fast version of the error-rate simulation (benchmarks/sequential_error.py) that fails for a rule that peeks."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from benchmarks.sequential_error import Scenario, simulate

from knowgap.stats.sequential import Bets, Sides, decide, wor_betting_cs, wor_log_capital, wor_log_capitals

REFERENCE = Path(__file__).with_name("confseq_reference.json")


def test_the_capital_process_is_confseqs_betting_martingale_without_replacement() -> None:
    """Values computed by confseq 0.0.11's own betting_mart (benchmarks/sequential_reference.py): 18 sequences of
    0/1 outcomes and of scores, drawn without replacement from populations of 40, 200 and 60, at six means."""
    cases = json.loads(REFERENCE.read_text(encoding="utf-8"))["cases"]
    assert len(cases) == 18
    for case in cases:
        mine = np.exp(wor_log_capital(np.array([case["x"]]), np.array([case["m"]]), case["population"],
                                      case["alpha"])[0])
        ref = np.array(case["capital"])
        assert np.array_equal(np.isinf(mine), np.isinf(ref)), case["m"]
        finite = np.isfinite(ref)
        assert np.allclose(mine[finite], ref[finite], rtol=1e-12, atol=0), case["m"]


def test_with_units_of_one_size_the_ratio_transform_is_the_units_own_rate() -> None:
    """Units of 3 trials each: the sequence of k of 3 equals that of the units' rates k / 3 as one value each."""
    rng = np.random.default_rng(1)
    k = rng.binomial(3, 0.6, 50)
    clustered = wor_betting_cs(k.tolist(), [3] * 50, 80)
    plain = wor_betting_cs((k / 3).tolist(), [1] * 50, 80)
    assert clustered.low == pytest.approx(plain.low, abs=1e-12)
    assert clustered.high == pytest.approx(plain.high, abs=1e-12)


@pytest.mark.parametrize(("bets", "sides"), [("predmix", "two"), ("agrapa", "each")])
def test_the_sequence_holds_the_running_estimate_narrows_and_ends_on_the_exact_value(bets: Bets, sides: Sides) -> None:
    rng = np.random.default_rng(2)
    sizes = rng.integers(1, 6, 60)
    sums = rng.binomial(sizes, 0.3)
    path = wor_betting_cs(sums.tolist(), sizes.tolist(), 60, bound=5, bets=bets, sides=sides)
    exact = sums.sum() / sizes.sum()
    assert path.low[-1] == path.high[-1] == pytest.approx(exact)
    widths = [h - lo for lo, h in zip(path.low, path.high, strict=True)]
    assert all(a >= b for a, b in zip(widths, widths[1:], strict=False))  # the running intersection
    assert widths[0] > 0.5 and widths[30] < 0.45
    assert all(lo <= e <= h for lo, e, h in zip(path.low, path.estimate, path.high, strict=True) if e is not None)


def test_a_unit_that_feeds_the_metric_nothing_moves_nothing() -> None:
    """A case without an observation of the metric (not scored, another group) is a draw of size 0."""
    with_empty = wor_betting_cs([1, 0, 0, 1, 1], [1, 0, 1, 1, 1], 10, bound=1)
    assert with_empty.estimate[1] == with_empty.estimate[0] == 1.0
    assert with_empty.low[1] >= 0 and with_empty.high[-1] <= 1


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="not a score in"):
        wor_betting_cs([2.5], [2], 5)
    with pytest.raises(ValueError, match="more than the bound"):
        wor_betting_cs([1], [3], 5, bound=2)
    with pytest.raises(ValueError, match="units run of a population"):
        wor_betting_cs([1, 1], [1, 1], 1)


@pytest.mark.parametrize(("low", "high", "op", "value", "expected"), [
    (0.62, 0.8, ">=", 0.6, "pass"), (0.4, 0.59, ">=", 0.6, "fail"), (0.5, 0.7, ">=", 0.6, "undecided"),
    (0.6, 0.7, ">", 0.6, "undecided"), (0.61, 0.7, ">", 0.6, "pass"), (0.1, 0.2, "<=", 0.25, "pass"),
    (0.3, 0.4, "<", 0.3, "fail"), (0.0, 0.0, "==", 0.0, "pass"), (0.0, 0.1, "==", 0.0, "undecided"),
    (0.01, 0.1, "==", 0.0, "fail"), (0.01, 0.1, "!=", 0.0, "pass"),
])
def test_decisions(low: float, high: float, op: str, value: float, expected: str) -> None:
    assert decide(low, high, op, value) == expected


@pytest.mark.slow
def test_stopping_when_decided_keeps_the_error_rate_and_peeking_at_wilson_does_not() -> None:
    """600 simulated runs of 100 cases of 1-5 trials, ICC 0.8, the true rate at the threshold, looked at after every
    case. The sequence's wrong decisions stay under alpha = 0.05 (its 99.9% binomial bound at 600 runs leaves room to
    fail a rule near 0.08); the clustered Wilson interval stopped the same way errs far more often, which is what
    the test's power to fail rests on."""
    outcome = simulate(Scenario(rate=0.7, threshold=0.7, icc=0.8), runs=600, seed=5)
    assert outcome.wrong_sequence / outcome.runs <= 0.05
    assert outcome.wrong_wilson / outcome.runs > 0.10
    assert 0 < outcome.cases_sequence < 1


def test_far_from_the_threshold_the_sequence_stops_early() -> None:
    outcome = simulate(Scenario(rate=0.95, threshold=0.7, icc=0.0, cases=100), runs=60, seed=6)
    assert outcome.wrong_sequence == 0
    assert outcome.cases_sequence < 0.4
    assert not math.isnan(outcome.cases_wilson)


def _one_sided_capital(x: list[float], m: float, population: int, alpha: float, bets: str) -> list[float]:
    """K+_t(m) written out step by step, apart from the module's arrays: the next draw's mean under p = m without
    replacement, and the bet from the draws before t alone (predmix at ``alpha``, or aGRAPA), truncated at 1/2 / mu."""
    capital, total, squares, out = 1.0, 0.0, 0.0, []
    mean, variance = 0.5, 0.25  # the running estimates before the first draw: the prior counted as one draw
    for t, value in enumerate(x, start=1):
        mu = (population * m - total) / (population - t + 1)
        if bets == "predmix":
            bet = math.sqrt(2 * math.log(1 / alpha) / (variance * t * math.log(1 + t)))
        else:
            bet = max(0.0, (mean - mu) / (variance + (mean - mu) ** 2))
        bet = min(bet, 0.5 / mu)
        capital *= 1 + bet * (value - mu)
        out.append(capital)
        total += value
        mean = min((0.5 + total) / (t + 1), 1.0)
        squares += (value - mean) ** 2
        variance = (0.25 + squares) / (t + 1)
    return out


@pytest.mark.parametrize("bets", ["predmix", "agrapa"])
def test_each_end_is_decided_by_its_own_sides_capital_at_alpha_not_at_alpha_over_two(bets: Bets) -> None:
    """Draws of one 0/1 observation from 120 units, 9 in 10 successes: the gate >= 0.6 passes at the first t where
    K+(0.6), computed here step by step, reaches 1/alpha = 20, not one unit earlier; the hedged two-sided interval
    (alpha/2 a side, the rule before) has not decided it there, and its own K+ needs 40."""
    x = [0.0 if i % 10 == 9 else 1.0 for i in range(60)]
    capital = _one_sided_capital(x, 0.6, 120, 0.05, bets)
    first = next(t for t, k in enumerate(capital) if k >= 20)
    path = wor_betting_cs(x, [1] * 60, 120, alpha=0.05, bets=bets, sides="each")
    assert decide(path.low[first - 1], path.high[first - 1], ">=", 0.6) == "undecided"
    assert decide(path.low[first], path.high[first], ">=", 0.6) == "pass"
    two = wor_betting_cs(x, [1] * 60, 120, alpha=0.05, bets=bets, sides="two")
    assert decide(two.low[first], two.high[first], ">=", 0.6) == "undecided"
    halved = _one_sided_capital(x, 0.6, 120, 0.025, bets)
    assert halved[first] < 40


def test_each_sides_capital_reaches_one_over_alpha_at_most_alpha_of_the_time_under_the_null() -> None:
    """Ville's bound for each side of the decision rule (aGRAPA bets, each side at alpha): 20,000 populations of 256
    units of one 0/1 observation (rates uniform in [0.2, 0.8]; 256 units so that the exact value k / 256 is exact in
    floating point), the first 255 drawn in a random order, K+ and K- at the population's exact value: each ever
    reaches 1/alpha in at most alpha of them (0.054: 2.6 standard errors of slack at 20,000 runs). The check has the
    power to fail a rule spending more: the same processes reach 1/(2 alpha), the level a side spends 2 alpha at, in
    more than 0.054 of them."""
    rng = np.random.default_rng(3)
    units, runs = 256, 20_000
    x = (rng.random((runs, units)) < rng.uniform(0.2, 0.8, runs)[:, None]).astype(float)
    exact = x.sum(axis=1) / units
    up, down = wor_log_capitals(x[:, :-1], exact, units, 0.05, bets="agrapa", sides="each")
    top_up, top_down = up.max(axis=1), down.max(axis=1)
    assert np.isfinite(top_up).all() and np.isfinite(top_down).all()
    assert (top_up >= math.log(20)).mean() <= 0.054 and (top_down >= math.log(20)).mean() <= 0.054
    assert (top_up >= math.log(10)).mean() > 0.054 and (top_down >= math.log(10)).mean() > 0.054
