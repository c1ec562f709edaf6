"""The HTML report opened in real headless Chromium (Debian's chromium + chromium-driver, driven by
selenium): the charts render with real sizes, and hostile model output shows as text and runs nothing."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import knowgap
from tests.report.conftest import SCRIPT

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if CHROMIUM is None or DRIVER is None:
        pytest.skip("Debian's chromium and chromium-driver are not installed (apt-get install -y chromium "
                    "chromium-driver; .ci/run installs them)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[dev]')")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,2000", "--lang=en-US"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def test_report_renders_charts_and_inert_output(browser: object, hostile_run: knowgap.RunResult,
                                                tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.remote.webdriver import WebDriver

    assert isinstance(browser, WebDriver)
    report = hostile_run.path / "report.html"
    browser.get(report.as_uri())
    assert browser.title == f"knowgap run {hostile_run.run_id}"  # no injected script changed it
    charts = browser.find_elements(By.CSS_SELECTOR, "svg.chart")
    assert len(charts) == 6
    for chart in charts:
        assert chart.size["width"] > 250 and chart.size["height"] > 60
    bars = browser.find_elements(By.CSS_SELECTOR, "svg.bar-chart rect.bar")
    assert len(bars) == 6 + 4  # 3 metrics x 2 groups (errors, 0 everywhere, is folded), the headline chart's 2 x 2
    widths = sorted(round(b.rect["width"]) for b in bars)
    # over-abstention is 100% in both groups: full 360 px bars; the other bars are (near) empty
    assert widths[-2:] == [360, 360] and widths[0] <= 1
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.bar-chart g.err")) == 6 + 4
    # the hostile responses are text inside <pre>, never elements
    assert browser.find_elements(By.TAG_NAME, "script") == []
    assert browser.find_elements(By.TAG_NAME, "img") == []
    assert browser.find_elements(By.CSS_SELECTOR, "pre b") == []
    responses = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "pre.response")]
    assert len(responses) == 20
    assert SCRIPT.replace("I don't know. ", "") in "\n".join(responses)
    assert any('<img src=x onerror="document.title=\'pwned\'">' in r for r in responses)
    assert browser.execute_script("return document.title") == f"knowgap run {hostile_run.run_id}"
    shot = tmp_path / "report.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
