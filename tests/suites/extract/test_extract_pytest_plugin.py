"""The pytest plugin: markers and model options reach a team's own tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO

SRC = REPO / "src"

TEST_FILE = '''
import pytest

@pytest.mark.unit
def test_options(summarizer_model, judge_model, extract_cases, summarizer):
    assert summarizer_model == "scripted:a.jsonl"
    assert judge_model == "scripted:a.jsonl"
    assert len(extract_cases) >= 60
    assert summarizer.request("x").json_schema is not None

@pytest.mark.adversarial
def test_selected_out():
    raise AssertionError("deselected by -m unit")
'''


def test_plugin_markers_and_options(tmp_path: Path) -> None:
    (tmp_path / "test_team.py").write_text(TEST_FILE, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "knowgap.suites.extract.pytest_plugin",
                           "--strict-markers", "-m", "unit", "--summarizer-model", "scripted:a.jsonl",
                           "-p", "no:cacheprovider", str(tmp_path / "test_team.py")],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed, 1 deselected" in proc.stdout
