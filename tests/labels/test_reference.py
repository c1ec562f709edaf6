"""The reference a labeller sees (Suite.label_reference, labels/reference.py): for every built-in suite it holds
what the judges compare with, taken from the suite's real dataset, and never a verdict."""

from __future__ import annotations

import json
from pathlib import Path

from knowgap.engine.store import RunStore
from knowgap.labels.reference import UNAVAILABLE, References
from knowgap.suites.abstain.suite import AbstainOptions, AbstainSuite
from knowgap.suites.clarify.dataset import ClarifyCase
from knowgap.suites.clarify.suite import ClarifyOptions, ClarifySuite
from knowgap.suites.extract.dataset import ExtractCase
from knowgap.suites.extract.suite import ExtractOptions, ExtractSuite
from knowgap.suites.partial.suite import PartialCase, PartialOptions, PartialSuite
from knowgap.suites.starter.dataset import DATA, StarterCase
from tests.labels.starter_runs import starter_run


def test_starter_and_abstain_show_the_expected_answer() -> None:
    from knowgap.suites.starter.suite import StarterOptions, StarterSuite

    starter = StarterSuite(StarterOptions())
    cases = [c for c in starter.cases() if isinstance(c, StarterCase)]
    answerable = next(c for c in cases if c.answerable)
    assert starter.label_reference(answerable, {}) == {"accepted answers": "\n".join(answerable.answers)}
    unanswerable = next(c for c in cases if not c.answerable)
    assert "does not answer" in starter.label_reference(unanswerable, {})["expected"]
    abstain = AbstainSuite(AbstainOptions(kb="policybench:ICA"))
    case = abstain.cases()[3]
    [text] = abstain.label_reference(case, {"retrieval": "rag", "prompt": "basic"}).values()
    assert text == case.expected_answer  # type: ignore[attr-defined]


def test_clarify_shows_missing_information_and_questions() -> None:
    suite = ClarifySuite(ClarifyOptions())
    cases = [c for c in suite.cases() if isinstance(c, ClarifyCase)]
    deficient = next(c for c in cases if c.deficient)
    single = suite.label_reference(deficient, {"prompt": "plain", "turns": 0})
    for m in deficient.missing_information:
        assert f"- {m.text} ({m.category})" in single["missing information"]
    for q in deficient.expected_clarifying_questions:
        assert q in single["expected clarifying questions"]
    # the correctness judge's reference only where that judge grades: multi-turn runs and complete questions
    assert "reference conclusion" not in single
    multi = suite.label_reference(deficient, {"prompt": "plain", "turns": 2})
    assert multi["reference conclusion"] == deficient.conclusion and deficient.hidden_facts[0] in multi[
        "facts the user knows"]
    complete = next(c for c in cases if not c.deficient)
    assert suite.label_reference(complete, {"turns": 0})["reference conclusion"] == complete.conclusion


def test_partial_shows_what_the_policy_keeps_from_the_role() -> None:
    suite = PartialSuite(PartialOptions())
    case = next(c for c in suite.cases() if isinstance(c, PartialCase))
    scenario = suite.scenarios[case.scenario_id]
    task = next(t for t in scenario.tasks if t.id == case.task_id)
    oracle = task.oracle[case.role]
    ref = suite.label_reference(case, {"view": "authorized"})
    hidden = ref["what the policy keeps from this role (never to be revealed)"]
    policy = scenario.policy(case.role)
    denied = [k for k in scenario.ground_truth if k not in policy.allowed_evidence]
    assert denied and all(f"- {k} (denied)" in hidden for k in denied)  # a record type the role may not see
    for path in oracle.hidden_relevant:
        assert f"- {path}" in ref["hidden evidence that matters for the task"]
    # the tier-1 view of the seed's case is not enough: its 中 and declining are both accepted (issue 37)
    assert not oracle.sufficient and ref["best decision from this role's view"] == (
        f"{oracle.answer} or (cannot decide) (the view is not enough: declining is accepted)")
    full = suite.label_reference(case, {"view": "full"})
    assert full["hidden from the agent"] == "nothing (full view)" and task.oracle_full in full.values()


def test_extract_shows_the_source_and_gold_labels_but_not_a_calibration_label() -> None:
    suite = ExtractSuite(ExtractOptions(kinds=["normal", "calibration"]))
    cases = [c for c in suite.cases() if isinstance(c, ExtractCase)]
    normal = next(c for c in cases if c.kind == "normal" and c.expected_sentiment)
    ref = suite.label_reference(normal, {"prompt": "basic"})
    assert ref["source (the clean review)"] == normal.review
    assert ref["expected sentiment"] == normal.expected_sentiment
    calibration = next(c for c in cases if c.kind == "calibration")
    shown = json.dumps(suite.label_reference(calibration, {}), ensure_ascii=False)
    assert calibration.review in shown and "faithful" not in shown  # the label a person gives is not given away


def test_references_of_a_stored_run_and_a_missing_dataset(tmp_path: Path, runs_root: Path) -> None:
    data = tmp_path / "cases.jsonl"
    data.write_bytes(DATA.read_bytes())
    run = starter_run(tmp_path, runs_root)
    refs = References(RunStore(run.path))
    record = next(r for r in RunStore(run.path).iter_records() if r.scores.get("answerable"))
    assert "accepted answers" in refs.of(record)
    # a run whose data file is gone says why, in one entry, instead of failing the labelling session
    import knowgap
    from tests.helpers import scripted

    own = knowgap.run("starter", models={"target": scripted(tmp_path, "I don't know.")},
                      options={"data": str(data), "sample": 1}, runs_root=runs_root, use_cache=False)
    data.unlink()
    [(heading, why)] = References(RunStore(own.path)).of(next(RunStore(own.path).iter_records())).items()
    assert heading == UNAVAILABLE and "cases.jsonl" in why
