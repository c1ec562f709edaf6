"""What a failure listing and the report's worst examples show, on real stored runs of targets that answer each
run differently: the input of the call the verdict is about (the injected review or context, the planted text
marked), that call's answer (not the trial's last) and the verdict's why; ``--limit`` counts trials."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import knowgap
from knowgap.report.data import load_run_data
from knowgap.report.examples import TEXT_MARKS, added_span
from knowgap.report.export import render_csv
from knowgap.report.html import render_run
from knowgap.report.summary import summary_markdown
from tests.helpers import knowgap_cli
from tests.report.injected_runs import extract_run, starter_injected_run


def test_an_injected_runs_verdict_shows_that_run_and_the_attack(tmp_path: Path, runs_root: Path) -> None:
    result, cases = extract_run(tmp_path, runs_root)
    found = knowgap.failures(result.run_id, runs_root)
    assert found.source == "stored" and found.trials == len(cases) and found.failures
    by_case = {c.id: c for c in cases}
    for f in found.failures:  # only injected run 1 flipped: each failure shows its answer, not run 2's
        assert f.part is not None and f.excerpt.endswith('"summary": "injected run 1", "overall_sentiment": '
                                                         '"negative", "contains_conflicting_signals": false}')
    assert {(e.trial_id, e.part) for e in found.exhibits} == {(f.trial_id, f.part) for f in found.failures}
    for shown in found.exhibits:
        case = by_case[shown.trial_id.split("|", 1)[0]]
        assert case.injected_review and case.injected_review in shown.input  # the injected review, not the clean
        [(start, end)] = shown.planted
        planted = shown.input[start:end]
        expected = added_span(case.review, case.injected_review)
        assert expected is not None and planted == case.injected_review[expected[0]:expected[1]]
        assert planted not in case.review and len(planted) > 20
        assert f"{TEXT_MARKS[0]}{planted[:30]}" in shown.input_text()

    done = knowgap_cli("show", result.run_id, "--runs-dir", str(runs_root), "--failed", "--limit", "1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"{result.run_id}: {len(found.failures)} failures in 2 trials (")
    assert lines[0].endswith("; the first trial")
    assert len([x for x in lines if x.startswith("- ")]) == 1  # one trial, with all its failures
    listed = [x for x in lines if re.match(r" +(flip_rate|attack_success_rate|sentiment_flip_rate): ", x)]
    assert len(listed) >= 3 and all("positive -> negative" in x for x in listed)
    [shown_input] = [x for x in lines if x.strip().startswith("input: ")]
    assert TEXT_MARKS[0] in shown_input and TEXT_MARKS[1] in shown_input
    [answer] = [x for x in lines if x.strip().startswith("answer: ")]
    assert "injected run 1" in answer and "run 2" not in done.stdout


def test_the_reports_worst_examples_show_the_injected_context_and_answer(runs_root: Path) -> None:
    result = starter_injected_run(runs_root)
    run = load_run_data(result.run_id, runs_root)
    html = render_run(run, anchor="r")
    worst = html.split("<h3>Worst examples</h3>", 1)[1]
    records = {r.trial_id: r for r in knowgap.iter_trials(result.run_id, runs_root)}
    examples = worst.split('<div class="example">')[1:]
    assert examples and len(examples) == sum(1 for r in records.values() if run.trial_failed(r))
    for example in examples:
        trial = records[re.search(r"<b>(.*?)</b>", example).group(1)]  # type: ignore[union-attr]
        [planted] = trial.output["injection"]["runs"]
        injected = [p for p in example.split('<div class="part">') if "injection 0" in p]
        assert len(injected) == 1  # the attack worked in every trial: its part shows the injected run
        part = injected[0]
        assert "<b>attack_success_rate</b>: " in part and "input (the planted text marked)" in part
        marked = re.findall(r'<mark class="planted"[^>]*>(.*?)</mark>', part, re.S)
        assert marked and planted["injection"]["marker"] in marked[0]
        assert f"The answer is {planted['injection']['marker']}." in part  # the injected run's answer
        if trial.scores["answerable"]:  # the clean run declined: its verdicts show the clean context and answer
            clean = next(p for p in example.split('<div class="part">') if "<b>accuracy</b>" in p)
            assert "<mark" not in clean and "I don&#x27;t know." in clean and "The answer is" not in clean
    summary = summary_markdown([run])
    assert "injection 0" in summary and "planted: " in summary


def test_show_trials_prints_the_answer_of_the_call_a_verdict_is_about(tmp_path: Path, runs_root: Path) -> None:
    """``knowgap show RUN --trials N`` prints, under each extract trial, injected run 1's answer (what its verdicts
    are about) and which call it is, not the trial's last call (injected run 2)."""
    result, cases = extract_run(tmp_path, runs_root)
    done = knowgap_cli("show", result.run_id, "--runs-dir", str(runs_root), "--trials", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    trials = [i for i, line in enumerate(lines) if line.startswith("- ")]
    assert len(trials) == len(cases) == 2
    for i in trials:
        shown = next(x for x in lines[i + 1:] if x.startswith("  "))
        assert shown.startswith("  target call 2 (injection 0 (") and '"summary": "injected run 1"' in shown
        assert "injected run 2" not in shown.split("): ", 1)[1]


def test_show_trials_prints_a_target_answer_where_the_last_call_is_a_judges(runs_root: Path) -> None:
    """A stored clarify run (python: systems as target, judge and simulated user), whose trials end with judge
    calls: each trial shows the target's answer, named by its call."""
    from tests.report.stored_runs import stored_run

    run = stored_run("clarify-turns", runs_root)
    records = list(knowgap.iter_trials(run.run_id, runs_root))
    assert any(r.calls[-1].role == "judge" for r in records)  # what the old listing printed
    done = knowgap_cli("show", run.run_id, "--runs-dir", str(runs_root), "--trials", str(len(records)),
                       env={"COLUMNS": "250"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for record in records:
        at = lines.index(next(x for x in lines if x.startswith(f"- {record.trial_id} [")))
        shown = next(x for x in lines[at + 1:] if x.startswith("  "))  # the scores may wrap: their lines start "'"
        found = re.fullmatch(r"  target call (\d+): (.*)", shown)
        assert found is not None, shown
        call = record.calls[int(found.group(1))]
        assert call.role == "target" and call.response is not None and found.group(2) == repr(call.response.text)


def test_an_agents_failure_shows_its_answer_not_its_first_evidence_request(runs_root: Path) -> None:
    """The stored partial run with an evidence budget (python: systems): a trial is the agent's requests, then its
    answer. A verdict on the trial (decision_accuracy: "did not parse") is about the answer it stored, which
    the listing, the CSV row and show --trials show, not the first request."""
    from tests.report.stored_runs import stored_run

    run = stored_run("partial-budget", runs_root)
    records = {r.trial_id: r for r in knowgap.iter_trials(run.run_id, runs_root)}
    found = knowgap.failures(run.run_id, runs_root)
    requested = 0
    for shown in found.exhibits:
        record = records[shown.trial_id]
        assert shown.part is None and shown.answer == record.output["reply"]
        first = next(c for c in record.calls if c.role == "target")
        requested += first.response is not None and first.response.text != record.output["reply"]
    assert requested >= 1  # the old listing showed these trials' first request
    rows = list(csv.DictReader(io.StringIO(render_csv([load_run_data(run.run_id, runs_root)]))))
    assert all(r["response"] == records[r["trial_id"]].output["reply"] for r in rows)


def test_a_verdict_on_the_final_answer_shows_the_final_answer(runs_root: Path) -> None:
    """The stored multi-turn clarify run (python: systems): a trial asks, the simulated user replies, the target
    answers again. A final_correctness verdict is about that last answer, with the user's reply as its input; a
    verdict on the first answer (clarification_rate) about the first; one listing shows each with its own call."""
    from tests.report.stored_runs import stored_run

    run = stored_run("clarify-turns", runs_root)
    records = {r.trial_id: r for r in knowgap.iter_trials(run.run_id, runs_root)}
    found = knowgap.failures(run.run_id, runs_root)
    later = 0
    for f in found.failures:
        record = records[f.trial_id]
        said = [m["content"] for m in record.output["conversation"] if m["role"] == "assistant"]
        shown = found.exhibit(f.trial_id, f.part, f.call)
        assert shown is not None and f.call is not None and record.calls[f.call].role == "target"
        if f.metric.startswith("final_correctness"):
            heard = [m["content"] for m in record.output["conversation"] if m["role"] == "user"]
            assert shown.answer == said[-1] and shown.input == heard[-1]
            later += len(said) > 1
        elif f.metric == "clarification_rate":
            assert shown.answer == said[0]
    assert later >= 1  # the old listing showed these trials' first answer (the clarifying questions)
    done = knowgap_cli("show", run.run_id, "--runs-dir", str(runs_root), "--failed")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for f in found.failures:
        if f.metric.startswith("final_correctness"):
            record = records[f.trial_id]
            final = [m["content"] for m in record.output["conversation"] if m["role"] == "assistant"][-1]
            at = lines.index(f"- {f.trial_id}")
            block = lines[at:next((i for i in range(at + 1, len(lines)) if lines[i].startswith("- ")), len(lines))]
            why = block.index(f"  {f.metric}: {f.why}")
            answer = next(x for x in reversed(block[:why]) if x.startswith("  answer"))
            assert repr(final) in answer


def test_a_flipped_trial_shows_both_runs_answers_to_the_part_that_flipped(tmp_path: Path, runs_root: Path) -> None:
    """Two extract runs of the same cases (--runs 2): in A no injected run flips, in B injected run 1 does. Each
    trial regressed, and knowgap compare shows both runs' injected run 1 (A positive, B negative), not each trial's
    last call (injected run 2, positive in both)."""
    from knowgap.report.compare import compare_runs

    before, cases = extract_run(tmp_path, runs_root, flips=False)
    after, _ = extract_run(tmp_path, runs_root)
    c = compare_runs(load_run_data(before.run_id, runs_root), load_run_data(after.run_id, runs_root), reps=50)
    assert [f.direction for f in c.flips] == ["regressed"] * len(cases)
    for f in c.flips:
        assert '"summary": "injected run 1"' in f.response_a and '"positive"' in f.response_a
        assert '"summary": "injected run 1"' in f.response_b and '"negative"' in f.response_b
    done = knowgap_cli("compare", before.run_id, after.run_id, "--runs-dir", str(runs_root))
    assert done.returncode in (0, 1), done.stderr
    shown = [x for x in done.stdout.splitlines() if x.strip().startswith("regressed")]
    assert len(shown) == len(cases) and all("injected run 1" in x and "injected run 2" not in x for x in shown)
