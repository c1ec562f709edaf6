"""The decision a report opens on (issue 39): the scorecard of each run's headline metrics (derived from the suites'
MetricSpec headline flags) with interval, n, the gate's verdict, the judge's badge and the change from a baseline;
where each run fails most (wrong verdicts grouped by cause); housekeeping zeros folded, breakdowns collapsed, and
no injection row that would only say "not run". Read from stored runs of every suite, made by the real engine."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

import knowgap
from knowgap.engine.metric_spec import headline, spec_of
from knowgap.engine.records import MetricValue
from knowgap.report import compare_runs, evaluate_gate, load_run_data, render_html, summary_markdown
from knowgap.report.causes import cause_of, failure_causes
from knowgap.report.failures import list_failures
from knowgap.report.gate import Threshold
from knowgap.report.injection import NOT_INJECTED
from knowgap.report.markdown import render_markdown
from knowgap.report.scorecard import BREAKDOWN, breakdown_by, folded_zero, run_card, scorecard
from knowgap.suites.starter import StarterSuite
from tests.report.stored_runs import DEMO, stored_run


@pytest.fixture
def demo(runs_root: Path) -> list[knowgap.report.RunData]:
    return [stored_run(name, runs_root) for name in DEMO]


def test_each_card_holds_the_headline_metrics_its_suite_declares(demo: list[knowgap.report.RunData]) -> None:
    for run in demo:
        assert run.suite is not None and run.suite.metric_specs is not None
        names = headline(run.suite.metric_specs)
        card = run_card(run)
        configs = [m for m in run.metrics if BREAKDOWN not in m.group]
        expected = [n for n in names if any(m.name == n for m in configs)]
        assert [r.metric for r in card.rows] == expected and expected, run.run_id
        assert card.groups == list(dict.fromkeys(m.group for m in configs if m.name in names))
        for row in card.rows:
            for group, cell in zip(card.groups, row.cells, strict=True):
                stored = next((m for m in run.metrics if (m.group, m.name) == (group, row.metric)), None)
                if stored is None:
                    assert cell is None
                    continue
                assert cell is not None and (cell.value, cell.ci_low, cell.ci_high) == (
                    stored.value, stored.ci_low, stored.ci_high)
                assert cell.n == stored.n_text() and cell.gate == [] and cell.change is None


def test_a_metric_declared_headline_joins_the_scorecard(runs_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = stored_run("starter", runs_root)
    assert [r.metric for r in run_card(run).rows] == ["abstention_unanswerable", "accuracy"]
    specs = tuple(dataclasses.replace(s, headline=s.name == "over_abstention") for s in StarterSuite.metric_specs or ())
    monkeypatch.setattr(StarterSuite, "metric_specs", specs)
    row = run_card(load_run_data(run.path)).rows
    assert [r.metric for r in row] == ["over_abstention"] and row[0].lower_is_better


def test_gate_verdicts_and_judge_badges(runs_root: Path) -> None:
    run = stored_run("starter", runs_root)
    gate = evaluate_gate([run], [Threshold.parse("accuracy >= 0.2"), Threshold.parse("errors == 0")])
    card = scorecard([run], gate=gate)
    accuracy = next(r for r in card.cards[0].rows if r.metric == "accuracy")
    for cell in accuracy.cells:
        assert cell is not None and cell.value is not None
        assert cell.gate_passed is (cell.value >= 0.2) and cell.gate[0].threshold == "accuracy >= 0.2"
    assert card.gate is not None and not card.gate.passed and len(card.gate.failed) == 1  # plain: 16.7% < 20%
    assert card.gate.failed[0].startswith("accuracy >= 0.2 [prompt=plain]: actual 0.1667")
    # the identity system's judges have no card for this run's judge versions: each headline number is a SCREEN
    assert {r.judge_status for r in card.cards[0].rows} == {"screen"}
    page = render_html([run], gate=gate)
    assert '<span class="verdict fail" id="gate-verdict">Gate FAILED: 1 of 4 checks</span>' in page
    assert page.index('id="scorecard"') < page.index('id="fails"') < page.index('id="gate"')
    assert page.count('data-gate="fail"') == 1 and page.count('data-gate="pass"') == 1
    # the headline plot marks the threshold across each gated bar: 320 px of labels, then 0.2 of the 360 px axis
    assert page.count('<line class="target" x1="392.0"') == 2 and page.count('class="target"') == 2


def test_a_run_against_its_baseline_shows_each_change_and_its_significance(abstain_run: knowgap.RunResult,
                                                                          perfect_run: knowgap.RunResult) -> None:
    a, b = load_run_data(abstain_run.path), load_run_data(perfect_run.path)
    comparison = compare_runs(a, b, reps=300)
    sc = scorecard([a, b], comparison=comparison)
    assert [c.run_id for c in sc.cards] == [b.run_id]  # the baseline's numbers are in the changes
    card = sc.cards[0]
    assert card.baseline == a.run_id
    for row in card.rows:
        for cell in row.cells:
            assert cell is not None and cell.change is not None
            ch = next(c for c in comparison.changes if (c.group, c.name) == (cell.group, row.metric))
            assert (cell.change.delta, cell.change.significant) == (ch.delta, ch.significant)
    # the model that declines everything against one that answers every case right: accuracy 0% -> 100%, better
    accuracy = next(r for r in card.rows if r.metric == "accuracy")
    assert all(c is not None and c.change is not None and c.change.better and c.change.significant
               and c.change.text.startswith("+100.0 pp") for c in accuracy.cells)
    abstention = next(r for r in card.rows if r.metric == "abstention_unanswerable")
    assert all(c is not None and c.change is not None and c.change.delta == 0 and c.change.better is None
               for c in abstention.cells)  # both abstain on every unanswerable case
    page = render_html([a, b], comparison=comparison)
    assert page.count('class="chg better sig"') == 2 and page.count('class="chg"') == 2
    md = summary_markdown([a, b], comparison=comparison)
    assert "| change vs baseline |" in md and "+100.0 pp" in md and "(**significant**)" in md
    assert md.index("### Scorecard") < md.index(f"<details><summary>every metric compared ({len(comparison.changes)})"
                                                 f"</summary>\n\n### compare `{a.run_id}` → `{b.run_id}`")


def test_housekeeping_zeros_fold_and_breakdowns_collapse(runs_root: Path) -> None:
    run = stored_run("abstain-loo", runs_root)
    specs = run.suite.metric_specs if run.suite is not None else None
    folded = folded_zero(run.metrics, specs)
    assert "errors" in folded
    for name in folded:
        spec = spec_of(specs or (), name)
        assert spec is not None and spec.lower_is_better and not spec.headline and not spec.judges()
        assert all(m.value == 0 for m in run.metrics if m.name == name)
    page = render_html([run])
    main, _, rest = page.partition('<details class="fold breakdowns">')
    details = rest.partition("</details>")[0]
    table = main.rpartition("<table class=metrics>")[2]
    assert " · kb=" not in table and " · kb=" in details
    assert details.count("<tr data-judge=") == sum(1 for m in run.metrics if BREAKDOWN in m.group
                                                   and m.name not in folded)
    assert table.count("<tr data-judge=") == sum(1 for m in run.metrics if BREAKDOWN not in m.group
                                                 and m.name not in folded)
    assert all(f'">{name}</td>' not in table for name in folded)
    assert f"0 in every group (housekeeping, lower is better): {', '.join(sorted(folded))}" in page
    assert f"<summary>per-group breakdowns (kb): {details.count('<tr data-judge=')} rows</summary>" in page


def test_what_a_breakdown_breaks_down_by() -> None:
    def row(name: str, group: str) -> MetricValue:
        return MetricValue.proportion(name, group, 1, 2)

    assert [breakdown_by(row(n, g)) for n, g in (
        ("abstention_rate", "rag/basic · kb=BTT"), ("clarification_rate", "prompt=plain · zh"),
        ("flip_rate:position=end", "prompt=default"), ("judge_outcome:scored", "prompt=default"),
        ("accuracy", "prompt=plain"))] == ["kb", "language", "position", "judge_outcome", ""]


def test_where_it_fails_most_groups_wrong_verdicts_by_cause(runs_root: Path) -> None:
    run = stored_run("abstain-loo", runs_root)
    found = failure_causes(run, limit=50)
    failing = {f.trial_id for f in list_failures(run).failures}
    assert found.failed == len(failing) and found.trials == run.manifest.trials_total
    assert [c.trials for c in found.causes] == sorted((c.trials for c in found.causes), reverse=True)
    cited = re.compile(r"cited fact \d+, which is not in the context")
    expected = {r.trial_id for r in run.records for v in r.verdicts if v.verdict == "wrong" and cited.fullmatch(v.why)}
    cause = next(c for c in found.causes if c.cause == "cited fact #, which is not in the context")
    assert cause.trials == len(expected) > 1 and cause.metrics == ["invented_citation_rate"]
    assert cause.example in expected and sum(n for _, n in cause.groups) == cause.trials
    assert cause_of("claims judge: 0.00 of the claims supported (pass >= 0.7)") == (
        "claims judge: # of the claims supported (pass >= #)")
    assert failure_causes(run, limit=2).more == len(found.causes) - 2
    # each cause's example links into knowgap serve with --link-template
    page = render_html([run], link_template="http://127.0.0.1:8765/#/run/{run_id}/{trial_id}?case={case_id}")
    top = failure_causes(run)
    for c in top.causes:
        assert c.example.startswith(f"{c.example_case}|")
        assert f'<a href="http://127.0.0.1:8765/#/run/{run.run_id}/{c.example}?case={c.example_case}">' in page


def test_the_demo_report_opens_on_the_scorecard_and_draws_no_not_run_row(demo: list[knowgap.report.RunData]) -> None:
    page = render_html(demo, title="knowgap demo")
    order = [page.index(x) for x in ('id="scorecard"', 'id="fails"', 'id="headline-plots"', 'id="injection"',
                                     'id="run-0"')]
    assert order == sorted(order)
    assert f"<td>{NOT_INJECTED}</td>" not in page  # only extract was injected: the others get no row
    assert f"{NOT_INJECTED}: starter ({demo[0].run_id}), abstain ({demo[1].run_id})" in page
    assert page.count('class="card"') == len(DEMO)
    md = summary_markdown(demo)
    head = md.index("### Scorecard")
    assert head < md.index("### Where it fails most") < md.index("<details>")
    assert len(md) < 65_536  # a GitHub comment's limit
    for card in scorecard(demo).cards:
        for row in card.rows:
            for cell in row.cells:
                assert cell is None or f"| {cell.value_text} {cell.ci_text} | {cell.n} |" in md


def test_report_md_opens_on_the_scorecard(runs_root: Path) -> None:
    run = stored_run("clarify", runs_root)
    text = render_markdown(run.manifest, run.metrics)
    assert text.index("## Scorecard") < text.index("## Models") < text.index("## Metrics")
    assert "| clarify `" in text and "element\\_f2 ↑" in text


def test_a_run_stopped_by_its_own_gate_shows_its_decisions(tmp_path: Path, runs_root: Path) -> None:
    from tests.engine.test_scripted_engine import perfect_file

    file = perfect_file(tmp_path, runs_root)
    result = knowgap.run("starter", models={"target": f"scripted:{file}"}, runs_root=runs_root, until="decided",
                         thresholds=["accuracy >= 0.3", "over_abstention <= 0.5"])
    run = load_run_data(result.path)
    record = run.manifest.sequential
    assert record is not None
    decided = {(s.group, s.metric): s.decision for s in record.sequences if s.threshold}
    assert decided and set(decided.values()) == {"pass"}  # every answer right: decided on a few cases
    sc = scorecard([run])
    assert sc.gate is not None and sc.gate.checks == len(decided) == 4 and sc.gate.passed
    [card] = sc.cards
    accuracy = next(r for r in card.rows if r.metric == "accuracy")
    for cell in accuracy.cells:
        assert cell is not None and [g.threshold for g in cell.gate] == ["accuracy >= 0.3"]
        assert cell.gate_passed is True and cell.gate[0].message == "--until decided: pass"
    assert '<span class="verdict pass" id="gate-verdict">Gate passed: 4 checks</span>' in render_html([run])


def test_a_cause_holding_a_key_is_redacted(tmp_path: Path) -> None:
    from knowgap.engine.records import Manifest, RunConfig, TrialRecord, Verdict
    from knowgap.report.data import RunData

    key = "sk-ant-api03-abcdefghijklmnop"
    records = [TrialRecord(trial_id=f"c{i}|plain|r0", case_id=f"c{i}", config_id="plain",
                           verdicts=[Verdict(metric="leak_rate", verdict="wrong", why=f"echoed {key} in reply {i}")])
               for i in range(3)]
    manifest = Manifest(run_id="run-k", knowgap_version="0", config=RunConfig(suite="ghost"), status="finished")
    run = RunData(path=tmp_path, manifest=manifest, metrics=[], records=records)
    [cause] = failure_causes(run).causes
    assert (cause.cause, cause.trials, cause.example_why) == ("echoed *** in reply #", 3, "echoed *** in reply 0")
    page, md = render_html([run]), summary_markdown([run])
    assert key not in page and key not in md and "echoed *** in reply #" in page


def test_against_a_baseline_each_cause_counts_its_trials_in_both(abstain_run: knowgap.RunResult,
                                                                   hostile_run: knowgap.RunResult) -> None:
    a, b = load_run_data(hostile_run.path), load_run_data(abstain_run.path)
    comparison = compare_runs(a, b, reps=200)
    page = render_html([a, b], comparison=comparison)
    fails = page[page.index('id="fails"'):page.index('id="headline-plots"')]
    assert b.run_id in fails  # B's causes, with A's count of each beside
    assert f'<th title="the trials of this cause in baseline {a.run_id}, of 32">baseline</th>' in fails
    # both decline every answerable case (16 trials); only A answered the unanswerable ones, so B has no such cause
    assert ('<tr class="cause"><td class="num">16</td><td class="num baseline">16</td><td class="why">declined an '
            "answerable question</td>") in fails
    assert "answered a question" not in fails
    md = summary_markdown([a, b], comparison=comparison)
    assert "  - 16 trials (baseline: 16): declined an answerable question" in md
