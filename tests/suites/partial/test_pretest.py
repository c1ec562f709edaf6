"""The seed's sufficiency pre-test: a configurable band (default the seed's 15-35 points) and a full-view accuracy
bar before a family is called well calibrated; the verdict in words for the CLI and report.md."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from knowgap.engine.records import MetricValue, TrialRecord
from knowgap.suites.partial.metrics import PretestRule, compute, pretest_words
from knowgap.suites.partial.suite import PartialOptions, PartialSuite


def records(family: str, full_right: int, auth_right: int, n: int = 10, prompt: str | None = None
            ) -> list[TrialRecord]:
    """n decision trials per view of one family, the first ``*_right`` right on the full-data answer."""
    out = []
    for view, right in (("full", full_right), ("authorized", auth_right)):
        config = {"view": view} | ({"prompt": prompt} if prompt else {})
        for i in range(n):
            out.append(TrialRecord(trial_id=f"{family}-{view}-{prompt}-{i}", case_id=f"{family}/{i}",
                                   config_id=f"view={view}", config=config,
                                   scores={"decision": True, "correct": i < right, "correct_full": i < right,
                                           "parsed": True, "gold": "a", "predicted": "a"}))
    return out


CASES = {f"{f}/{i}": SimpleNamespace(family=f, dimensions=[], task_dimensions=[])
         for f in ("easy", "fit", "hard", "chance")
         for i in range(10)}


def pretest(metrics: list[MetricValue], family: str, group: str = "pretest") -> dict[str, float | None]:
    return {m.name: m.value for m in metrics if m.group == f"{group} · family={family}"}


def test_default_band_is_the_seeds_and_needs_a_good_full_view() -> None:
    rows = (records("easy", 10, 9) + records("fit", 9, 7) + records("hard", 9, 4) + records("chance", 4, 2))
    metrics = compute(rows, CASES)
    assert pretest(metrics, "fit") == {"full_view_accuracy": 0.9, "accuracy_drop_points": pytest.approx(20.0),
                                       "drop_below_band": 0.0, "drop_above_band": 0.0, "full_view_too_weak": 0.0,
                                       "well_calibrated": 1.0}
    assert pretest(metrics, "easy")["drop_below_band"] == 1.0 and pretest(metrics, "easy")["well_calibrated"] == 0
    assert pretest(metrics, "hard")["drop_above_band"] == 1.0 and pretest(metrics, "hard")["well_calibrated"] == 0
    # a 20-point drop inside the band, but 40% with the full view: says nothing, not well calibrated
    chance = pretest(metrics, "chance")
    assert chance["accuracy_drop_points"] == pytest.approx(20.0) and chance["full_view_too_weak"] == 1.0
    assert chance["well_calibrated"] == 0.0
    words = pretest_words(metrics)
    assert words is not None and "full-view accuracy >= 80% and a drop of 15-35 points" in words
    lines = {line.split(":")[0].removeprefix("- "): line for line in words.splitlines() if line.startswith("- ")}
    assert lines["family=fit"].endswith("well calibrated")
    assert "too easy" in lines["family=easy"] and "too hard" in lines["family=hard"]
    assert "says nothing about the scenarios" in lines["family=chance"]
    assert PartialSuite.render_tables(metrics) == words


def test_band_and_bar_are_options() -> None:
    rows = records("fit", 9, 7) + records("chance", 4, 2)
    metrics = compute(rows, CASES, PretestRule(low=25, high=40, min_full_accuracy=0.3))
    assert pretest(metrics, "fit")["drop_below_band"] == 1.0  # 20 points is below 25
    assert pretest(metrics, "chance")["full_view_too_weak"] == 0.0  # 40% clears a 30% bar
    options = PartialOptions(pretest_band_low=25, pretest_band_high=40, pretest_min_full_accuracy=0.3)
    assert options.pretest() == PretestRule(low=25, high=40, min_full_accuracy=0.3)
    assert PartialOptions().pretest() == PretestRule(low=15, high=35, min_full_accuracy=0.8)
    with pytest.raises(ValidationError, match="pretest_band_low"):
        PartialOptions(pretest_band_low=40, pretest_band_high=30)


def test_pretest_pairs_views_of_the_same_prompt() -> None:
    rows = records("fit", 9, 7) + records("fit", 9, 9, prompt="stepwise")
    metrics = compute(rows, CASES)
    assert pretest(metrics, "fit")["accuracy_drop_points"] == pytest.approx(20.0)
    assert pretest(metrics, "fit", "pretest · prompt=stepwise")["accuracy_drop_points"] == pytest.approx(0.0)
    assert pretest_words([]) is None


def test_roles_of_one_task_are_one_cluster() -> None:
    """Two roles of each of 5 tasks: the intervals count 5 tasks, and both roles agreeing on every task gives
    exactly the interval of one role per task."""
    cases = {f"s/{role}/t{t}": SimpleNamespace(family="f", dimensions=[], task_dimensions=[], scenario_id="s",
                                               task_id=f"t{t}")
             for role in ("a", "b") for t in range(5)}
    rows = [TrialRecord(trial_id=f"s/{role}/t{t}|view=authorized|r0", case_id=f"s/{role}/t{t}",
                        config_id="view=authorized", config={"view": "authorized"},
                        scores={"decision": True, "correct": t < 3, "correct_full": t < 3, "parsed": True,
                                "gold": "a", "predicted": "a" if t < 3 else "b"})
            for role in ("a", "b") for t in range(5)]
    both = {m.name: m for m in compute(rows, cases) if m.group == "view=authorized"}
    one = {m.name: m for m in compute(rows[:5], cases) if m.group == "view=authorized"}
    for name in ("decision_accuracy", "macro_f1"):
        assert (both[name].n, both[name].n_cases, one[name].n_cases) == (10, 5, 5)
    assert (both["decision_accuracy"].ci_low, both["decision_accuracy"].ci_high) == \
        (one["decision_accuracy"].ci_low, one["decision_accuracy"].ci_high)
