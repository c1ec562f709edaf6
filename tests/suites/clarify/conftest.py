"""Shared fixture of the clarify suite's engine tests: three shipped cases (two zh, one en) in a file of their own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowgap.suites.clarify.dataset import CASES_FILE

IDS = ("zh-labour-001", "en-labour-001", "zh-labour-101")


def write_three_cases(folder: Path) -> Path:
    """The shipped rows of :data:`IDS`, as ``folder/three.jsonl``."""
    rows = [line for line in CASES_FILE.read_text(encoding="utf-8").splitlines() if json.loads(line)["id"] in IDS]
    path = folder / "three.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_three_cases(tmp_path)
