"""Runs of the starter suite made with scripted models, whose metrics are known by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

import knowgap
from tests.engine.test_scripted_engine import perfect_file
from tests.helpers import write_jsonl

# In trial order (plain then grounded; cases in file order) even positions are the answerable cases, so an
# ordered file of two responses gives every answerable case the first and every unanswerable case the second.
SCRIPT = "I don't know. <script>document.title='pwned'</script></pre><b>bold</b>"
IMG = "42 <img src=x onerror=\"document.title='pwned'\"> key sk-ant-api03-abcdefghijklmnop"


@pytest.fixture
def hostile_run(tmp_path: Path, runs_root: Path) -> knowgap.RunResult:
    """Every trial fails: answerable cases get an abstention, unanswerable ones an answer; both hold HTML."""
    file = write_jsonl(tmp_path / "hostile.jsonl", [{"response": SCRIPT}, {"response": IMG}])
    return knowgap.run("starter", models={"target": f"scripted:{file}"}, runs_root=runs_root)


@pytest.fixture
def perfect_run(tmp_path: Path, runs_root: Path) -> knowgap.RunResult:
    file = perfect_file(tmp_path, runs_root)
    return knowgap.run("starter", models={"target": f"scripted:{file}"}, runs_root=runs_root)


@pytest.fixture
def abstain_run(tmp_path: Path, runs_root: Path) -> knowgap.RunResult:
    """Says "I don't know." to everything: abstention 100%, accuracy 0%, over-abstention 100%."""
    file = write_jsonl(tmp_path / "abstain.jsonl", [{"response": "I don't know."}])
    return knowgap.run("starter", models={"target": f"scripted:{file}"}, runs_root=runs_root)
