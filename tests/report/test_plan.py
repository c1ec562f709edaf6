"""``knowgap plan``: baseline, ICC and paired correlation measured on stored runs made with scripted models."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

import knowgap
from knowgap.cli import app
from knowgap.errors import KnowgapError
from knowgap.report.plan import WORST_CASE_RATE, make_plan
from knowgap.stats import power as pw
from tests.helpers import knowgap_cli, write_jsonl

ABSTAIN = "I don't know."
ANSWER = "It is 42."

# Starter trials run configuration by configuration, case by case (answerable cases at even positions), repeat
# by repeat; an ordered scripted file cycles through its answers in that order. With 2 repeats, trial t is case
# t // 2, repeat t % 2.


def _run(tmp_path: Path, runs_root: Path, name: str, answers: list[str], repeats: int) -> knowgap.RunResult:
    file = write_jsonl(tmp_path / f"{name}.jsonl", [{"response": a} for a in answers])
    return knowgap.run("starter", models={"target": f"scripted:{file}"}, repeats=repeats, concurrency=1,
                       runs_root=runs_root)


@pytest.fixture
def copies_run(tmp_path: Path, runs_root: Path) -> knowgap.RunResult:
    """Both repeats of a case answer alike; answerable cases 0, 4, 8, 12 abstain and 2, 6, 10, 14 answer, under
    both prompts (32 trials a prompt, a multiple of the 8-answer cycle): over_abstention 0.5, ICC 1, the two
    prompts' verdicts on a case identical (correlation 1)."""
    return _run(tmp_path, runs_root, "copies", [ABSTAIN, ABSTAIN, ABSTAIN, ABSTAIN, ANSWER, ANSWER, ANSWER, ANSWER],
                repeats=2)


@pytest.fixture
def coin_run(tmp_path: Path, runs_root: Path) -> knowgap.RunResult:
    """The first repeat of every case abstains, the second answers: every case is 1 of 2, so the repeats carry
    all the variation (ICC 0)."""
    return _run(tmp_path, runs_root, "coin", [ABSTAIN, ANSWER], repeats=2)


def test_identical_repeats_measure_icc_one_and_repeats_do_not_reduce_cases(copies_run: knowgap.RunResult,
                                                                           runs_root: Path) -> None:
    plan = make_plan("starter", detect=0.2, repeats=3, runs=[copies_run.run_id], metric="over_abstention",
                     group="prompt=plain", runs_root=runs_root)
    assert plan.baseline_rate == 0.5 and "16 trials (8 cases)" in plan.baseline_source
    assert plan.icc == 1.0 and copies_run.run_id in plan.icc_source
    assert plan.paired.cases_with_repeats == plan.paired.cases_one_repeat
    assert plan.independent.cases_with_repeats == plan.independent.cases_one_repeat
    assert any("repeats do not help" in line for line in plan.verdict)
    # 8 of the shipped 16 cases score over_abstention (the answerable ones), and the run was not sampled
    assert plan.available_cases == 8


def test_independent_repeats_measure_icc_zero_and_divide_cases(coin_run: knowgap.RunResult, runs_root: Path) -> None:
    plan = make_plan("starter", detect=0.2, repeats=4, runs=[coin_run.run_id], metric="over_abstention",
                     group="prompt=grounded", runs_root=runs_root)
    assert plan.icc == 0.0
    assert plan.baseline_rate == 0.5 and plan.phi == 0.0  # one prompt: the paired correlation is assumed 0
    one = pw.n_paired(0.5, 0.7, psi=pw.discordance(0.5, 0.7))
    assert plan.paired.cases_one_repeat == math.ceil(one)
    assert plan.paired.cases_with_repeats == math.ceil(one / 4)
    assert any("4 trials count as 4.0 independent ones" in line for line in plan.verdict)


def test_a_second_group_measures_the_paired_correlation(copies_run: knowgap.RunResult, runs_root: Path) -> None:
    alone = make_plan("starter", detect=0.2, runs=[copies_run.run_id], metric="over_abstention",
                      group="prompt=plain", runs_root=runs_root)
    paired = make_plan("starter", detect=0.2, runs=[copies_run.run_id], metric="over_abstention",
                       group="prompt=plain", versus="prompt=grounded", runs_root=runs_root)
    assert alone.phi == 0.0 and "assumed" in alone.discordance_source
    assert paired.phi == pytest.approx(1.0) and "8 cases" in paired.discordance_source
    # verdicts that agree on every case leave only the difference itself discordant: far fewer cases
    assert paired.discordance == pytest.approx(0.2)
    assert paired.paired.cases_one_repeat is not None and alone.paired.cases_one_repeat is not None
    assert paired.paired.cases_one_repeat < alone.paired.cases_one_repeat / 2  # 37 vs 96
    assert paired.independent == alone.independent  # pairing does not change the independent design


def test_two_runs_measure_the_paired_correlation(copies_run: knowgap.RunResult, coin_run: knowgap.RunResult,
                                                 runs_root: Path) -> None:
    plan = make_plan("starter", detect=0.2, runs=[copies_run.run_id, coin_run.run_id], metric="over_abstention",
                     group="prompt=plain", runs_root=runs_root)
    # the coin run is 1 of 2 on every case: which of its trials abstains has nothing to do with the case, so
    # its verdicts are uncorrelated with the other run's, measured (not assumed)
    assert plan.phi == pytest.approx(0.0)
    assert f"vs run {coin_run.run_id} (8 cases)" in plan.discordance_source and "assumed" not in plan.discordance_source


def test_two_runs_on_different_cases_are_refused(copies_run: knowgap.RunResult, tmp_path: Path,
                                                  runs_root: Path) -> None:
    cases = write_jsonl(tmp_path / "other.jsonl", [
        {"id": f"other-{i}", "lang": "en", "context": "The shop opens at 9.", "question": "When does it open?",
         "answerable": True, "answers": ["9"]} for i in range(3)])
    script = write_jsonl(tmp_path / "answer.jsonl", [{"response": ANSWER}])
    other = knowgap.run("starter", models={"target": f"scripted:{script}"}, options={"data": str(cases)},
                        runs_root=runs_root)
    with pytest.raises(KnowgapError, match="share no case scoring over_abstention"):
        make_plan("starter", detect=0.2, runs=[copies_run.run_id, other.run_id], metric="over_abstention",
                  group="prompt=plain", runs_root=runs_root)


def test_without_a_run_the_plan_assumes_the_worst_case_and_copies() -> None:
    plan = make_plan("starter", detect=0.1, repeats=5)
    assert plan.baseline_rate == WORST_CASE_RATE and "worst case" in plan.baseline_source
    assert plan.icc == 1.0 and "temperature 0" in plan.icc_source
    assert plan.available_cases == 16
    assert plan.independent.cases_one_repeat == math.ceil(pw.n_independent(0.5, 0.6))
    assert plan.paired.cases_with_repeats == plan.paired.cases_one_repeat
    assert "not 0.10" in plan.verdict[0]


def test_given_values_win_over_assumptions(tmp_path: Path) -> None:
    cases = write_jsonl(tmp_path / "cases.jsonl", [
        {"id": f"c{i}", "lang": "en", "context": "The shop opens at 9.", "question": "When does it open?",
         "answerable": True, "answers": ["9"]} for i in range(5)])
    plan = make_plan("starter", detect=0.1, baseline_rate=0.3, repeats=2, icc=0.0, discordance=0.2,
                     data=str(cases))
    assert plan.available_cases == 5 and str(cases) in plan.available_source
    harder = max(pw.n_paired(0.3, 0.4, psi=0.2), pw.n_paired(0.3, 0.2, psi=0.2))
    assert plan.paired.cases_one_repeat == math.ceil(harder)
    assert plan.icc == 0.0


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"detect": 0.0}, "--detect must be between 0 and 1"),
    ({"detect": 0.1, "baseline_rate": 1.5}, "--baseline-rate must be between 0 and 1"),
    ({"detect": 0.1, "repeats": 0}, "--repeats must be at least 1"),
    ({"detect": 0.1, "versus": "prompt=plain"}, "--versus compares two groups of one run"),
    ({"detect": 0.1, "data": "missing.jsonl"}, "missing.jsonl"),
])
def test_bad_input_is_one_clear_error(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(KnowgapError, match=message):
        make_plan("starter", **kwargs)  # type: ignore[arg-type]


def test_a_run_needs_a_metric_and_group_named_when_it_has_several(copies_run: knowgap.RunResult,
                                                                   runs_root: Path) -> None:
    with pytest.raises(KnowgapError, match="give --metric, one of abstention_unanswerable, accuracy, over_abstention"):
        make_plan("starter", detect=0.1, runs=[copies_run.run_id], runs_root=runs_root)
    with pytest.raises(KnowgapError, match="give --group, one of prompt=grounded, prompt=plain"):
        make_plan("starter", detect=0.1, runs=[copies_run.run_id], metric="accuracy", runs_root=runs_root)
    with pytest.raises(KnowgapError, match="is a run of suite starter, not extract"):
        make_plan("extract", detect=0.1, runs=[copies_run.run_id], runs_root=runs_root)


def test_cli_plans_from_a_stored_run(copies_run: knowgap.RunResult, runs_root: Path) -> None:
    args = ("plan", "starter", "--detect", "0.2", "--repeats", "3", "--from-run", copies_run.run_id,
            "--metric", "over_abstention", "--group", "prompt=plain", "--versus", "prompt=grounded",
            "--runs-dir", str(runs_root))
    proc = knowgap_cli(*args)
    assert proc.returncode == 0, proc.stderr
    assert "ICC) 1.00" in proc.stdout and "repeats do not help" in proc.stdout
    assert "available: 8 cases" in proc.stdout
    data = json.loads(knowgap_cli(*args, "--json").stdout)
    assert data["baseline_rate"] == 0.5 and data["icc"] == 1.0 and data["phi"] == pytest.approx(1.0)
    assert data["paired"]["cases_one_repeat"] == data["paired"]["cases_with_repeats"]

    bad = knowgap_cli("plan", "starter", "--detect", "0.2", "--from-run", copies_run.run_id, "--metric", "nope",
                      "--group", "prompt=plain", "--runs-dir", str(runs_root))
    assert bad.returncode == 2
    assert "--metric 'nope'" in bad.stderr and "Traceback" not in bad.stderr


def test_help_has_an_example_and_names_the_designs() -> None:
    result = CliRunner().invoke(app, ["plan", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "Example: knowgap plan extract --detect 0.10 --from-run RUN --metric flip_rate --repeats 3" in text
    assert "paired" in text and "independent groups" in text
