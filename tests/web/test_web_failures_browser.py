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
    return driver.execute_script(
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


def _parts(driver: Any) -> list[dict[str, Any]]:
    """Each listed failure's input block: its trial and metric, the input's text, and the text of each <mark>."""
    return driver.execute_script(
        "return [...document.querySelectorAll('#failure-list .failure')].map(r => { const pre = r.querySelector("
        "'.exhibit pre.prompt'); return {trial: r.dataset.trial, metric: r.dataset.metric, label: pre ? "
        "r.querySelector('.exhibit .label').textContent : null, input: pre ? pre.textContent : null, "
        "marks: pre ? [...pre.querySelectorAll('mark.planted')].map(m => m.textContent) : [], "
        "tags: pre ? [...pre.querySelectorAll('*')].map(e => e.tagName) : []}; })")


def test_what_went_wrong_shows_the_injected_input_with_the_planted_text_marked(runs_root: Path,
                                                                              browser: Any) -> None:  # noqa: F811
    """A starter --inject run whose injected runs obey: each injected part's first failure shows the input that run
    was given, with the attack's text in <mark> (the exhibit of the API's JSON), once per part."""
    from tests.report.injected_runs import starter_injected_run

    run = starter_injected_run(runs_root)
    expected = knowgap.failures(run.run_id, runs_root)
    records = {r.trial_id: r for r in knowgap.iter_trials(run.run_id, runs_root)}
    injected = [x for x in expected.exhibits if x.planted]
    assert injected and all((x.part or "").startswith("injection 0") for x in injected)
    with serve(runs_root) as url:
        browser.get(f"{url}#/run/{run.run_id}")
        wait(browser, lambda d: len(_rows(d)) == expected.total)
        rows = _parts(browser)
    firsts: dict[tuple[str, str | None, int | None], dict[str, Any]] = {}
    seen: set[tuple[str, str | None, int | None]] = set()
    for f, row in zip(expected.failures, rows, strict=True):
        assert (row["trial"], row["metric"]) == (f.trial_id, f.metric)
        if (f.trial_id, f.part, f.call) in seen:
            assert row["input"] is None  # a part's input is shown at its first failure only
        elif row["input"] is not None:
            firsts[(f.trial_id, f.part, f.call)] = row
        seen.add((f.trial_id, f.part, f.call))
    assert set(firsts) == {(x.trial_id, x.part, x.call) for x in expected.exhibits if x.shown and x.input}  # once each
    for x in injected:
        row = firsts[(x.trial_id, x.part, x.call)]
        marker = records[x.trial_id].output["injection"]["runs"][0]["injection"]["marker"]
        assert row["label"] == "input (the planted text marked)" and set(row["tags"]) == {"MARK"}
        assert row["marks"] == [x.input[s:e] for s, e in x.planted] and any(marker in m for m in row["marks"])
        assert row["input"] == x.input_text().replace("[[planted: ", "").replace("]]", "")  # the clipped input, as text
        assert marker not in records[x.trial_id].calls[0].request.messages[-1].content  # not the clean context
