"""A team's web app in real headless Chromium: `knowgap serve` in token mode (KNOWGAP_SERVE_TOKEN) answers 401
until the browser opens the printed link; then the cookie carries every page, API read and label write (the POST
passing the Origin check with Chromium's own Origin header), and the token is gone from the address bar."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from knowgap.labels.store import LabelStore
from tests.labels.starter_runs import starter_run
from tests.web.test_web_browser import browser, press, pytestmark, text_of, wait  # noqa: F401 - fixtures and marks

TOKEN = "team-token-for-the-browser-test-42"


def test_a_browser_opens_a_token_server_by_its_link_and_labels(tmp_path: Path, runs_root: Path,
                                                               browser: Any) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    run = starter_run(tmp_path, runs_root)
    proc = subprocess.Popen([sys.executable, "-m", "knowgap", "serve", "--runs-dir", str(runs_root), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "KNOWGAP_SERVE_TOKEN": TOKEN})
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split()[4]
        browser.get(url)
        assert "needs its token" in browser.find_element(By.TAG_NAME, "body").text
        browser.get(f"{url}?token={TOKEN}")
        wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "a.runlink"))
        assert TOKEN not in browser.current_url
        assert browser.execute_script("return document.cookie") == ""  # HttpOnly: no script can read it
        name = browser.find_element(By.ID, "annotator")
        name.clear()
        name.send_keys("carol")
        browser.find_element(By.CSS_SELECTOR, "a.runlink").click()
        wait(browser, lambda d: text_of(d, "#detail h2"))
        first = text_of(browser, "#detail h2")
        press(browser, "y")
        wait(browser, lambda d: [e.trial_id for e in LabelStore.open(run.run_id, runs_root).events()] == [first])
        [event] = LabelStore.open(run.run_id, runs_root).events()
        assert (event.annotator, event.source) == ("carol", "web")
    finally:
        proc.terminate()
        proc.wait(timeout=15)
