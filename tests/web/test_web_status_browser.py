"""The web app shows a run's honest status in real headless Chromium: the runs list says which runs errored
or died, and a run page opens with a red banner naming the error counts and causes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import knowgap
from knowgap.engine.store import MANIFEST
from tests.engine.test_run_status import _half_answered
from tests.helpers import scripted
from tests.web.test_web_browser import browser, pytestmark, text_of, wait  # noqa: F401 - fixtures and marks


@pytest.fixture
def served_runs(tmp_path: Path, runs_root: Path) -> Iterator[tuple[str, str, str]]:
    """A run where half the trials errored, and one that died mid-way (its manifest still says running)."""
    errored = knowgap.run("starter", models={"target": _half_answered(tmp_path, runs_root)},
                          runs_root=runs_root)
    dead = knowgap.run("starter", models={"target": scripted(tmp_path, "x")}, runs_root=runs_root)
    manifest = dead.path / MANIFEST
    manifest.write_text(manifest.read_text(encoding="utf-8").replace('"status": "finished"', '"status": "running"'),
                        encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "knowgap", "serve", "--runs-dir", str(runs_root), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "http://127.0.0.1:" in line, line
        yield line.split()[4], errored.run_id, dead.run_id
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_runs_list_and_run_page_show_the_status(served_runs: tuple[str, str, str], browser: Any) -> None:  # noqa: F811
    url, errored, dead = served_runs
    browser.get(url)
    wait(browser, lambda d: text_of(d, f'tr[data-run="{dead}"] td.status'))
    assert text_of(browser, f'tr[data-run="{dead}"] td.status') == f"interrupted — resume with knowgap resume {dead}"
    assert text_of(browser, f'tr[data-run="{errored}"] td.status') == "finished_with_errors (16 of 32 trials errored)"
    browser.get(f"{url}#/run/{errored}")
    wait(browser, lambda d: text_of(d, "#run-status"))
    assert text_of(browser, "#run-status").startswith("finished_with_errors (16 of 32")
    banner = text_of(browser, ".banner")
    assert "16 of 32 trials errored" in banner and "16 trials: " in banner and "no scripted response" in banner
