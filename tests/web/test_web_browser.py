"""The web app in real headless Chromium (Debian's chromium + chromium-driver, driven by selenium): open a
run, label three trials with the keyboard, watch the agreement update; labels from the terminal and from the
browser land in one store; a response holding <script> is shown as inert text."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from knowgap.labels.store import LabelStore
from tests.helpers import REPO
from tests.labels.starter_runs import SCRIPT, cli, errored_run, starter_run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the dev extras")
pytestmark = [
    pytest.mark.slow, pytest.mark.server,
    pytest.mark.skipif(not (CHROMIUM and DRIVER),
                       reason="needs Debian's chromium and chromium-driver: "
                              "apt-get install -y chromium chromium-driver"),
]


@pytest.fixture
def served(tmp_path: Path, runs_root: Path) -> Iterator[tuple[str, str, Path]]:
    """A starter run, sampled and half-labelled in the terminal by bob, served by the real CLI."""
    run = starter_run(tmp_path, runs_root)
    sampled = cli("label", "sample", run.run_id, "--judge-field", "abstained", "--n", "8", "--seed", "0",
                  "--runs-dir", str(runs_root))
    assert sampled.returncode == 0, sampled.stderr
    terminal = cli("label", run.run_id, "--annotator", "bob", "--runs-dir", str(runs_root), stdin="y\nn\ny\nn\n")
    assert terminal.returncode == 0, terminal.stderr
    with serve(runs_root) as url:
        yield url, run.run_id, runs_root


@contextmanager
def serve(runs_root: Path) -> Iterator[str]:
    """The real `knowgap serve` on a free port: its URL, stopped on exit."""
    proc = subprocess.Popen([sys.executable, "-m", "knowgap", "serve", "--runs-dir", str(runs_root), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "http://127.0.0.1:" in line, (line, proc.stderr.read() if proc.stderr and proc.poll() is not None
                                              else "")
        yield line.split()[4]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def browser() -> Iterator[Any]:
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def wait(driver: Any, condition: Any, timeout: float = 15) -> Any:
    """Poll ``condition`` until it holds; an element the page replaced between finding and reading it (a stale
    reference, seen under load) is polled again rather than failing the test."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, ignored_exceptions=(StaleElementReferenceException,)).until(condition)


def text_of(driver: Any, css: str) -> str:
    """The element's text content ('' when absent), read in one script call (no stale element references)."""
    return str(driver.execute_script("const e = document.querySelector(arguments[0]); return e ? e.textContent : ''",
                                     css))


def press(driver: Any, key: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(key).perform()


def pair_n(driver: Any, kind: str, a: str, b: str) -> str | None:
    return driver.execute_script(
        "const r = [...document.querySelectorAll('#pairs tr')].find(r => r.dataset.kind === arguments[0]"
        " && r.dataset.a === arguments[1] && r.dataset.b === arguments[2]); return r ? r.dataset.n : null;",
        kind, a, b)


def test_label_three_with_keyboard_and_agreement_updates(served: tuple[str, str, Path], browser: Any,
                                                         tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    url, run_id, runs_root = served
    browser.get(url)
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "a.runlink"))
    name = browser.find_element(By.ID, "annotator")
    name.clear()
    name.send_keys("alice")
    browser.find_element(By.CSS_SELECTOR, "a.runlink").click()
    wait(browser, lambda d: text_of(d, "#agree-n") == "4")  # bob's four terminal labels
    wait(browser, lambda d: d.execute_script("return document.querySelectorAll('#labelbar button').length") == 2)
    assert pair_n(browser, "judge-person", "run:abstained", "bob") == "4"
    assert pair_n(browser, "judge-person", "run:abstained", "alice") is None
    # the sample is shown in labelling order; bob labelled its first four, alice starts at the top
    order = LabelStore.open(run_id, runs_root).read_sample("abstained").trial_ids
    assert browser.execute_script(
        "return [...document.querySelectorAll('#trials .row')].map(r => r.dataset.trial)") == order
    for i, key in enumerate(["y", "n", "y"], start=1):
        press(browser, key)
        wait(browser, lambda d, i=i: pair_n(d, "judge-person", "run:abstained", "alice") == str(i))
    assert pair_n(browser, "person-person", "alice", "bob") == "3"
    assert "Fleiss" in text_of(browser, "#agreement") and "Krippendorff" in text_of(browser, "#agreement")
    shot = tmp_path / "run.png"
    browser.save_screenshot(str(shot))
    if os.environ.get("KNOWGAP_SCREENSHOTS"):
        shutil.copy(shot, Path(os.environ["KNOWGAP_SCREENSHOTS"]) / "web-run.png")
    # the browser's labels and the terminal's are in the same store, in the order given
    store = LabelStore.open(run_id, runs_root)
    web = [e for e in store.events() if e.source == "web"]
    assert [(e.trial_id, e.annotator, e.value) for e in web] == [
        (order[0], "alice", True), (order[1], "alice", False), (order[2], "alice", True)]
    assert {e.source for e in store.events()} == {"terminal", "web"}
    assert web[0].context.response and web[0].context.judge_verdicts["abstained"] in (True, False)
    # an edit in the browser keeps the history
    browser.execute_script("document.querySelector('#trials .row').click()")
    wait(browser, lambda d: text_of(d, "#detail h2") == order[0])
    press(browser, "n")
    wait(browser, lambda d: len([e for e in LabelStore.open(run_id, runs_root).events() if e.source == "web"]) == 4)
    history = LabelStore.open(run_id, runs_root).history(order[0], "abstained")
    alice = [e for e in history if e.annotator == "alice"]
    assert [(e.value, e.revision) for e in alice] == [(True, 1), (False, 2)]
    assert alice[1].supersedes == alice[0].event_id


def test_script_in_a_response_is_inert_text(served: tuple[str, str, Path], browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    url, run_id, runs_root = served
    records = LabelStore.open(run_id, runs_root).records()
    target = next(t for t, r in sorted(records.items()) if SCRIPT in str(r.output.get("response")))
    browser.get(f"{url}#/run/{run_id}")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#trials .row"))
    browser.find_element(By.ID, "f-sample").send_keys("all trials")
    wait(browser, lambda d: d.execute_script(
        "const r = [...document.querySelectorAll('#trials .row')].find(r => r.dataset.trial === arguments[0]);"
        " if (r) r.click(); return !!r;", target))
    wait(browser, lambda d: text_of(d, "#detail h2") == target)
    shown = browser.execute_script("return document.getElementById('response').textContent")
    assert SCRIPT in shown and "The context does not say." in shown  # the markup is visible as text
    assert browser.execute_script("return window.__pwned === undefined")
    assert browser.title == "knowgap"
    assert browser.find_elements(By.CSS_SELECTOR, "#detail script, #detail img") == []
    # the judges' verdicts and scores show only once the trial is labelled; then blind mode hides them again,
    # never the response
    assert browser.find_elements(By.ID, "scores") == [] and browser.find_element(By.ID, "verdicts-hidden")
    name = browser.find_element(By.ID, "annotator")
    name.send_keys("carol")
    browser.find_element(By.TAG_NAME, "body").click()
    press(browser, "y")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#trials .row.sel")
         and d.find_element(By.CSS_SELECTOR, "#trials .row.sel").get_attribute("data-trial") != target)
    browser.execute_script(
        "[...document.querySelectorAll('#trials .row')].find(r => r.dataset.trial === arguments[0]).click()", target)
    wait(browser, lambda d: text_of(d, "#detail h2") == target and d.find_elements(By.ID, "scores"))
    assert browser.find_element(By.ID, "scores").is_displayed()
    browser.find_element(By.ID, "f-blind").click()
    assert not browser.find_element(By.ID, "scores").is_displayed()
    assert browser.find_element(By.ID, "response").is_displayed()
    browser.find_element(By.ID, "f-blind").click()
    shot = tmp_path / "xss.png"
    browser.save_screenshot(str(shot))
    if os.environ.get("KNOWGAP_SCREENSHOTS"):
        shutil.copy(shot, Path(os.environ["KNOWGAP_SCREENSHOTS"]) / "web-script.png")


def test_compare_two_runs(served: tuple[str, str, Path], browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    url, run_id, runs_root = served
    other = starter_run(tmp_path, runs_root, ["I don't know."])
    browser.get(f"{url}#/compare/{run_id}/{other.run_id}")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#cmp-metrics tr"))
    metrics = text_of(browser, "#cmp-metrics")
    assert "abstention_unanswerable" in metrics and other.run_id in metrics
    assert text_of(browser, "#pairs-box .hint") == "32 trials"
    browser.find_element(By.ID, "c-diff").click()
    differing = int(text_of(browser, "#pairs-box .hint").split()[0])
    assert 0 < differing < 32  # the first run also answered "I don't know." on some trials
    if os.environ.get("KNOWGAP_SCREENSHOTS"):
        browser.save_screenshot(str(Path(os.environ["KNOWGAP_SCREENSHOTS"]) / "web-compare.png"))


def test_a_run_whose_trials_all_errored_shows_an_empty_state(served: tuple[str, str, Path], browser: Any) -> None:
    from selenium.webdriver.common.by import By

    url, _, runs_root = served
    run = errored_run(runs_root)
    browser.get(f"{url}#/run/{run.run_id}")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#no-field"))
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#trials .row")) == 6)
    page = text_of(browser, "#view")
    assert "undefined" not in page and "null" not in page
    assert "every trial of this run errored (6 of 6)" in text_of(browser, "#no-field")
    browser.execute_script("document.querySelector('#trials .row').click()")
    wait(browser, lambda d: "connection refused" in text_of(d, "#detail"))
    assert "undefined" not in text_of(browser, "#view") and "null" not in text_of(browser, "#view")
    assert "nothing to label" in text_of(browser, "#labelbar")


def test_a_stored_label_holding_markup_is_shown_as_text(served: tuple[str, str, Path], browser: Any) -> None:
    """A label written before labels were checked (or by hand) still reaches the page only as text."""
    from selenium.webdriver.common.by import By

    from knowgap.labels.records import LabelEvent
    from knowgap.labels.store import context_of

    url, run_id, runs_root = served
    store = LabelStore.open(run_id, runs_root)
    record = next(iter(store.records().values()))
    event = LabelEvent(run_id=run_id, trial_id=record.trial_id, field="abstained", annotator="mallory",
                       value=SCRIPT, source="api", context=context_of(record))
    with store.file.open("a", encoding="utf-8") as fh:
        fh.write(event.model_dump_json() + "\n")
    browser.get(f"{url}#/run/{run_id}")
    wait(browser, lambda d: "mallory" in text_of(d, "#agreement"))
    assert SCRIPT in text_of(browser, "#agreement")  # the category is visible as text
    assert browser.execute_script("return window.__pwned === undefined")
    # no element from the label; the only images are the scorecard's headline plots, drawn by this server (issue 39)
    assert browser.find_elements(By.CSS_SELECTOR, "#view script, #view img:not(.headline-plot)") == []
    assert all(i.get_attribute("src").startswith(f"{url}api/runs/{run_id}/headline.svg?kind=")
               for i in browser.find_elements(By.CSS_SELECTOR, "#view img.headline-plot"))


def test_a_report_link_opens_its_trial(served: tuple[str, str, Path], browser: Any) -> None:
    """The documented --link-template (docs/reports.md), filled in as the HTML report does, opens that trial."""
    import re

    url, run_id, runs_root = served
    docs = (REPO / "docs" / "reports.md").read_text(encoding="utf-8")
    [template] = re.findall(r"--link-template '([^']+)'", docs)
    trial = sorted(LabelStore.open(run_id, runs_root).records())[-1]  # not in the sample shown by default
    browser.get(template.replace("http://127.0.0.1:8765/", url.rstrip("/") + "/").format(
        run_id=run_id, trial_id=trial, case_id=""))
    wait(browser, lambda d: text_of(d, "#detail h2") == trial)
