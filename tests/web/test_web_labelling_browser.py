"""Labelling in the browser (headless Chromium): the annotator sees the reference the judges used and never a
verdict before labelling; a rubric trial is scored 1-5 on every dimension with the keyboard, and the rubric panel
compares the people with the judge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from knowgap.labels.store import LabelStore
from knowgap.suites.clarify.dataset import ClarifyCase
from tests.labels.test_rubric_labels import DIMS, clarify_run  # noqa: F401 - the clarify run fixture
from tests.web.test_web_browser import browser, press, pytestmark, serve, served, text_of, wait  # noqa: F401


def _open_as(driver: Any, url: str, run_id: str, name: str) -> None:
    from selenium.webdriver.common.by import By

    driver.get(url)
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "a.runlink"))
    box = driver.find_element(By.ID, "annotator")
    box.clear()
    box.send_keys(name)
    driver.execute_script("document.activeElement.blur()")  # keys go to the page, not the name box
    driver.get(f"{url}#/run/{run_id}")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#detail h2"))


def test_reference_shown_and_verdict_hidden_until_labelled(served: tuple[str, str, Path],  # noqa: F811
                                                           browser: Any) -> None:  # noqa: F811
    url, run_id, runs_root = served
    _open_as(browser, url, run_id, "alice")
    store = LabelStore.open(run_id, runs_root)
    first = store.read_sample("abstained").trial_ids[0]
    record = store.records()[first]
    wait(browser, lambda d: text_of(d, "#detail h2") == first)
    reference = text_of(browser, "#reference")
    case_answers = record.scores["answerable"]
    assert "reference the judges used" in reference
    assert ("accepted answers" in reference) if case_answers else ("does not answer" in reference)
    # no verdict anywhere on the page for this trial before alice labels it: not in the list, not in the detail
    assert text_of(browser, "#verdicts-hidden").startswith("The judges' verdicts and scores show once")
    assert browser.execute_script("return document.querySelector('#scores')") is None
    row = browser.execute_script("return document.querySelector('#trials .row.sel').textContent")
    assert row == first  # only its id: no verdict badge, no disagreement mark
    assert "bob:" not in text_of(browser, "#detail")  # other people's labels wait too
    press(browser, "n")
    wait(browser, lambda d: text_of(d, "#detail h2") != first)
    browser.execute_script("document.querySelector('#trials .row').click()")
    wait(browser, lambda d: text_of(d, "#detail h2") == first and d.execute_script(
        "return !!document.querySelector('#scores')"))
    verdict = "true" if record.scores["abstained"] else "false"
    assert f"abstained{verdict}" in text_of(browser, "#scores").replace(" ", "")
    assert "me: false" in browser.execute_script("return document.querySelector('#trials .row').textContent")
    [event] = [e for e in LabelStore.open(run_id, runs_root).events() if e.annotator == "alice"]
    assert event.context.reference and event.value is False
    # the agreement panel shows the run judge's validity card on these labels (bob's 4 and alice's 1), under the
    # name of the judge that gave the run's verdicts
    from knowgap.labels.validity import card_from_labels

    card = card_from_labels(run_id, "abstained", runs_root=runs_root)
    wait(browser, lambda d: d.execute_script(
        "const r = document.querySelector('#cards tr[data-judge=\"abstention\"]'); return r ? r.dataset.n : null")
        == str(card.n))
    row = browser.execute_script("return document.querySelector('#cards tr[data-judge=\"abstention\"]').textContent")
    from knowgap.judges.cards import assess

    # the run's one target model wrote every labelled reply: a screen by the card rule, whatever its figure
    assert card.version in row and assess(card).status == "screen" and "screen" in row


def test_rubric_scored_with_the_keyboard_in_the_browser(clarify_run: tuple[str, list[ClarifyCase]],  # noqa: F811
                                                        runs_root: Path, browser: Any) -> None:  # noqa: F811
    from knowgap.labels.sampling import sample_run

    run_id, cases = clarify_run
    sample, _ = sample_run(run_id, DIMS[0], runs_root=runs_root, n=3, seed=0)
    store = LabelStore.open(run_id, runs_root)
    records = store.records()
    first = sample.trial_ids[0]
    case = next(c for c in cases if c.id == records[first].case_id)
    with serve(runs_root) as url:
        _open_as(browser, url, run_id, "alice")
        wait(browser, lambda d: text_of(d, "#detail h2") == first)
        assert browser.execute_script("return document.querySelectorAll('#labelbar .dim').length") == len(DIMS)
        assert case.expected_clarifying_questions[0] in text_of(browser, "#reference")
        assert "judge" not in browser.execute_script(
            "return [...document.querySelectorAll('.call .role')].map(e => e.textContent).join(' ')")
        assert browser.execute_script("return document.querySelector('#scores')") is None
        for i, key in enumerate("4213"):
            press(browser, key)
            wait(browser, lambda d, i=i: sum(e.annotator == "alice" for e in LabelStore.open(
                run_id, runs_root).events()) == i + 1)
            if i < 3:  # still on the trial, the next dimension active, verdicts still hidden
                wait(browser, lambda d, i=i: d.execute_script(
                    "return document.querySelector('#labelbar .dim.active').dataset.field") == DIMS[i + 1])
                assert text_of(browser, "#detail h2") == first and text_of(browser, "#verdicts-hidden")
        wait(browser, lambda d: text_of(d, "#detail h2") == sample.trial_ids[1])
        events = [e for e in LabelStore.open(run_id, runs_root).events() if e.annotator == "alice"]
        assert [(e.trial_id, e.field, e.value) for e in events] == [
            (first, d, v) for d, v in zip(DIMS, (4, 2, 1, 3), strict=True)]
        assert events[0].source == "web" and "missing information" in events[0].context.reference
        wait(browser, lambda d: d.execute_script(
            "const r = document.querySelector('#rubric-dims tr[data-a=\"judge\"][data-b=\"alice\"]');"
            " return r ? r.dataset.n : null") == "1")
        browser.execute_script("document.querySelector('#trials .row').click()")
        wait(browser, lambda d: text_of(d, "#detail h2") == first and d.execute_script(
            "return !!document.querySelector('#scores')"))
        assert "rubric_total" in text_of(browser, "#scores")
