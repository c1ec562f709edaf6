"""knowgap gate: thresholds (short and long forms), clear errors, exit codes, JUnit XML."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import knowgap
from knowgap.errors import InputError
from knowgap.report import Threshold, evaluate_gate, junit_xml, load_run_data, load_thresholds
from knowgap.report.gate import parse_thresholds
from tests.helpers import knowgap_cli, scripted


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("text", "expected"), [
    ("abstention_rate >= 0.6", ("abstention_rate", None, ">=", 0.6, None)),
    ("leaks == 0", ("leaks", None, "==", 0.0, None)),
    ("leaks = 0", ("leaks", None, "==", 0.0, None)),
    ("accuracy[prompt=grounded]>0.5", ("accuracy", "prompt=grounded", ">", 0.5, None)),
    ("partial: flip_rate[attack=tail|pos=end] <= 0.05", ("flip_rate", "attack=tail|pos=end", "<=", 0.05, "partial")),
])
def test_short_form(text: str, expected: tuple[object, ...]) -> None:
    t = Threshold.parse(text)
    assert (t.metric, t.group, t.op, t.value, t.suite) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("accuracy > high", "'high' is not a number"),
    ("accuracy ~ 3", "expected 'METRIC OP VALUE'"),
])
def test_bad_short_form(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        parse_thresholds(["errors == 0", text])
    assert str(info.value).startswith("thresholds[1]")


def test_file_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="thresholds file not found"):
        load_thresholds(tmp_path / "missing.yaml")
    bad = write(tmp_path / "bad.yaml", "thresholds:\n  - a >= 1\n  - [unclosed\n")
    with pytest.raises(InputError) as info:
        load_thresholds(bad)
    assert info.value.line == 4 and "not valid YAML" in str(info.value)
    wrong = write(tmp_path / "wrong.yaml", "thresholds:\n  - {metric: a, op: '>=', value: 1, colour: red}\n")
    with pytest.raises(InputError) as info:
        load_thresholds(wrong)
    assert (info.value.line, info.value.field) == (2, "thresholds[0].colour")  # the line of the bad entry
    op = write(tmp_path / "op.yaml", "- {metric: a, op: '=>', value: 1}\n")  # a bare list is accepted too
    with pytest.raises(InputError) as info:
        load_thresholds(op)
    assert (info.value.line, info.value.field) == (1, "thresholds[0].op")


def test_gate_checks(perfect_run: knowgap.RunResult, tmp_path: Path) -> None:
    run = load_run_data(perfect_run.path)
    result = evaluate_gate([run], parse_thresholds([
        "abstention_unanswerable >= 0.6", "errors == 0", "accuracy[prompt=plain] >= 0.9",
        {"metric": "accuracy", "group": "prompt=grounded", "op": ">=", "value": 0.7, "use": "ci_low"}]))
    assert [(c.metric, c.group, c.passed) for c in result.checks] == [
        ("abstention_unanswerable", "prompt=grounded", True), ("abstention_unanswerable", "prompt=plain", True),
        ("errors", "prompt=grounded", True), ("errors", "prompt=plain", True), ("accuracy", "prompt=plain", True),
        ("accuracy", "prompt=grounded", False)]  # 8/8 has a Wilson lower bound of 0.676 < 0.7
    assert not result.passed
    [failure] = result.failures
    assert failure.actual == pytest.approx(0.6756, abs=1e-4)
    assert failure.message == "accuracy[prompt=grounded] ci_low=0.6756 violates >= 0.7"
    root = ET.fromstring(junit_xml(result))
    suite = root.find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("6", "1")
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert len(failed) == 1
    assert failed[0].get("name") == "accuracy[prompt=grounded] (ci_low) >= 0.7 :: prompt=grounded"
    assert failed[0].find("failure").get("message") == failure.message  # type: ignore[union-attr]


def test_unknown_metric_group_and_suite(perfect_run: knowgap.RunResult) -> None:
    run = load_run_data(perfect_run.path)
    with pytest.raises(InputError) as info:
        evaluate_gate([run], parse_thresholds(["errors == 0", "abstention_rate >= 0.6"]), source="gate.yaml")
    assert info.value.field == "thresholds[1].metric"
    assert str(info.value) == ("gate.yaml, field 'thresholds[1].metric': threshold 'abstention_rate >= 0.6': unknown "
                               "metric 'abstention_rate' (did you mean 'abstention_unanswerable'?) (metrics: "
                               "abstention_unanswerable, accuracy, errors, over_abstention)")
    with pytest.raises(InputError, match=r"has no group 'prompt=x' .*\(groups: prompt=grounded, prompt=plain\)"):
        evaluate_gate([run], parse_thresholds(["accuracy[prompt=x] >= 0"]))
    with pytest.raises(InputError, match=r"has no group 'prompt=grounde' \(did you mean 'prompt=grounded'\?\)"):
        evaluate_gate([run], parse_thresholds(["accuracy[prompt=grounde] >= 0"]))
    with pytest.raises(InputError, match=r"unknown metric 'attack_success_rate': run starter-\S+'s suite produces it "
                                         r"only with --inject \(or a case file whose cases carry injections"):
        evaluate_gate([run], parse_thresholds(["attack_success_rate <= 0.2"]))
    with pytest.raises(InputError, match="no run of suite 'abstain'"):
        evaluate_gate([run], parse_thresholds(["abstain: accuracy >= 0"]))


def test_metric_without_data_fails(tmp_path: Path, runs_root: Path) -> None:
    never = scripted(tmp_path, {"request_hash": "0" * 64, "response": "never"})
    result = knowgap.run("starter", models={"target": never}, runs_root=runs_root)
    gate = evaluate_gate([load_run_data(result.path)], parse_thresholds(["accuracy[prompt=plain] >= 0"]))
    assert not gate.passed
    assert gate.checks[0].message == "accuracy[prompt=plain] has no value (n=0): no data to gate on"


def test_cli_exit_codes(perfect_run: knowgap.RunResult, abstain_run: knowgap.RunResult, runs_root: Path,
                        tmp_path: Path) -> None:
    limits = write(tmp_path / "gate.yaml", "thresholds:\n  - accuracy >= 0.9\n  - errors == 0\n")
    junit = tmp_path / "out" / "gate.xml"
    ok = knowgap_cli("gate", perfect_run.run_id, "--thresholds", str(limits), "--runs-dir", str(runs_root),
                     "--junit", str(junit))
    assert ok.returncode == 0, ok.stderr
    assert "gate passed" in ok.stdout and ET.parse(junit).getroot().get("failures") == "0"
    bad = knowgap_cli("gate", abstain_run.run_id, "-t", str(limits), "--runs-dir", str(runs_root),
                      "--junit", str(junit), "--md", str(tmp_path / "gate.md"))
    assert bad.returncode == 1
    assert "FAIL starter" in bad.stdout and "accuracy[prompt=plain] value=0 violates >= 0.9" in bad.stdout
    assert ET.parse(junit).getroot().get("failures") == "2"
    assert "### gate: FAILED ❌ (2 of 4 checks)" in (tmp_path / "gate.md").read_text(encoding="utf-8")
    typo = write(tmp_path / "typo.yaml", "thresholds: [acuracy >= 0.9]\n")
    err = knowgap_cli("gate", abstain_run.run_id, "-t", str(typo), "--runs-dir", str(runs_root))
    assert err.returncode == 2 and "unknown metric 'acuracy'" in err.stderr and "Traceback" not in err.stderr


@pytest.mark.parametrize(("text", "message"), [
    ("accuracy >= ", "threshold 'accuracy >=' has no value: expected e.g. accuracy >= 0.6"),
    ("accuracy[prompt=plain] <", "threshold 'accuracy[prompt=plain] <' has no value: expected e.g. "
                                 "accuracy[prompt=plain] < 0.6"),
    ("starter: errors ==", "threshold 'starter: errors ==' has no value: expected e.g. starter: errors == 0.6"),
    ("accuracy", "threshold 'accuracy' has no comparison: expected e.g. accuracy >= 0.6"),
])
def test_missing_value_says_what_is_missing(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        parse_thresholds([text])
    file = write(tmp_path / "gate.yaml", f"thresholds:\n  - errors == 0\n  - \"{text}\"\n")
    with pytest.raises(InputError, match=re.escape(message)) as info:
        load_thresholds(file)
    assert (info.value.line, info.value.field) == (3, "thresholds[1]")


@pytest.mark.parametrize("text", ["thresholds: []\n", "[]\n", "thresholds: []\nallow_empty: false\n"])
def test_an_empty_gate_fails(perfect_run: knowgap.RunResult, runs_root: Path, tmp_path: Path, text: str) -> None:
    limits = write(tmp_path / "gate.yaml", text)
    junit = tmp_path / "gate.xml"
    proc = knowgap_cli("gate", perfect_run.run_id, "-t", str(limits), "--runs-dir", str(runs_root),
                       "--junit", str(junit))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "gate failed" in proc.stdout and "no thresholds" in proc.stdout and "allow_empty: true" in proc.stdout
    assert "Traceback" not in proc.stderr
    assert ET.parse(junit).getroot().get("failures") == "1"


def test_an_empty_gate_passes_only_when_allowed(perfect_run: knowgap.RunResult, runs_root: Path,
                                                tmp_path: Path) -> None:
    limits = write(tmp_path / "gate.yaml", "thresholds: []\nallow_empty: true\n")
    proc = knowgap_cli("gate", perfect_run.run_id, "-t", str(limits), "--runs-dir", str(runs_root))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "gate passed" in proc.stdout and "no thresholds (allow_empty: true)" in proc.stdout
    run = load_run_data(perfect_run.path)
    assert not evaluate_gate([run], []).passed
    assert evaluate_gate([run], [], allow_empty=True).passed
