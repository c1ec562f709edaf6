"""`knowgap serve` opens a run and a comparison on the same decision as report.html (issue 39), in real headless
Chromium at 1366x768: the scorecard of the run's headline metrics (value, 95% interval, n, the judge's badge; for a
comparison each change from the baseline and whether it is significant), visible without scrolling, its headline
plot drawn as an image, then where the run fails most. Screenshots of the top are kept under tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from knowgap.report import compare_runs
from knowgap.report.causes import against, failure_causes
from knowgap.report.data import RunData
from knowgap.report.scorecard import BREAKDOWN, folded_zero
from knowgap.web.data import COMPARE_REPS
from tests.report.stored_runs import stored_run
from tests.report.test_scorecard_browser import HEIGHT, TOP, WIDTH, check_top, png_facts, set_viewport
from tests.web.test_web_browser import browser, pytestmark, serve, wait  # noqa: F401 - fixtures and marks


@pytest.fixture
def served(runs_root: Path) -> Iterator[tuple[str, RunData, RunData]]:
    """Two stored starter runs (two seeds of one system) served by the real CLI."""
    a, b = stored_run("starter", runs_root), stored_run("starter-b", runs_root)
    with serve(runs_root) as url:
        yield url, a, b


def top_of(driver: Any, url: str, cells: int, shot: Path, ready: str = "") -> dict[str, Any]:
    """The page at ``url`` once its scorecard holds ``cells`` numbers (and ``ready`` matches), unscrolled, at
    1366x768; its screenshot saved to ``shot``."""
    set_viewport(driver, WIDTH, HEIGHT)
    driver.get(url)
    wait(driver, lambda d: d.execute_script("return document.querySelectorAll('#scorecard td.cell').length") == cells
         and (not ready or d.execute_script(f"return document.querySelectorAll('{ready}').length") > 0), timeout=60)
    wait(driver, lambda d: d.execute_script("return [...document.querySelectorAll('#scorecard img')]"
                                            ".every((i) => i.complete && i.naturalWidth > 0)"))
    top: dict[str, Any] = driver.execute_script(TOP)
    assert (top["vw"], top["vh"], top["scrollY"]) == (WIDTH, HEIGHT, 0)
    assert driver.save_screenshot(str(shot))
    width, height, distinct = png_facts(shot)
    assert (width, height) == (WIDTH, HEIGHT) and shot.stat().st_size > 30_000 and distinct > 100
    return top


def test_the_run_page_opens_on_its_scorecard(served: tuple[str, RunData, RunData], browser: Any,  # noqa: F811
                                             tmp_path: Path) -> None:
    url, run, _ = served
    top = top_of(browser, f"{url}#/run/{run.run_id}", 4, tmp_path / "web-run-top.png", ready="#causes tr.cause")
    check_top(top, [run], None)
    plots = browser.execute_script("return [...document.querySelectorAll('#scorecard img.headline-plot')]"
                                   ".map((i) => [i.naturalWidth, i.naturalHeight])")
    assert len(plots) == 1 and plots[0][0] > 500 and plots[0][1] > 100
    causes = failure_causes(run)
    rows = browser.execute_script("return [...document.querySelectorAll('#causes tr.cause')]"
                                  ".map((r) => [...r.cells].map((c) => c.textContent))")
    assert [(int(r[0]), r[1], r[4]) for r in rows] == [(c.trials, c.cause, c.example) for c in causes.causes]
    svg = httpx.get(f"{url}api/runs/{run.run_id}/headline.svg", params={"kind": "proportion"})
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    assert svg.text.startswith('<svg class="chart bar-chart"') and "<script" not in svg.text
    assert httpx.get(f"{url}api/runs/{run.run_id}/headline.svg", params={"kind": "mean"}).status_code == 400


def test_the_compare_page_opens_on_what_changed(served: tuple[str, RunData, RunData], browser: Any,  # noqa: F811
                                                tmp_path: Path) -> None:
    url, a, b = served
    top = top_of(browser, f"{url}#/compare/{a.run_id}/{b.run_id}", 4, tmp_path / "web-compare-top.png",
                 ready="#causes tr.cause")
    check_top(top, [b], None)
    expected = {(c.group, c.name): c for c in compare_runs(a, b, reps=COMPARE_REPS).changes}
    for cell in top["cells"]:
        [change] = cell["change"]
        ch = expected[(cell["group"], cell["metric"])]
        assert change["visible"] and ch.delta is not None
        assert change["text"].startswith(f"{ch.delta * 100:+.1f} pp")
        said = {True: " significant", False: "not significant", None: "no test"}[ch.significant]
        assert change["text"].endswith(said)
    # where B fails most, each cause with its trials in baseline A beside it
    causes = against(failure_causes(b), a).causes
    rows = browser.execute_script("return [...document.querySelectorAll('#causes tr.cause')]"
                                  ".map((r) => [...r.cells].map((c) => c.textContent))")
    assert [(int(r[0]), int(r[1]), r[2]) for r in rows] == [(c.trials, c.baseline_trials, c.cause) for c in causes]
    assert all(c.baseline_trials for c in causes)  # two seeds of one system fail in the same ways


def test_the_metrics_box_folds_zeros_and_collapses_breakdowns(runs_root: Path, browser: Any) -> None:  # noqa: F811
    run = stored_run("abstain-loo", runs_root)
    assert run.suite is not None
    folded = folded_zero(run.metrics, run.suite.metric_specs)
    main = [m for m in run.metrics if m.name not in folded and BREAKDOWN not in m.group]
    broken = [m for m in run.metrics if m.name not in folded and BREAKDOWN in m.group]
    assert folded and main and broken
    with serve(runs_root) as url:
        info = httpx.get(f"{url}api/runs/{run.run_id}").json()
        assert info["folded"] == folded and info["breakdowns_by"] == ["kb"]
        assert [m["name"] for m in info["metrics"] if m["breakdown"]] == [m.name for m in run.metrics
                                                                           if BREAKDOWN in m.group]
        browser.get(f"{url}#/run/{run.run_id}")
        wait(browser, lambda d: d.execute_script("return document.querySelectorAll('#scorecard td.cell').length") > 0)
        browser.execute_script("document.querySelector('#metrics-box').open = true")
        shown = browser.execute_script(
            "const rows = (css) => [...document.querySelectorAll(css)].map((r) => r.cells[1].textContent);"
            "return {main: rows('#metrics-box > table.metrics tr[data-judge]'),"
            " broken: rows('#breakdowns tr[data-judge]'),"
            " open: document.querySelector('#breakdowns').open, folded: document.querySelector('#folded').textContent,"
            " visible: document.querySelector('#breakdowns table').checkVisibility()}")
    assert shown["main"] == [m.name for m in main] and shown["broken"] == [m.name for m in broken]
    assert shown["open"] is False and shown["visible"] is False  # collapsed until opened
    assert shown["folded"] == f"0 in every group (housekeeping, lower is better): {', '.join(sorted(folded))}"
