"""A SCREEN is visible in real headless Chromium: in report.html (badge with the reason as its tooltip and as a
line) and in the web app's metrics table (badge, reason, and the count in the closed box's summary)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import knowgap
from tests.report.test_judging import good_abstention, run, weak_answer_match  # noqa: F401 - fixtures
from tests.web.test_web_browser import CHROMIUM, DRIVER, browser, text_of, wait  # noqa: F401 - browser: a fixture

pytestmark = [
    pytest.mark.slow, pytest.mark.server,
    pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="needs Debian's chromium and chromium-driver: "
                                                         "apt-get install -y chromium chromium-driver"),
]
REASON = "judge balanced accuracy 0.60 < 0.80 on test/answer-match.jsonl (n=100)"
SCREEN_BADGES = "return [...document.querySelectorAll(arguments[0])].map(b => [b.textContent, b.title])"


def test_screens_are_marked_in_the_html_report_and_the_web_app(run: knowgap.RunResult,  # noqa: F811
                                                               runs_root: Path, browser: Any) -> None:  # noqa: F811
    browser.get((run.path / "report.html").as_uri())
    badges = browser.execute_script(SCREEN_BADGES, "table.metrics tr[data-judge=screen] .badge.screen")
    assert badges == [["SCREEN", REASON]] * 2  # accuracy, in both prompt groups
    assert text_of(browser, "table.metrics tr[data-judge=screen] .why") == REASON
    assert "BA 0.91 [" in text_of(browser, "table.metrics tr[data-judge=reportable] td.judge")
    assert "test/abstention.jsonl" in text_of(browser, "table.judges")

    proc = subprocess.Popen([sys.executable, "-m", "knowgap", "serve", "--runs-dir", str(runs_root), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split()[4]
        browser.get(f"{url}#/run/{run.run_id}")
        wait(browser, lambda d: text_of(d, "#metrics-box summary") != "")
        assert text_of(browser, "#metrics-box summary") == f"metrics ({len(run.metrics)}, 2 SCREEN)"
        browser.execute_script("document.querySelector('#metrics-box').open = true")
        badges = browser.execute_script(SCREEN_BADGES, "table.metrics tr[data-judge=screen] .badge.judge-screen")
        assert badges == [["SCREEN", REASON]] * 2
        assert text_of(browser, "table.metrics tr[data-judge=screen] .why") == REASON
    finally:
        proc.terminate()
        proc.wait(timeout=10)
