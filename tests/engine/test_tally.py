"""The engine's metric tally: proportions with Wilson intervals, means with a seeded bootstrap, counts, and
nothing reported for a proportion no trial reached."""

from __future__ import annotations

import pytest

from knowgap.engine.records import MetricValue
from knowgap.engine.tally import Tally
from knowgap.stats import bootstrap_mean, wilson


def test_hits_become_a_wilson_proportion() -> None:
    t = Tally()
    for ok in (True, True, False, True, 0, 1):
        t.hit("accuracy", bool(ok))
    m = t.proportion("accuracy", "prompt=plain", description="share right")
    lo, hi = wilson(4, 6)
    assert (m.name, m.group, m.kind, m.value, m.n, m.description) == ("accuracy", "prompt=plain", "proportion",
                                                                      pytest.approx(4 / 6), 6, "share right")
    assert (m.ci_low, m.ci_high) == (lo, hi)


def test_a_proportion_without_trials_is_none_and_is_not_listed() -> None:
    t = Tally()
    t.hit("b", False)
    assert t.hits("a") == (0, 0)
    assert t.proportion_names() == ["b"]  # reading "a" did not add it
    m = t.proportion("a", "g")
    assert (m.value, m.ci_low, m.ci_high, m.n) == (None, None, None, 0)
    assert t.proportion("b", "g").value == 0.0


def test_values_become_a_bootstrap_mean_with_the_given_seed() -> None:
    t = Tally()
    values = [0.2, 0.9, 0.4, 0.45, 1.0, 0.05, 0.61, 0.33, 0.72, 0.18, 0.99, 0.27]
    for v in values:
        t.add("score", v)
    for seed in (0, 3):
        m = t.mean("score", "g", description="mean score", seed=seed)
        assert (m.kind, m.n, m.value) == ("mean", 12, pytest.approx(sum(values) / 12))
        assert (m.ci_low, m.ci_high) == bootstrap_mean(values, seed=seed)
    assert t.mean("score", "g", seed=0) != t.mean("score", "g", seed=3)
    empty = MetricValue.mean("other", "g", [])
    assert (empty.value, empty.ci_low, empty.ci_high, empty.n, empty.kind) == (None, None, None, 0, "mean")


def test_counts_add_up_and_read_zero_when_unseen() -> None:
    t = Tally()
    t.count("errors")
    t.count("errors")
    t.count("tokens", 120)
    assert [t.counted(n, "g").value for n in ("errors", "tokens", "never")] == [2.0, 120.0, 0.0]
    assert t.counted("errors", "g").kind == "count"
    assert sorted(t.counts) == ["errors", "tokens"]
