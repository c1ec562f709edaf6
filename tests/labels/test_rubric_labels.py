"""Rubric labels end to end on a stored clarify run: the terminal asks each rubric dimension 1-5 with the case's
reference shown and the judge's scores hidden until the labels are saved; `knowgap label rubric` compares people
with the judge (weighted kappa, ordinal alpha) and the people's weighted total with the judge's (Spearman)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import knowgap
from knowgap.labels.store import LabelStore
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.suites.clarify.dataset import CASES_FILE, ClarifyCase, load_cases
from knowgap.suites.clarify.judging import RUBRIC_WEIGHTS
from tests.labels.starter_runs import cli, starter_run
from tests.suites.clarify.test_suite_engine import FakeLawyer

DIMS = [f"rubric_{k}" for k in RUBRIC_WEIGHTS]
pytestmark = pytest.mark.slow  # a clarify run and several real CLI processes per test


class VaryingJudge(FakeLawyer):
    """The clarify fake lawyer, whose rubric scores differ from case to case (so kappa has spread)."""

    spec = "fake:varying"

    async def chat(self, request: ChatRequest) -> ChatResponse:
        text = request.messages[-1].content
        if "RATER GUIDELINE" in text:  # one dimension per request (A-D in RUBRIC_WEIGHTS order), one digit
            k = next(i for i, q in enumerate(self.by_query) if q in text)
            dim = next(i for i, letter in enumerate("ABCD") if f"from 1 to 5:\n{letter}." in text)
            digit = (1 + k % 5, 5 - k % 5, 2 + k % 3, 1 + (k + 2) % 5)[dim]
            return ChatResponse(text=str(digit), model=self.spec)
        return await super().chat(request)


@pytest.fixture
def clarify_run(tmp_path: Path, runs_root: Path) -> tuple[str, list[ClarifyCase]]:
    return make_clarify_run(tmp_path, runs_root)


def make_clarify_run(tmp_path: Path, runs_root: Path) -> tuple[str, list[ClarifyCase]]:
    """A stored clarify run: 6 deficient cases x 2 prompts, rubric scores that differ from case to case."""
    rows = [line for line in CASES_FILE.read_text(encoding="utf-8").splitlines()
            if json.loads(line)["kind"] == "deficient"][:6]
    data = tmp_path / "six.jsonl"
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    cases = load_cases(data)
    fake = VaryingJudge(cases)
    result = knowgap.run("clarify", models={"target": fake.spec}, providers={fake.spec: fake},
                         options={"data": str(data), "prompts": ["plain", "clarify-first"], "no_correctness": True},
                         runs_root=runs_root)
    assert result.manifest.trials_ok == 12
    return result.run_id, cases


def test_terminal_asks_every_dimension_with_the_reference_and_hides_the_judge(
        clarify_run: tuple[str, list[ClarifyCase]], runs_root: Path) -> None:
    run_id, cases = clarify_run
    rd = ("--runs-dir", str(runs_root))
    sampled = cli("label", "sample", run_id, "--judge-field", DIMS[0], "--n", "4", "--seed", "1", *rd)
    assert sampled.returncode == 0, sampled.stderr
    store = LabelStore.open(run_id, runs_root)
    order = store.read_sample(DIMS[0]).trial_ids
    records = store.records()
    judge = {t: [records[t].scores[d] for d in DIMS] for t in order}
    # alice gives each trial the judge's own scores, typed on stdin
    typed = "".join(f"{v}\n" for t in order for v in judge[t])
    out = cli("label", run_id, "--annotator", "alice", "--show-judge", *rd, stdin=typed)
    assert out.returncode == 0, out.stderr
    assert "rubric 'clarify': score each dimension 1 (poor) to 5 (excellent)" in out.stdout
    assert f"done: {4 * len(DIMS)} labels saved" in out.stdout
    first = out.stdout.split("=== [2/4]")[0]
    case = next(c for c in cases if c.id == records[order[0]].case_id)
    # the reference the rubric judge used, before the first question
    before = first.split(f"{DIMS[0]}? [1] 1")[0]
    assert "--- reference: missing information ---" in before and case.missing_information[0].text in before
    assert "--- reference: expected clarifying questions ---" in before
    assert case.expected_clarifying_questions[0] in before
    # the judge's scores only once the last dimension is saved
    assert "judge verdicts" not in before and "rubric_total" not in before
    after = first.split(f"saved {DIMS[-1]}=")[1]
    assert "--- judge verdicts ---" in after and f"{DIMS[0]}={judge[order[0]][0]}" in after
    events = [e for e in store.events() if e.annotator == "alice"]
    assert [(e.trial_id, e.field, e.value) for e in events] == [
        (t, d, judge[t][i]) for t in order for i, d in enumerate(DIMS)]
    assert all(isinstance(e.value, int) for e in events)
    assert events[0].context.reference["missing information"].startswith(f"- {case.missing_information[0].text}")
    # a second session has nothing left to do; a score outside 1-5 is refused
    again = cli("label", run_id, "--annotator", "alice", *rd, stdin="")
    assert "4 already labelled by alice, 0 to go" in again.stdout
    bob = cli("label", run_id, "--annotator", "bob", *rd, stdin="7\n3\nq\n")
    assert "unknown answer '7'" in bob.stdout and f"saved {DIMS[0]}=3" in bob.stdout


def test_rubric_agreement_against_the_judge_and_the_totals(clarify_run: tuple[str, list[ClarifyCase]],
                                                           runs_root: Path) -> None:
    run_id, _ = clarify_run
    store = LabelStore.open(run_id, runs_root)
    records = store.records()
    trials = sorted(records)[:8]
    for t in trials:
        for d in DIMS:
            judge = records[t].scores[d]
            assert isinstance(judge, int)
            store.add(records[t], d, "alice", judge)  # alice agrees with the judge everywhere
            store.add(records[t], d, "bob", 3)  # bob always says 3
    rd = ("--runs-dir", str(runs_root))
    out = cli("label", "rubric", run_id, "--json", "--reps", "100", *rd)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["rubric"]["weights"] == {f"rubric_{k}": w for k, w in RUBRIC_WEIGHTS.items()}
    for dim in report["dimensions"]:
        pairs = {(p["a"], p["b"]): p for p in dim["pairs"]}
        assert dim["labelled_items"] == 8
        assert pairs[("judge", "alice")]["kappa"]["value"] == pytest.approx(1.0)
        assert pairs[("judge", "alice")]["n"] == 8
        # bob has no spread: against anyone, quadratic-weighted kappa is 0 (his squared distance to a rater is
        # exactly what chance predicts)
        assert pairs[("judge", "bob")]["kappa"]["value"] == pytest.approx(0.0, abs=1e-9)
        assert dim["alpha_people"]["value"] < dim["alpha_with_judge"]["value"]
    totals = {(c["a"], c["b"]): c for c in report["totals"]}
    both = totals[("people's total", "judge's total")]
    # the people's total is the mean of alice's (= the judge's) and bob's constant 3: same order as the judge's
    assert both["n"] == 8 and both["rho"]["value"] == pytest.approx(1.0)
    assert ("people's total", "element_recall") in totals  # an automatic score of the suite
    text = cli("label", "rubric", run_id, "--reps", "100", *rd).stdout
    assert "quadratic-weighted kappa" in text and "Spearman" in text and "judge vs alice" in text
    nominal = " ".join(cli("label", "agreement", run_id, "--field", DIMS[0], "--reps", "50", *rd).stdout.split())
    assert "is a dimension of rubric 'clarify' (ordinal 1-5)" in nominal and f"label rubric {run_id}" in nominal


def test_rubric_report_errors(clarify_run: tuple[str, list[ClarifyCase]], tmp_path: Path, runs_root: Path) -> None:
    run_id, _ = clarify_run
    rd = ("--runs-dir", str(runs_root))
    none_yet = cli("label", "rubric", run_id, *rd)
    assert none_yet.returncode == 2 and "no rubric labels on rubric_gap_identification" in none_yet.stderr
    starter = starter_run(tmp_path, runs_root)
    no_rubric = cli("label", "rubric", starter.run_id, *rd)
    assert no_rubric.returncode == 2 and "its suite (starter) declares no rubric" in no_rubric.stderr
