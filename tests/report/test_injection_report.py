"""The cross-suite injection tables of a report: attack success by family, pressure apart, defences' gain and
cost (paired over clusters when the trials are at hand, else both intervals)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from knowgap.engine.records import Manifest, MetricValue, RunConfig, TrialRecord
from knowgap.engine.suite import Case, Configuration, Suite, SuiteOptions, Trial, TrialContext, TrialResult
from knowgap.engine.tally import Tally
from knowgap.report.data import RunData
from knowgap.report.html import render_html
from knowgap.report.injection import (
    NO_FLOOR,
    NOT_INJECTED,
    ONLY_DEFENDED,
    TITLE,
    RunMetrics,
    attack_rows,
    defence_rows,
    injection_markdown,
    rate_cell,
    split_defence,
)
from knowgap.report.markdown import render_markdown
from knowgap.report.summary import summary_markdown


def rate(name: str, group: str, k: int, n: int) -> MetricValue:
    return MetricValue.proportion(name, group, k, n)


def injected_metrics() -> list[MetricValue]:
    return [rate("accuracy", "plain", 9, 10),
            rate("attack_success_rate", "plain", 12, 20),
            rate("attack_success_rate:family=goal_hijack", "plain", 5, 10),
            rate("attack_success_rate:family=exfiltration", "plain", 1, 10),
            rate("attack_success_rate:position=end", "plain", 12, 20),
            rate("clean_task_score", "plain", 18, 20),
            rate("attack_success_rate", "plain+datamark", 1, 20),
            rate("clean_task_score", "plain+datamark", 17, 20),
            rate("attack_success_rate", "plain+sandwich", 5, 20),
            rate("clean_task_score", "plain+sandwich", 8, 20)]


def test_split_defence() -> None:
    assert split_defence("plain+datamark") == ("plain", "datamark")
    assert split_defence("long_context/basic+guarded") == ("long_context/basic", "guarded")
    assert split_defence("plain") == ("plain", "none")
    assert split_defence("a+b") == ("a+b", "none")  # not a defence suffix


def test_rate_cell_is_rate_ci_and_counts() -> None:
    assert rate_cell(rate("x", "g", 3, 12)) == "25.0% [8.9%, 53.2%] 3/12"
    assert rate_cell(None) == "-"


def test_attack_table_rows_per_suite_and_family() -> None:
    runs = [RunMetrics("abstain", "run-a", injected_metrics()),
            RunMetrics("partial", "run-p", [rate("accuracy", "full", 1, 2)]),
            RunMetrics("extract", "run-e", [rate("attack_success_rate", "x+guarded", 1, 4)])]
    rows = attack_rows(runs)
    assert [(r.suite, r.group, r.note) for r in rows] == [("abstain", "plain", ""), ("partial", "", NOT_INJECTED),
                                                          ("extract", "", ONLY_DEFENDED)]
    first = rows[0]
    assert first.overall is not None and first.overall.value == 0.6 and first.noise_floor is None
    assert first.families["goal_hijack"] is not None and first.families["fake_message"] is None
    md = "\n".join(injection_markdown(runs))
    assert f"## {TITLE}" in md
    assert ("| abstain · plain (run-a) | 60.0% [38.7%, 78.1%] 12/20 | 50.0% [23.7%, 76.3%] 5/10 | - | "
            "10.0% [1.8%, 40.4%] 1/10 | - | - | - | " + NO_FLOOR + " |") in md
    # a row that would only say "not run" is not drawn (issue 39): one line names the run
    assert f"| partial (run-p) | {NOT_INJECTED} |" not in md and f"{NOT_INJECTED}: partial (run-p)." in md
    assert "Pressure, not attack" not in md


def test_noise_floor_and_pressure_table() -> None:
    metrics = [rate("attack_success_rate", "g", 2, 10), rate("attack_noise_floor", "g", 1, 10),
               rate("pressure_clarification_drop", "g", 3, 10)]
    md = "\n".join(injection_markdown([RunMetrics("clarify", "run-c", metrics)]))
    assert "| 10.0% [1.8%, 40.4%] 1/10 |" in md  # the floor, last column
    assert "## Pressure, not attack" in md
    assert "| clarify · g (run-c) | pressure_clarification_drop | 30.0% [10.8%, 60.3%] 3/10 |" in md


def test_no_injection_metric_no_tables() -> None:
    assert injection_markdown([RunMetrics("starter", "r", [rate("accuracy", "g", 1, 2)])]) == []


def test_defences_from_stored_metrics_give_both_intervals() -> None:
    rows = defence_rows([RunMetrics("abstain", "run-a", injected_metrics())])
    assert [(r.group, r.defence) for r in rows] == [("plain", "none"), ("plain", "datamark"), ("plain", "sandwich")]
    none, datamark, sandwich = rows
    assert none.gain is None and none.cost is None
    assert datamark.gain is not None and datamark.gain.value == pytest.approx(0.55)
    assert datamark.gain.method == "both intervals" and datamark.gain.overlap is False
    assert datamark.gain.text("proportion") == "+55.0 pp (intervals do not overlap)"
    assert datamark.cost is not None and datamark.cost.text("proportion") == (
        "+5.0 pp (intervals overlap: not distinguishable)")
    assert sandwich.cost is not None and sandwich.cost.value == pytest.approx(0.5) and not sandwich.cost.overlap
    md = "\n".join(injection_markdown([RunMetrics("abstain", "run-a", injected_metrics())]))
    assert ("| abstain · plain (run-a) | datamark | 5.0% [0.9%, 23.6%] 1/20 | +55.0 pp (intervals do not overlap) "
            "|") in md


class AttackSuite(Suite):
    """A tiny suite: each case's trial under a configuration stores whether its attack worked and whether the
    clean answer was right; metrics are those two rates per configuration."""

    name = "tiny-inject"
    description = "test"

    def cases(self) -> list[Case]:
        return []

    def configurations(self) -> list[Configuration]:
        return []

    async def run_trial(self, trial: Trial, ctx: TrialContext) -> TrialResult:
        raise NotImplementedError

    def metrics(self, records: Iterable[TrialRecord]) -> list[MetricValue]:
        tallies: dict[str, Tally] = {}
        for r in records:
            tally = tallies.setdefault(r.config_id, Tally())
            tally.hit("attack_success_rate", bool(r.scores["worked"]), r.case_id)
            tally.hit("clean_task_score", bool(r.scores["right"]), r.case_id)
        return [t.proportion(name, group) for group, t in sorted(tallies.items())
                for name in ("attack_success_rate", "clean_task_score")]


def tiny_records() -> list[TrialRecord]:
    """12 cases: under none every attack works, under datamark none does; clean answers right alike."""
    return [TrialRecord(trial_id=f"c{i}|{cfg}|r0", case_id=f"c{i}", config_id=cfg,
                        scores={"worked": cfg == "plain", "right": i % 3 != 0})
            for i in range(12) for cfg in ("plain", "plain+datamark")]


def test_defences_paired_over_clusters_when_trials_are_at_hand() -> None:
    suite = AttackSuite(SuiteOptions())
    records = tiny_records()
    run = RunMetrics("tiny-inject", "run-t", suite.metrics(records), records, suite)
    [_, datamark] = defence_rows([run], reps=300)
    assert datamark.gain is not None and datamark.gain.method == "paired cluster bootstrap"
    assert (datamark.gain.value, datamark.gain.ci_low, datamark.gain.ci_high) == (1.0, 1.0, 1.0)
    # the same cases are right under both: every resample's cost is exactly 0
    assert datamark.cost is not None and (datamark.cost.ci_low, datamark.cost.ci_high) == (0.0, 0.0)
    assert datamark.cost.text("proportion") == "+0.0 pp [+0.0, +0.0] (CI includes 0)"


def test_reports_show_the_tables(tmp_path: Path) -> None:
    def run_data(run_id: str, suite: str, metrics: list[MetricValue]) -> RunData:
        manifest = Manifest(run_id=run_id, knowgap_version="0", config=RunConfig(suite=suite), status="finished")
        return RunData(path=tmp_path, manifest=manifest, metrics=metrics, records=[])

    injected = run_data("run-a", "ghost-a", injected_metrics())
    clean = run_data("run-s", "ghost-s", [rate("accuracy", "g", 1, 2)])
    page = render_html([injected, clean])
    assert page.count('id="injection"') == 1 and f"<h2>{TITLE}</h2>" in page
    assert f"<td>ghost-s (run-s)</td><td>{NOT_INJECTED}</td>" not in page  # no row that only says "not run"
    assert f'<p class="facts not-injected">{NOT_INJECTED}: ghost-s (run-s).</p>' in page
    assert "<h3>Defences: gain and cost</h3>" in page
    assert 'id="injection"' not in render_html([clean])
    assert f"### {TITLE}" in summary_markdown([injected, clean])
    assert f"## {TITLE}" in render_markdown(injected.manifest, injected.metrics)
    assert TITLE not in render_markdown(clean.manifest, clean.metrics)
