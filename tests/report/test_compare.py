"""knowgap compare: paired bootstrap on matched trials, flips with McNemar, analytic fallback."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import knowgap
from knowgap.engine.records import Manifest, MetricValue, RunConfig, TrialRecord
from knowgap.report import compare_markdown, compare_runs, load_run_data
from knowgap.report.compare import bootstrap_changes
from knowgap.suites import get_suite
from tests.helpers import knowgap_cli


def change(c: knowgap.report.Comparison, group: str, name: str) -> knowgap.report.compare.MetricChange:
    [found] = [x for x in c.changes if x.group == group and x.name == name]
    return found


def with_repeats(run: knowgap.report.RunData, repeats: int) -> knowgap.report.RunData:
    """The run as if made with ``repeats`` repeats that all answered as repeat 0 did."""
    run.records = [r.model_copy(update={"trial_id": r.trial_id.replace("|r0", f"|r{i}"), "repeat": i})
                   for r in run.records for i in range(repeats)]
    return run


def test_identical_repeats_give_the_p_value_of_one_repeat(abstain_run: knowgap.RunResult,
                                                          perfect_run: knowgap.RunResult) -> None:
    runs = [with_repeats(load_run_data(r.path), 3) for r in (abstain_run, perfect_run)]
    c = compare_runs(runs[0], runs[1], reps=200)
    plain = next(t for t in c.mcnemar if t.group == "prompt=plain")
    assert (plain.fixed, plain.regressed, plain.trials) == (24, 0, 48)
    assert (plain.clusters_fixed, plain.clusters_regressed, plain.clusters) == (8, 0, 16) and plain.clustered
    assert plain.p_value == pytest.approx(2 / 256)  # as with one repeat (test_paired_comparison)
    assert "| prompt=plain | 24 | 0 | 0.00781 | 8 / 0 of 16 |" in compare_markdown(c)
    assert plain.text() == "24 fixed, 0 regressed; by cluster 8 fixed, 0 regressed of 16 (McNemar p=0.00781)"


def test_paired_comparison(abstain_run: knowgap.RunResult, perfect_run: knowgap.RunResult) -> None:
    c = compare_runs(load_run_data(abstain_run.path), load_run_data(perfect_run.path), reps=300)
    assert c.paired_trials == 32 and c.method.startswith("paired bootstrap over 16 cases")
    for group in ("prompt=grounded", "prompt=plain"):
        acc = change(c, group, "accuracy")
        assert (acc.a, acc.b, acc.delta) == (0.0, 1.0, 1.0)
        assert (acc.ci_low, acc.ci_high) == (1.0, 1.0)  # every resample: 0% -> 100%
        assert acc.significant and acc.p_value == pytest.approx(2 / 301)
        over = change(c, group, "over_abstention")
        assert over.delta == -1.0 and over.significant
        same = change(c, group, "abstention_unanswerable")
        assert (same.delta, same.ci_low, same.ci_high, same.significant) == (0.0, 0.0, 0.0, False)
        assert same.p_value == 1.0
    # the 8 answerable cases per group flipped from failed (abstained) to passed
    assert [f.direction for f in c.flips] == ["fixed"] * 16
    assert {(t.group, t.fixed, t.regressed) for t in c.mcnemar} == {("prompt=grounded", 8, 0), ("prompt=plain", 8, 0)}
    assert all(t.p_value == pytest.approx(2 / 256) for t in c.mcnemar)
    assert all((t.clusters, t.trials, t.clustered) == (16, 16, False) for t in c.mcnemar)  # one trial per case
    flip = next(f for f in c.flips if f.trial_id == "en-library-hours|prompt=plain|r0")
    assert flip.response_a == "I don't know." and flip.response_b == "According to the context, it is 20:00."
    assert flip.scores_a["abstained"] is True and flip.scores_b["correct"] is True
    md = compare_markdown(c)
    assert "| prompt=plain | accuracy | 0.0% | 100.0% | +100.0 pp | [+100.0 pp, +100.0 pp] |" in md
    assert "| prompt=plain | 8 | 0 | 0.00781 |" in md


def test_reverse_direction_and_cli(abstain_run: knowgap.RunResult, perfect_run: knowgap.RunResult,
                                   runs_root: Path, tmp_path: Path) -> None:
    md = tmp_path / "cmp.md"
    proc = knowgap_cli("compare", perfect_run.run_id, abstain_run.run_id, "--runs-dir", str(runs_root), "--json",
                   "--reps", "200", "--md", str(md), "--fail-on-regression")
    assert proc.returncode == 1, proc.stderr  # 16 regressions, significant
    data = json.loads(proc.stdout)
    assert [f["direction"] for f in data["flips"]] == ["regressed"] * 16
    assert {(t["fixed"], t["regressed"]) for t in data["mcnemar"]} == {(0, 8)}
    assert "regressed" in md.read_text(encoding="utf-8")
    proc = knowgap_cli("compare", abstain_run.run_id, perfect_run.run_id, "--runs-dir", str(runs_root), "--reps", "200",
                   "--fail-on-regression")
    assert proc.returncode == 0, proc.stderr
    assert "prompt=plain: 8 fixed, 0 regressed (McNemar p=0.00781)" in proc.stdout


def test_identical_runs_have_no_flips(perfect_run: knowgap.RunResult) -> None:
    run = load_run_data(perfect_run.path)
    c = compare_runs(run, run, reps=200)
    assert c.flips == [] and not c.significant_changes
    assert all(x.delta == 0 for x in c.changes)


def stored_run(root: Path, run_id: str, metrics: list[MetricValue]) -> Path:
    """A run folder from elsewhere: a suite this install does not have, metrics but no trials."""
    path = root / run_id
    path.mkdir(parents=True)
    manifest = Manifest(run_id=run_id, knowgap_version="0.0.1", config=RunConfig(suite="ghost"), status="finished")
    (path / "manifest.json").write_text(manifest.model_dump_json(), encoding="utf-8")
    (path / "metrics.json").write_text(json.dumps([m.model_dump() for m in metrics]), encoding="utf-8")
    return path


def test_unpaired_analytic_fallback(tmp_path: Path) -> None:
    a = stored_run(tmp_path, "ghost-a", [
        MetricValue(name="rate", group="g", value=0.2, n=10),
        MetricValue(name="score", group="g", value=0.5, ci_low=0.4, ci_high=0.6, n=30, kind="mean"),
        MetricValue(name="leaks", group="g", value=3, n=3, kind="count"),
        MetricValue(name="old", group="g", value=0.1, n=10)])
    b = stored_run(tmp_path, "ghost-b", [
        MetricValue(name="rate", group="g", value=0.8, n=10),
        MetricValue(name="score", group="g", value=0.7, ci_low=0.6, ci_high=0.8, n=30, kind="mean"),
        MetricValue(name="leaks", group="g", value=0, n=0, kind="count")])
    c = compare_runs(load_run_data(a), load_run_data(b))
    assert c.paired_trials == 0 and c.only_a == ["g/old"] and c.only_b == []
    rate = change(c, "g", "rate")
    # by hand: pooled p = 0.5, se = sqrt(0.25 * 0.2) = 0.2236, z = 2.683 -> p = 0.0073
    assert rate.p_value == pytest.approx(0.00729, abs=1e-4) and rate.significant
    assert rate.delta == pytest.approx(0.6)
    # Newcombe: Wilson 2/10 = [0.0567, 0.5098], 8/10 = [0.4902, 0.9433]
    assert (rate.ci_low, rate.ci_high) == (pytest.approx(0.1619, abs=1e-3), pytest.approx(0.8027, abs=1e-3))
    score = change(c, "g", "score")
    se = math.hypot(0.1 / 1.959964, 0.1 / 1.959964)
    assert score.ci_low == pytest.approx(0.2 - 1.959964 * se) and score.p_value == pytest.approx(0.00557, abs=1e-4)
    leaks = change(c, "g", "leaks")
    assert (leaks.delta, leaks.significant, leaks.method) == (-3, None, "change only")


def test_slow_metrics_fall_back_to_analytic(abstain_run: knowgap.RunResult, perfect_run: knowgap.RunResult) -> None:
    c = compare_runs(load_run_data(abstain_run.path), load_run_data(perfect_run.path), budget_s=1e-9)
    assert c.method.endswith("too slow to bootstrap within the time budget")
    acc = change(c, "prompt=plain", "accuracy")
    assert acc.method == "two-proportion z (unpaired)" and acc.significant  # 0/8 vs 8/8
    assert len(c.flips) == 16  # flips do not need the bootstrap


def test_compare_html_page(abstain_run: knowgap.RunResult, hostile_run: knowgap.RunResult, runs_root: Path,
                           tmp_path: Path) -> None:
    """Abstaining everywhere -> hostile answers: the 16 unanswerable trials regress; their responses (HTML) stay
    text on the comparison page."""
    from tests.report.test_html import parse

    out = tmp_path / "compare.html"
    proc = knowgap_cli("compare", abstain_run.run_id, hostile_run.run_id, "--runs-dir", str(runs_root), "--reps", "200",
                       "--html", str(out))
    assert proc.returncode == 0, proc.stderr
    page = out.read_text(encoding="utf-8")
    tags = parse(page)
    assert tags.tags["script"] == 0 and tags.tags["img"] == 0
    assert page.count("<b>regressed</b>") == 16 and "<b>fixed</b>" not in page
    assert tags.classes["pre.response"] == 32 + 2 * 5  # A and B of each flip, then 5 worst examples per run
    assert ("<tr><td>prompt=plain</td><td class=num>0</td><td class=num>8</td><td class=num>0.00781</td>"
            "<td class=num>0 / 8 of 16</td></tr>") in page
    assert "change in abstention_unanswerable (B − A, 95% CI)" in page
    # 3 change charts (no counts), 3 per run (errors is 0 in every group: folded, no chart) and the headline chart of
    # B against its baseline A (issue 39)
    assert tags.classes["svg.bar-chart"] == 3 + 2 * 3 + 1
    assert f"<title>knowgap compare {abstain_run.run_id} → {hostile_run.run_id}</title>" in page


def _starter_trial(case: int, repeat: int, correct: bool) -> TrialRecord:
    return TrialRecord(trial_id=f"c{case}|plain|r{repeat}", case_id=f"c{case}", config_id="plain", repeat=repeat,
                       scores={"answerable": True, "correct": correct, "abstained": not correct})


def test_paired_differences_are_clustered_by_case() -> None:
    """B fixes 6 of 20 cases and breaks 2: identical repeats in A change no interval of the change (the pairs
    are cases, not trials); one cluster holding every case leaves nothing to resample."""
    suite_cls = get_suite("starter")
    suite = suite_cls(suite_cls.Options())
    before = [c % 4 == 0 for c in range(20)]
    after = [(c % 4 == 0 and c not in (0, 4)) or c in (1, 2, 3, 5, 6, 7) for c in range(20)]
    b = [_starter_trial(c, 0, after[c]) for c in range(20)]
    once = bootstrap_changes(suite, [_starter_trial(c, 0, before[c]) for c in range(20)], b, paired=True, reps=300)
    thrice = bootstrap_changes(suite, [_starter_trial(c, r, before[c]) for c in range(20) for r in range(3)], b,
                               paired=True, reps=300)
    assert thrice == once
    lo, hi, p = once[("plain", "accuracy")]
    assert lo < 0.2 < hi and lo > -0.1  # +4 of 20 cases
    one_cluster = bootstrap_changes(suite, [_starter_trial(c, 0, before[c]) for c in range(20)], b, paired=True,
                                    reps=300, clusters={f"c{c}": "all" for c in range(20)})
    assert one_cluster[("plain", "accuracy")][:2] == (pytest.approx(0.2), pytest.approx(0.2))


def test_a_run_with_repeats_pairs_per_case(tmp_path: Path, runs_root: Path, perfect_run: knowgap.RunResult) -> None:
    file = tmp_path / "abstain3.jsonl"
    file.write_text(json.dumps({"response": "I don't know."}) + "\n", encoding="utf-8")
    thrice = knowgap.run("starter", models={"target": f"scripted:{file}"}, runs_root=runs_root, repeats=3)
    c = compare_runs(load_run_data(thrice.path), load_run_data(perfect_run.path), reps=200)
    # every trial of the 16 shared cases in both runs, not only the 32 trials whose ids match
    assert c.method.startswith("paired bootstrap over 16 cases (96 + 32 trials, 32 matched")
    acc = change(c, "prompt=plain", "accuracy")
    assert (acc.delta, acc.ci_low, acc.ci_high, acc.method) == (1.0, 1.0, 1.0, "paired cluster bootstrap")
    [m] = [m for m in load_run_data(thrice.path).metrics if m.group == "prompt=plain" and m.name == "accuracy"]
    assert (m.n, m.n_cases) == (24, 8)


def test_stored_clustered_proportions_compare_by_their_intervals(tmp_path: Path) -> None:
    """Without the suite, a proportion whose trials share cases is compared from its clustered interval, not as
    k of n independent trials."""
    a = stored_run(tmp_path, "ghost-a", [MetricValue(name="rate", group="g", value=0.25, ci_low=0.1, ci_high=0.5,
                                                     n=72, n_cases=24)])
    b = stored_run(tmp_path, "ghost-b", [MetricValue(name="rate", group="g", value=0.5, ci_low=0.3, ci_high=0.7,
                                                     n=72, n_cases=24)])
    rate = change(compare_runs(load_run_data(a), load_run_data(b)), "g", "rate")
    assert rate.method == "normal approximation from the CIs (unpaired)"
    assert rate.ci_low == pytest.approx(0.25 - math.hypot(0.4, 0.4) / 2) and not rate.significant


def test_runs_of_different_samples_compare_on_the_cases_both_ran(perfect_run: knowgap.RunResult,
                                                                 hostile_run: knowgap.RunResult) -> None:
    """A ran cases 0-9 (all right), B ran 4-15 (4-7 wrong): the change is of the shared cases 4-9, the cases its
    interval resamples, not of B's 12 against A's 10."""
    perfect, hostile = load_run_data(perfect_run.path), load_run_data(hostile_run.path)
    order = sorted({r.case_id for r in perfect.records}, key=lambda c: [r.case_id for r in perfect.records].index(c))
    bad = {r.trial_id: r for r in hostile.records}
    a, b = load_run_data(perfect_run.path), load_run_data(perfect_run.path)
    assert a.suite is not None
    a.records = [r for r in perfect.records if r.case_id in order[:10]]
    b.records = [bad[r.trial_id] if r.case_id in order[4:8] else r for r in perfect.records
                 if r.case_id in order[4:]]
    a.metrics, b.metrics = a.suite.metrics(a.records), a.suite.metrics(b.records)
    c = compare_runs(a, b, reps=200)
    assert "the changes are of the 6 cases both runs ran (A ran 10, B 12)" in c.method
    shared = [r for r in b.records if r.case_id in order[4:10]]
    want = {(m.group, m.name): m.value for m in a.suite.metrics(shared)}
    for ch in c.changes:
        if ch.method == "paired cluster bootstrap" and ch.delta is not None:
            assert ch.b == want[(ch.group, ch.name)]
            assert ch.ci_low is not None and ch.ci_high is not None and ch.ci_low <= ch.delta <= ch.ci_high
    stored_b = {(m.group, m.name): m.value for m in b.metrics}
    assert any(ch.b != stored_b[(ch.group, ch.name)] for ch in c.changes if ch.method == "paired cluster bootstrap")


def test_a_metric_whose_judge_changed_is_marked(abstain_run: knowgap.RunResult, perfect_run: knowgap.RunResult,
                                                tmp_path: Path) -> None:
    """Run A recorded another version of the judge behind ``accuracy``: its change is marked, with both judges
    named, in the comparison, its markdown and its HTML; the other metrics are not."""
    from knowgap.report.html import render_comparison

    a, b = load_run_data(abstain_run.path), load_run_data(perfect_run.path)
    judges = dict(a.manifest.metric_judges or {})
    old = judges["accuracy"].model_copy(update={"version": "older-1"})
    a.manifest = a.manifest.model_copy(update={"metric_judges": {**judges, "accuracy": old}})
    c = compare_runs(a, b, reps=200)
    now = judges["accuracy"]
    expected = f"{now.judge} older-1 → {now.judge} {now.version}"
    assert {x.judge_changed for x in c.changes if x.name == "accuracy"} == {expected}
    assert all(x.judge_changed is None for x in c.changes if x.name != "accuracy")
    [note] = c.judge_notes()
    assert expected in note and "(accuracy)" in note
    md = compare_markdown(c)
    assert "| prompt=plain | accuracy † |" in md and f"† judge changed between the runs: {expected}" in md
    assert "accuracy †" in render_comparison(c) and "judge changed between the runs" in render_comparison(c)
    same = compare_runs(load_run_data(abstain_run.path), b, reps=200)
    assert same.judge_notes() == [] and "†" not in compare_markdown(same)
    (abstain_run.path / "manifest.json").write_text(a.manifest.model_dump_json(), encoding="utf-8")  # as stored
    proc = knowgap_cli("compare", str(abstain_run.path), str(perfect_run.path), "--reps", "200")
    assert proc.returncode == 0, proc.stderr
    assert f"† judge changed between the runs: {expected}" in " ".join(proc.stdout.split())
