"""The pytest plugin, in a team's own test suite (a pytest subprocess on a generated test file)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import write_jsonl

TEAM_TESTS = '''
import pytest

ANSWERS = {answers!r}

@pytest.mark.knowgap("starter", model="scripted:" + ANSWERS, thresholds=["abstention_unanswerable >= 0.6"])
def test_abstains(knowgap_result):
    assert knowgap_result.manifest.trials_total == 32

@pytest.mark.knowgap("starter", model="scripted:" + ANSWERS, options={{"prompts": ["grounded"]}},
                     thresholds=["accuracy >= 0.5", "errors == 0"])
def test_accuracy(knowgap_result):
    pass

def test_direct(knowgap_run):
    result = knowgap_run("starter", model="scripted:" + ANSWERS, options={{"sample": 2}})
    assert result.manifest.trials_total == 4
    knowgap_run.check(result, ["over_abstention <= 1"])

def test_marker_missing(knowgap_result):
    pass
'''


def test_plugin_in_a_team_suite(tmp_path: Path) -> None:
    answers = write_jsonl(tmp_path / "answers.jsonl", [{"response": "I don't know."}])
    (tmp_path / "test_team.py").write_text(TEAM_TESTS.format(answers=str(answers)), encoding="utf-8")
    report = tmp_path / "session.html"
    command = [sys.executable, "-m", "pytest", "-p", "knowgap.pytest_plugin", "-q", "-p", "no:cacheprovider",
               "--knowgap-runs-dir", str(tmp_path / "runs"), "--knowgap-report", str(report), "test_team.py"]
    proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "KNOWGAP_HOME": str(tmp_path / "home")})
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "1 failed, 2 passed, 1 error" in out  # a missed threshold fails the test; a misused fixture errors
    assert "FAILED test_team.py::test_accuracy" in out
    assert "knowgap thresholds failed for run starter-" in out
    assert "accuracy >= 0.5: accuracy[prompt=grounded] value=0 violates >= 0.5" in out
    assert "knowgap_result needs @pytest.mark.knowgap(SUITE, ...) on the test" in out
    assert len(list((tmp_path / "runs").iterdir())) == 3
    assert f"knowgap report (3 runs): {report}" in out.replace("\n", "")
    assert report.read_text(encoding="utf-8").count('<section class="run"') == 3
