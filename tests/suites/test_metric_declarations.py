"""Each suite declares the metric names it can produce (eval files' thresholds are checked against them before any
model call). Run every installed suite on its demo sample under the options its own declarations name
(tests/suites/suite_options.py: no entry per suite) and compare what it produced with what it declares; then the
built-in suites' richer paths (models that answer in their formats)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import knowgap
from knowgap.engine.suite import Suite, in_groups
from knowgap.suites import BUILTIN, available
from tests.helpers import scripted
from tests.suites.suite_options import run_settings


def _declared(result: knowgap.RunResult) -> tuple[set[str], list[str]]:
    """The metric names a run produced, and those its suite does not declare, or declares it cannot produce with
    the run's options (``metric_needs``), or in a group it does not declare (``metric_groups``): an eval file's
    threshold on any of those would be refused before its run."""
    cls = available()[result.manifest.config.suite]
    suite = cls(cls.Options.model_validate(result.manifest.config.options))
    groups = suite.metric_groups()
    names = {m.name for m in result.metrics}
    wrong = {n for n in names if not cls.declares_metric(n) or suite.metric_needs(n)}
    wrong |= {f"{m.name}[{m.group}]" for m in result.metrics if not in_groups(m.group, groups)}
    return names, sorted(wrong)


def test_every_suite_declares_its_metrics() -> None:
    suites = available()
    assert set(BUILTIN) <= set(suites)
    for name, cls in suites.items():
        assert cls.metric_names, f"{name} declares no metric names"
        assert cls.declares_metric("errors"), name  # suite-wide: every suite counts errored trials


RUNS = [(name, options) for name in sorted(available()) for options in run_settings(name)]
"""Each installed suite under each of its own settings (its demo options, alone and with what its specs' judge
choices and its true/false options switch): 36 runs of the built-in suites."""


@pytest.mark.slow  # 36 runs (abstain's shipped facts' vectors come with the package: its questions are embedded)
@pytest.mark.parametrize(("suite", "options"), RUNS, ids=[f"{n}-{json.dumps(o, sort_keys=True)}" for n, o in RUNS])
def test_what_a_suite_produces_under_its_own_settings_is_declared(suite: str, options: dict[str, object],
                                                                  tmp_path: Path, runs_root: Path) -> None:
    result = knowgap.run(suite, models={"target": scripted(tmp_path, "I don't know.")}, options=options,
                         runs_root=runs_root)
    names, undeclared = _declared(result)
    assert names and not undeclared, f"{suite} under {options}: {undeclared}"


def test_starter_and_abstain(tmp_path: Path, runs_root: Path) -> None:
    from tests.suites.abstain.conftest import FACTS

    names, undeclared = _declared(knowgap.run("starter", models={"target": scripted(tmp_path, "I don't know.")},
                                              options={"sample": 4}, runs_root=runs_root))
    assert not undeclared and {"accuracy", "errors"} <= names
    kb = tmp_path / "kb.jsonl"
    kb.write_text("".join(json.dumps({"identifier": i, "question": q, "answer": a}) + "\n" for i, q, a in FACTS),
                  encoding="utf-8")
    reply = scripted(tmp_path, json.dumps({"response": "The answer is 27 months.", "citation": "1"}))
    names, undeclared = _declared(knowgap.run("abstain", models={"target": reply},
                                              options={"kb": str(kb), "sample": 3, "retrieval": ["direct"]},
                                              runs_root=runs_root))
    assert not undeclared and {"abstention_rate", "factuality_answered"} <= names


def test_clarify_single_and_multi_turn(tmp_path: Path, runs_root: Path) -> None:
    from tests.suites.clarify.conftest import write_three_cases
    from tests.suites.clarify.test_suite_engine import run

    data = write_three_cases(tmp_path)
    no_options: dict[str, object] = {}
    for options in (no_options, {"turns": 2}):
        names, undeclared = _declared(run(data, runs_root, **options))
        assert not undeclared and "clarification_rate" in names


def test_partial_views_pretest_and_budget(runs_root: Path) -> None:
    from tests.suites.partial.test_suite_engine import run

    names, undeclared = _declared(run(runs_root, "perfect", families=["customer_support"], no_rubric=True))
    assert not undeclared and {"accuracy_drop_points", "well_calibrated", "full_view_too_weak", "evidence_recall",
                               "leak_rate"} <= names
    names, undeclared = _declared(run(runs_root, "perfect", families=["customer_support"], budget=5,
                                      no_rubric=True, sample=4))
    assert not undeclared and {"query_tokens", "query_efficiency", "denied_requests"} <= names


def test_extract_every_kind(runs_root: Path) -> None:
    from tests.suites.extract.test_extract_suite import RuleModel

    fake = RuleModel()
    result = knowgap.run("extract", models={"target": fake.spec}, providers={fake.spec: fake}, runs_root=runs_root,
                         options={"kinds": ["normal", "adversarial", "calibration"], "runs": 2, "sample": 24})
    names, undeclared = _declared(result)
    assert not undeclared and {"flip_above_noise", "seconds", "judge_calibration_accuracy", "judge_score_gap",
                               "faithfulness_offline"} <= names
    assert any(n.startswith("flip_rate:") for n in names) and any(n.startswith("judge_outcome:") for n in names)


def test_an_undeclared_plugin_suite_is_not_checked() -> None:
    class Plugin(Suite):  # a third-party suite written before metric_names existed
        name = "plugin"

    assert Plugin.declares_metric("anything") is None


@pytest.mark.parametrize("name", ["flip_rate:position=end", "tokens:target", "sentiment_confusion:positive->neutral"])
def test_breakdowns_are_declared_by_their_base_name(name: str) -> None:
    assert available()["extract"].declares_metric(name) is True
    assert available()["starter"].declares_metric(name) is False


def test_what_option_dependent_runs_produce_is_declared_available(tmp_path: Path, runs_root: Path) -> None:
    """Runs whose options switch metrics on (--inject, a --scenario) or off (extract without the offline checker
    and coverage): nothing they produce is declared as needing an option they have."""
    from tests.suites.extract.test_extract_suite import RuleModel
    from tests.suites.partial.test_injection import run

    reply = scripted(tmp_path, "I don't know.")
    starter = knowgap.run("starter", models={"target": reply}, options={"sample": 4, "inject": True}, repeats=2,
                          runs_root=runs_root)
    names, wrong = _declared(starter)
    assert not wrong and {"attack_success_rate", "clean_task_score"} <= names
    scenario = knowgap.run("abstain", models={"target": reply}, options={"scenario": "unknowable", "sample": 6},
                           runs_root=runs_root)
    names, wrong = _declared(scenario)
    assert not wrong and {"abstention_recall", "errors"} <= names
    names, wrong = _declared(run(runs_root, True, inject=True, attack_families=["exfiltration"]))
    assert not wrong and {"attack_success_rate", "injected_leak_rate"} <= names
    fake = RuleModel()
    names, wrong = _declared(knowgap.run("extract", models={"target": fake.spec}, providers={fake.spec: fake},
                                         runs_root=runs_root, options={"kinds": ["normal"], "runs": 1, "sample": 4,
                                                                       "offline_checker": False, "coverage": False}))
    assert not wrong and "sentiment_accuracy" in names and not names & {"summary_coverage", "faithfulness_offline"}
