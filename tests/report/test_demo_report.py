"""knowgap demo ends by writing one HTML report of every suite and printing its path."""

from __future__ import annotations

from pathlib import Path

from knowgap.suites import available
from tests.helpers import knowgap_cli, write_jsonl


def test_demo_writes_combined_html(tmp_path: Path) -> None:
    answers = write_jsonl(tmp_path / "a.jsonl", [{"response": "I don't know."}])
    runs = tmp_path / "runs"
    proc = knowgap_cli("demo", "--model", f"scripted:{answers}", "--runs-dir", str(runs))
    assert proc.returncode == 0, proc.stderr
    report = runs / "demo-report.html"
    assert f"HTML report of all suites: {report.resolve()}" in proc.stdout.replace("\n", "")
    html = report.read_text(encoding="utf-8")
    assert html.count('<section class="run"') == len(available())
    assert "<title>knowgap demo</title>" in html
    # it opens on the decision (issue 39): a scorecard card per suite, then where each fails most, then the runs
    assert html.index('id="scorecard"') < html.index('id="fails"') < html.index('<section class="run"')
    assert html.count('<div class="card"') == len(available())
    assert "<td>not run with --inject</td>" not in html  # only extract plants attacks in its demo
