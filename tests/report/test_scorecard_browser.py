"""report.html opens on the decision, in real headless Chromium at 1366x768 (issue 39): for a single run with a gate,
a comparison with its baseline, and the demo-style report of every suite, the top of the page (no scrolling) holds
the scorecard: each headline metric its suite declares, in each configuration, with its value, 95% interval and n,
the gate's mark where a gate was given, and the judge's badge. Screenshots of the top are kept under tmp_path."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

import knowgap
from knowgap.engine.metric_spec import headline
from knowgap.report import compare_runs, evaluate_gate, load_run_data, write_html
from knowgap.report.data import RunData
from knowgap.report.gate import GateResult, Threshold
from knowgap.report.scorecard import BREAKDOWN
from tests.report.stored_runs import DEMO, stored_run
from tests.report.test_chromium import browser  # noqa: F401 - the module's headless Chromium

pytestmark = pytest.mark.slow
WIDTH, HEIGHT = 1366, 768

TOP = """
const vw = window.innerWidth, vh = window.innerHeight;
const inView = (e) => { const r = e.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= vh && r.right <= vw; };
return {vw: vw, vh: vh, scrollY: window.scrollY,
  cells: [...document.querySelectorAll('#scorecard .card')].flatMap((card) =>
    [...card.querySelectorAll('td.cell[data-metric]')].map((td) => ({run: card.dataset.run, metric: td.dataset.metric,
      group: td.dataset.group, gate: td.dataset.gate, text: td.textContent, visible: inView(td),
      marks: [...td.querySelectorAll('.gate')].map((g) => ({text: g.textContent, visible: inView(g)})),
      change: [...td.querySelectorAll('.chg')].map((c) => ({text: c.textContent, cls: c.className,
                                                           visible: inView(c)}))}))),
  heads: [...document.querySelectorAll('#scorecard .card')].flatMap((card) =>
    [...card.querySelectorAll('th.metric')].map((th) => ({run: card.dataset.run, metric: th.dataset.metric,
      judge: th.dataset.judge, badge: (th.querySelector('.badge, .label') || {}).textContent || '',
      visible: inView(th) && (!th.querySelector('.badge, .label') || inView(th.querySelector('.badge, .label')))}))),
  verdict: document.getElementById('gate-verdict') ? {text: document.getElementById('gate-verdict').textContent,
                                                     visible: inView(document.getElementById('gate-verdict'))} : null};
"""


def png_facts(path: Path) -> tuple[int, int, int]:
    """(width, height, distinct byte values of the decoded image data) of a PNG file."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    return width, height, len(set(zlib.decompress(idat)))


def expected_cells(run: RunData) -> set[tuple[str, str, str]]:
    """(run, metric, group) of every headline metric of the run's configurations, from its suite's MetricSpecs."""
    assert run.suite is not None and run.suite.metric_specs is not None
    names = headline(run.suite.metric_specs)
    return {(run.run_id, m.name, m.group) for m in run.metrics if m.name in names and BREAKDOWN not in m.group}


def set_viewport(driver: Any, width: int, height: int) -> None:
    """Size the window so that the page's viewport is ``width`` x ``height`` (the window's frame comes on top)."""
    driver.set_window_size(width, height)
    frame = driver.execute_script("return [outerWidth - innerWidth, outerHeight - innerHeight]")
    driver.set_window_size(width + frame[0], height + frame[1])


def open_top(driver: Any, page: Path, shot: Path) -> dict[str, Any]:
    """The page at 1366x768, unscrolled: its screenshot saved to ``shot`` and what the top viewport holds."""
    set_viewport(driver, WIDTH, HEIGHT)
    driver.get(page.as_uri())
    top: dict[str, Any] = driver.execute_script(TOP)
    assert (top["vw"], top["vh"], top["scrollY"]) == (WIDTH, HEIGHT, 0)
    assert driver.save_screenshot(str(shot))
    width, height, distinct = png_facts(shot)
    assert (width, height) == (top["vw"], top["vh"]) and shot.stat().st_size > 30_000 and distinct > 100
    return top


def value_texts(run: RunData, metric: str, group: str) -> tuple[str, str, str]:
    """What a cell must say of the stored number: its value, its interval's ends and its n."""
    m = next(x for x in run.metrics if (x.name, x.group) == (metric, group))
    if m.value is None:  # no trial fed it (partial's unsafe_completeness on the full view)
        return "n/a", "", f"n={m.n_text()}"
    assert m.ci_low is not None and m.ci_high is not None
    if m.kind == "proportion":
        return f"{m.value:.1%}", f"[{m.ci_low * 100:.1f}, {m.ci_high * 100:.1f}]", f"n={m.n_text()}"
    return f"{m.value:.3f}", f"[{m.ci_low:.3f}, {m.ci_high:.3f}]", f"n={m.n_text()}"


def check_top(top: dict[str, Any], runs: list[RunData], gate: GateResult | None) -> None:
    """Every headline number of ``runs`` is in the top viewport with its interval, n, gate mark and judge badge."""
    expected = set().union(*(expected_cells(r) for r in runs))
    cells = {(c["run"], c["metric"], c["group"]): c for c in top["cells"]}
    assert set(cells) == expected
    by_id = {r.run_id: r for r in runs}
    for key, cell in cells.items():
        assert cell["visible"], f"{key} is below the fold"
        value, ci, n = value_texts(by_id[key[0]], key[1], key[2])
        assert value in cell["text"] and ci in cell["text"] and n in cell["text"], (key, cell["text"])
        checks = [c for c in (gate.checks if gate else []) if (c.run_id, c.metric, c.group) == key]
        assert len(cell["marks"]) == len(checks) and all(m["visible"] for m in cell["marks"])
        if checks:
            assert cell["gate"] == ("pass" if all(c.passed for c in checks) else "fail")
            assert cell["marks"][0]["text"][0] == ("✓" if checks[0].passed else "✗")
    heads = {(h["run"], h["metric"]) for h in top["heads"]}
    assert heads == {(r, m) for r, m, _ in expected}
    assert all(h["visible"] and h["badge"] in ("SCREEN", "✓ judge", "computed", "judge unknown") for h in top["heads"])
    if gate is not None:
        assert top["verdict"] is not None and top["verdict"]["visible"]
        word = "passed" if gate.passed else "FAILED"
        assert top["verdict"]["text"].startswith(f"Gate {word}")


def test_a_single_run_opens_on_its_scorecard(browser: Any, runs_root: Path, tmp_path: Path) -> None:  # noqa: F811
    run = stored_run("starter", runs_root)
    gate = evaluate_gate([run], [Threshold.parse("accuracy >= 0.2"), Threshold.parse("abstention_unanswerable >= 0.25"),
                                 Threshold.parse("errors == 0")])
    page = write_html([run], tmp_path / "single.html", gate=gate)
    top = open_top(browser, page, tmp_path / "single-top.png")
    check_top(top, [run], gate)
    assert {c["gate"] for c in top["cells"]} == {"pass", "fail"}  # accuracy[plain] 16.7% < 20%: one fails
    assert top["verdict"]["text"] == "Gate FAILED: 1 of 6 checks"


def test_a_comparison_opens_on_what_changed(browser: Any, abstain_run: knowgap.RunResult,  # noqa: F811
                                            perfect_run: knowgap.RunResult, tmp_path: Path) -> None:
    a, b = load_run_data(abstain_run.path), load_run_data(perfect_run.path)
    page = write_html([a, b], tmp_path / "compare.html", comparison=compare_runs(a, b, reps=300), max_examples=5)
    top = open_top(browser, page, tmp_path / "compare-top.png")
    check_top(top, [b], None)  # the baseline's numbers are B's changes: one card, B's
    for cell in top["cells"]:
        [change] = cell["change"]
        assert change["visible"]
        if cell["metric"] == "accuracy":  # 0% -> 100% in each group: better, and significant
            assert change["text"].startswith("+100.0 pp") and "significant" in change["text"]
            assert change["cls"] == "chg better sig"
        else:  # both abstain on every unanswerable case
            assert change["text"].startswith("+0.0 pp") and change["cls"] == "chg"


def test_the_demo_report_opens_on_every_suites_scorecard(browser: Any, runs_root: Path,  # noqa: F811
                                                         tmp_path: Path) -> None:
    runs = [stored_run(name, runs_root) for name in DEMO]
    gate = evaluate_gate(runs, [Threshold.parse(t) for t in ("starter: accuracy >= 0.5", "extract: flip_rate <= 0.2",
                                                             "partial: leak_rate == 0", "clarify: element_f2 >= 0.1")])
    page = write_html(runs, tmp_path / "demo.html", title="knowgap demo", gate=gate)
    top = open_top(browser, page, tmp_path / "demo-top.png")
    check_top(top, runs, gate)
    assert len({c["run"] for c in top["cells"]}) == len(DEMO) == 5
    # the per-group breakdowns (abstain's kb=, clarify's languages, partial's families...) are collapsed
    collapsed = browser.execute_script("return [...document.querySelectorAll('details.breakdowns')]"
                                       ".map((d) => [d.open, d.querySelector('table').checkVisibility()])")
    assert len(collapsed) == 4 and all(c == [False, False] for c in collapsed)  # starter has none
