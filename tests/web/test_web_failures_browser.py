"""The run page's "What went wrong" list in real headless Chromium: every wrong per-metric verdict of a real
stored run (as ``knowgap show RUN --failed`` lists them), filtered by metric; a click opens the trial; a response
holding markup is shown as text; over HTTP the list is the API's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import knowgap
from tests.labels.starter_runs import SCRIPT, starter_run
from tests.web.test_web_browser import browser, pytestmark, serve, text_of, wait  # noqa: F401 - fixtures and marks


@pytest.fixture
def served_run(tmp_path: Path, runs_root: Path) -> Iterator[tuple[str, str, Path]]:
    run = starter_run(tmp_path, runs_root)
    with serve(runs_root) as url:
        yield url, run.run_id, runs_root


def _rows(driver: Any) -> list[dict[str, str]]:
    return driver.execute_script(  # type: ignore[no-any-return]
        "return [...document.querySelectorAll('#failure-list .failure')].map(r => ({trial: r.dataset.trial, "
        "metric: r.dataset.metric, text: r.textContent}))")


def test_what_went_wrong_lists_filters_and_opens(served_run: tuple[str, str, Path],
                                                 browser: Any) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    url, run_id, runs_root = served_run
    expected = knowgap.failures(run_id, runs_root)
    assert expected.source == "stored" and len(expected.by_metric) > 1 and expected.total < 500
    api = httpx.get(f"{url}api/runs/{run_id}/failures").json()
    assert api["by_metric"] == expected.by_metric and len(api["failures"]) == expected.total

    browser.get(f"{url}#/run/{run_id}")
    wait(browser, lambda d: len(_rows(d)) == expected.total)
    rows = _rows(browser)
    assert [(r["trial"], r["metric"]) for r in rows] == [(f.trial_id, f.metric) for f in expected.failures]
    assert all(f.why in r["text"] for r, f in zip(rows, expected.failures, strict=True))
    assert any(SCRIPT[:40] in r["text"] for r in rows)  # the scripted reply's markup, as text
    assert browser.execute_script("return window.__pwned === undefined && document.title !== 'pwned'")

    metric, count = min(expected.by_metric.items(), key=lambda kv: kv[1])
    Select(browser.find_element(By.ID, "f-failmetric")).select_by_value(metric)
    wait(browser, lambda d: len(_rows(d)) == count)
    assert {r["metric"] for r in _rows(browser)} == {metric}

    last = _rows(browser)[-1]["trial"]
    browser.find_elements(By.CSS_SELECTOR, "#failure-list .failure")[-1].click()
    wait(browser, lambda d: text_of(d, "#detail h2") == last)
