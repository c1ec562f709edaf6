"""Thresholds that cannot exist are refused before any model call: a misspelt group
(``accuracy[prompt=grounde]``) and a metric the suite's options cannot produce (``attack_success_rate`` without
``--inject``), by ``knowgap eval --check``, at the start of ``knowgap eval`` (no suite runs, no model is called),
and by ``knowgap gate`` against the run's own groups and options. The system under test is a ``python:`` function
that appends a line to a file on each call, so a call is seen."""

from __future__ import annotations

from pathlib import Path

import pytest

import knowgap
from tests.helpers import knowgap_cli

TARGET = '''\
CALLS = {calls!r}

def answer(request):
    with open(CALLS, "a", encoding="utf-8") as fh:
        fh.write("called\\n")
    return "I don't know."
'''

EVAL = """\
name: nightly
models: {{target: "python:{target}:answer"}}
suites:
  - suite: starter
    options: {{sample: 2, prompts: [plain, grounded]}}
thresholds:
  - errors == 0
  - "{threshold}"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "target.py").write_text(TARGET.format(calls=str(folder / "calls.txt")), encoding="utf-8")
    return folder


def eval_file(project: Path, threshold: str) -> Path:
    file = project / "eval.yaml"
    file.write_text(EVAL.format(target=project / "target.py", threshold=threshold), encoding="utf-8")
    return file


@pytest.mark.parametrize(("threshold", "field", "says"), [
    ("accuracy[prompt=grounde] >= 0.5", "thresholds[1].group",
     "no suite in scope produces group 'prompt=grounde' (did you mean 'prompt=grounded'?) for metric 'accuracy' "
     "(groups: prompt=plain, prompt=grounded)"),
    ("attack_success_rate <= 0.2", "thresholds[1].metric",
     "no suite in scope produces metric 'attack_success_rate' with the options it is given: entry 'starter' needs "
     "--inject"),
])
def test_eval_refuses_before_any_model_call(project: Path, tmp_path: Path, threshold: str, field: str,
                                            says: str) -> None:
    file = eval_file(project, threshold)
    where = f"{file}, line 8, field '{field}': threshold '{threshold}': "
    check = knowgap_cli("eval", str(file), "--check")
    assert check.returncode == 2 and where + says in check.stderr, check.stderr + check.stdout
    runs = tmp_path / "runs"
    proc = knowgap_cli("eval", str(file), "--runs-dir", str(runs), "-q")
    assert proc.returncode == 2 and where + says in proc.stderr, proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr
    assert not (project / "calls.txt").exists()  # the function was never called
    assert not runs.exists() or not any(runs.iterdir())  # no run was started


def test_the_same_file_with_possible_thresholds_runs_and_calls_the_model(project: Path, tmp_path: Path) -> None:
    """The control: the function is called when the thresholds can exist (so its file staying absent above
    means no call), with --inject making attack_success_rate possible."""
    file = eval_file(project, "accuracy[prompt=grounded] >= 0.5")
    proc = knowgap_cli("eval", str(file), "--runs-dir", str(tmp_path / "runs"), "-q")
    assert proc.returncode == 1, proc.stderr  # ran; "I don't know." fails the accuracy threshold
    assert (project / "calls.txt").read_text(encoding="utf-8").count("called") == 4  # 2 cases x 2 prompts
    text = file.read_text(encoding="utf-8").replace("accuracy[prompt=grounded] >= 0.5", "attack_success_rate <= 0.2")
    file.write_text(text.replace("sample: 2,", "sample: 2, inject: true,"), encoding="utf-8")
    check = knowgap_cli("eval", str(file), "--check")
    assert check.returncode == 0 and "valid (1 suites, 2 thresholds)" in check.stdout, check.stderr


def test_eval_refuses_a_suite_that_refuses_its_options_before_any_run(project: Path, tmp_path: Path) -> None:
    """An option only the suite checks (an unknown prompt) is refused with the entry's line when a threshold needs
    the suite's groups, not after earlier entries ran."""
    file = eval_file(project, "accuracy[prompt=grounded] >= 0.5")
    file.write_text(file.read_text(encoding="utf-8").replace("[plain, grounded]", "[plain, groundd]"),
                    encoding="utf-8")
    check = knowgap_cli("eval", str(file), "--check")
    assert check.returncode == 2, check.stdout
    assert f"{file}, line 5, field 'suites[0].options': starter: unknown prompt ['groundd']" in check.stderr
    assert not (project / "calls.txt").exists()


def test_gate_checks_groups_and_options_against_the_run(project: Path, runs_root: Path, tmp_path: Path) -> None:
    run = knowgap.run("starter", models={"target": f"python:{project / 'target.py'}:answer"},
                      options={"sample": 2}, runs_root=runs_root, progress=False)
    for threshold, says in (
            ("accuracy[prompt=grounde] >= 0.5", "threshold 'accuracy[prompt=grounde] >= 0.5': metric 'accuracy' has "
                                                "no group 'prompt=grounde' (did you mean 'prompt=grounded'?)"),
            ("attack_success_rate <= 0.2", f"unknown metric 'attack_success_rate': run {run.run_id}'s suite produces "
                                           "it only with --inject")):
        limits = tmp_path / "gate.yaml"
        limits.write_text(f'thresholds:\n  - "{threshold}"\n', encoding="utf-8")
        proc = knowgap_cli("gate", run.run_id, "-t", str(limits), "--runs-dir", str(runs_root))
        assert proc.returncode == 2 and says in proc.stderr, proc.stderr + proc.stdout
