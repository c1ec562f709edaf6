"""knowgap eval: one YAML file for a whole evaluation, its JSON Schema, clear validation errors."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.evaluation.eval_file import eval_schema, load_eval, run_eval
from tests.helpers import REPO, knowgap_cli, write_jsonl

EXAMPLE = REPO / "examples" / "knowgap-eval.yaml"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """\
name: smoke
models: {target: "scripted:answers.jsonl"}
suites:
  - suite: starter
    options: {sample: 4}
  - suite: starter
    name: mine
    dataset: cases.jsonl
    options: {prompts: [grounded]}
    repeats: 2
thresholds:
  - abstention_unanswerable >= 0.6
  - "mine: accuracy[prompt=grounded] >= 0.5"
report: {junit: "{name}.xml"}
"""


@pytest.fixture
def eval_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    write_jsonl(folder / "answers.jsonl", [{"response": "I don't know."}])
    write_jsonl(folder / "cases.jsonl", [
        {"id": "a", "lang": "en", "context": "The sky is blue.", "question": "What colour is the sky?",
         "answerable": True, "answers": ["blue"]},
        {"id": "b", "lang": "en", "context": "The sky is blue.", "question": "How old is the sky?",
         "answerable": False}])
    write(folder / "eval.yaml", GOOD)
    return folder


def test_run_eval(eval_dir: Path, tmp_path: Path) -> None:
    result = run_eval(eval_dir / "eval.yaml", runs_root=tmp_path / "runs", progress=False)
    [(label_a, a), (label_b, b)] = result.runs
    assert (label_a, label_b) == ("starter", "mine")
    assert a.manifest.trials_total == 8  # 4 sampled cases x 2 prompts
    assert b.manifest.trials_total == 4  # 2 cases x 1 prompt x 2 repeats
    assert b.manifest.config.options["data"] == str(eval_dir / "cases.jsonl")
    assert b.manifest.config.models["target"] == f"scripted:{eval_dir / 'answers.jsonl'}"  # relative to the file
    assert result.gate is not None and not result.passed
    assert [(c.suite, c.metric, c.group, c.passed) for c in result.gate.checks] == [
        ("starter", "abstention_unanswerable", "prompt=grounded", True),
        ("starter", "abstention_unanswerable", "prompt=plain", True),
        ("mine", "abstention_unanswerable", "prompt=grounded", True),
        ("mine", "accuracy", "prompt=grounded", False)]
    html = result.outputs["html"].read_text(encoding="utf-8")
    assert result.outputs["html"] == tmp_path / "runs" / "smoke-report.html"
    assert html.count('<section class="run" id="run-') == 2 and "knowgap evaluation smoke" in html
    assert '<section class="run" id="gate"><h2>Gate: <span class="bad">FAILED (1 of 4 checks)</span></h2>' in html
    assert "### gate: FAILED ❌ (1 of 4 checks)" in result.outputs["markdown"].read_text(encoding="utf-8")
    assert ET.parse(result.outputs["junit"]).getroot().get("failures") == "1"


def test_eval_cli(eval_dir: Path, tmp_path: Path) -> None:
    proc = knowgap_cli("eval", str(eval_dir / "eval.yaml"), "--runs-dir", str(tmp_path / "runs"), "-q",
                       "--out-dir", str(tmp_path / "out"))
    assert proc.returncode == 1, proc.stderr
    assert "gate failed: 1 of 4 checks" in proc.stdout
    assert (tmp_path / "out" / "smoke-report.html").exists()
    check = knowgap_cli("eval", str(eval_dir / "eval.yaml"), "--check")
    assert check.returncode == 0 and "valid (2 suites, 2 thresholds)" in check.stdout


@pytest.mark.parametrize(("text", "line", "field", "message"), [
    ("suites: []\n", 1, "suites", "at least 1 item"),
    ("name: x\nsuites:\n  - suite: nope\n", 3, "suites[0].suite", "unknown suite 'nope' (available: "),
    ("suites:\n  - suite: starter\n    options:\n      sample: 0\n", 4, "suites[0].options.sample",
     "greater than or equal to 1"),
    ("suites:\n  - suite: starter\n    options: {prompts: [plain], colour: red}\n", 3,
     "suites[0].options.colour", "Extra inputs are not permitted"),
    ("suites:\n  - suite: starter\n    models: {judge: x}\n", 3, "suites[0].models.judge", "has no role 'judge'"),
    ("suites:\n  - suite: starter\n    dataset: missing.jsonl\n", 3, "suites[0].dataset", "dataset file not found"),
    ("suites:\n  - suite: starter\n  - suite: starter\n", 3, "suites[1].name", "two entries are named 'starter'"),
    ("suites:\n  - suite: starter\nthresholds:\n  - accuracy >= 0.5\n  - 'x: errors == 0'\n", 5,
     "thresholds[1].suite", "threshold names suite 'x'"),
    ("suites:\n  - suite: starter\nthresholds:\n  - accuracy >> 0.5\n", 4, "thresholds[0]",
     "cannot read threshold"),
    ("suites:\n  - suite: starter\nrepeat: 3\n", 3, "repeat", "Extra inputs are not permitted"),
    ("suites:\n  - suite: starter\n    options: {sample: 2\n", 4, None, "not valid YAML"),
])
def test_validation_errors(tmp_path: Path, text: str, line: int, field: str | None, message: str) -> None:
    file = write(tmp_path / "e.yaml", text)
    with pytest.raises(InputError) as info:
        load_eval(file)
    assert (info.value.file, info.value.line, info.value.field) == (str(file), line, field)
    assert message in str(info.value)


def test_schema_validates_the_example(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = eval_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    import yaml

    example = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    jsonschema.validate(example, schema)
    load_eval(EXAMPLE)  # and knowgap accepts it
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**example, "repeats": 0}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"suites": [{"suite": "starter", "extra": 1}]}, schema)
    proc = knowgap_cli("eval", "--schema")
    assert proc.returncode == 0 and json.loads(proc.stdout)["title"] == "knowgap evaluation"


@pytest.mark.parametrize(("text", "line", "field", "message"), [
    # a misspelt top-level role used to be dropped silently: the run got the default target
    ("models: {targt: 'scripted:a.jsonl'}\nsuites:\n  - suite: starter\n", 1, "models.targt",
     "no suite of this file has a role 'targt' (did you mean 'target'?"),
    ("models:\n  target: x\n  juge: y\nsuites:\n  - suite: abstain\n", 3, "models.juge",
     "role 'juge' (did you mean 'judge'?"),
    ("suites:\n  - suite: extract\n    models: {targer: x}\n", 3, "suites[0].models.targer",
     "suite 'extract' has no role 'targer' (did you mean 'target'?"),
    # a judge at top level is fine when one suite of the file has that role; starter alone has none
    ("models: {judge: x}\nsuites:\n  - suite: starter\n", 1, "models.judge",
     "no suite of this file has a role 'judge' (roles: target)"),
    # thresholds name metrics the suites can produce, checked before any model call
    ("suites:\n  - suite: starter\nthresholds:\n  - acuracy >= 0.5\n", 4, "thresholds[0].metric",
     "no suite of this file produces metric 'acuracy' (did you mean 'accuracy'?"),
    ("suites:\n  - suite: starter\n  - suite: abstain\nthresholds:\n  - 'abstain: accuracy >= 0.5'\n", 5,
     "thresholds[0].metric", "suite 'abstain' produces no metric 'accuracy'"),
])
def test_roles_and_threshold_metrics_are_checked(tmp_path: Path, text: str, line: int, field: str,
                                                 message: str) -> None:
    file = write(tmp_path / "e.yaml", text)
    with pytest.raises(InputError) as info:
        load_eval(file)
    assert (info.value.file, info.value.line, info.value.field) == (str(file), line, field)
    assert message in str(info.value)


def test_known_roles_and_metrics_pass(tmp_path: Path) -> None:
    file = write(tmp_path / "e.yaml", (
        "models: {target: a, judge: b}\n"          # judge: a role of abstain, not of starter
        "suites:\n  - suite: starter\n  - suite: abstain\n  - suite: extract\n"
        "thresholds:\n  - errors == 0\n"            # produced by every suite
        "  - accuracy >= 0.5\n"                     # starter only, unscoped
        "  - 'abstain: abstention_rate >= 0.5'\n"
        "  - {metric: 'flip_rate:position=end', op: '<=', value: 0.2, suite: extract}\n"))  # a breakdown
    config, _ = load_eval(file)
    assert len(config.thresholds) == 4


def test_check_refuses_a_misspelt_role_before_any_model_call(eval_dir: Path, tmp_path: Path) -> None:
    write(eval_dir / "eval.yaml", GOOD.replace("models: {target:", "models: {targt:"))
    check = knowgap_cli("eval", str(eval_dir / "eval.yaml"), "--check")
    assert check.returncode != 0 and "did you mean 'target'?" in check.stderr + check.stdout
    proc = knowgap_cli("eval", str(eval_dir / "eval.yaml"), "--runs-dir", str(tmp_path / "runs"), "-q")
    assert proc.returncode != 0 and "did you mean 'target'?" in proc.stderr + proc.stdout
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())  # nothing ran
    write(eval_dir / "eval.yaml", GOOD.replace("abstention_unanswerable >= 0.6", "abstention_unanswerble >= 0.6"))
    proc = knowgap_cli("eval", str(eval_dir / "eval.yaml"), "--runs-dir", str(tmp_path / "runs2"), "-q")
    assert proc.returncode != 0 and "did you mean 'abstention_unanswerable'?" in proc.stderr + proc.stdout
    assert not (tmp_path / "runs2").exists() or not any((tmp_path / "runs2").iterdir())


@pytest.mark.parametrize(("text", "line", "field", "message"), [
    ("suites:\n  - suite: starter\nthresholds: []\n", 3, "thresholds",
     "thresholds is empty: an empty gate checks nothing"),
    ("suites:\n  - suite: starter\nthresholds:\n  - errors == 0\n  - accuracy >=\n", 5, "thresholds[1]",
     "threshold 'accuracy >=' has no value: expected e.g. accuracy >= 0.6"),
])
def test_empty_gate_and_missing_value_in_eval_files(tmp_path: Path, text: str, line: int, field: str,
                                                    message: str) -> None:
    file = write(tmp_path / "e.yaml", text)
    with pytest.raises(InputError) as info:
        load_eval(file)
    assert (info.value.file, info.value.line, info.value.field) == (str(file), line, field)
    assert message in str(info.value)


def test_empty_thresholds_allowed_or_absent(tmp_path: Path) -> None:
    allowed, _ = load_eval(write(tmp_path / "a.yaml", "suites:\n  - suite: starter\nthresholds: []\n"
                                                      "allow_empty: true\n"))
    assert allowed.thresholds == [] and allowed.allow_empty
    absent, _ = load_eval(write(tmp_path / "b.yaml", "suites:\n  - suite: starter\n"))  # no gate at all
    assert absent.thresholds == []
