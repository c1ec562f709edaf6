"""The HTML report: written by every run, self-contained, charts present, model output inert."""

from __future__ import annotations

from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

import knowgap
from knowgap.report import ReportSection, load_run_data, render_html, write_html
from knowgap.suites.starter import StarterSuite
from tests.helpers import scripted
from tests.report.conftest import IMG, SCRIPT


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: Counter[str] = Counter()
        self.classes: Counter[str] = Counter()
        self.text: list[str] = []
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        for name, value in attrs:
            if name == "class" and value:
                for c in value.split():
                    self.classes[f"{tag}.{c}"] += 1
            if name in ("src", "href") and value:
                self.urls.append(value)
            assert not name.startswith("on"), f"event handler attribute {name} on <{tag}>"

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html: str) -> Tags:
    tags = Tags()
    tags.feed(html)
    return tags


def test_every_run_writes_report_html(hostile_run: knowgap.RunResult) -> None:
    path = hostile_run.path / "report.html"
    assert path.exists() and (hostile_run.path / "report.md").exists()
    html = path.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    tags = parse(html)
    # self-contained: no scripts, no images, no stylesheet links, no external URLs
    assert tags.tags["script"] == 0 and tags.tags["img"] == 0 and tags.tags["link"] == 0
    assert all(not u.startswith(("http:", "https:", "//")) for u in tags.urls)
    # 3 metric charts (3 proportions; errors is 0 in every group: folded into one line, no chart), the headline
    # chart (2 headline proportions x 2 groups) and 2 score tables (answerable x abstained per group)
    assert tags.classes["svg.bar-chart"] == 4
    assert tags.classes["svg.confusion"] == 2
    assert tags.classes["rect.bar"] == 6 + 4
    assert tags.classes["g.err"] == 6 + 4  # every proportion has its CI
    assert "0 in every group (housekeeping, lower is better): errors" in html
    assert tags.classes["rect.cell"] == 8  # 2 x 2 cells in each of the 2 tables


def test_model_output_is_escaped_text(hostile_run: knowgap.RunResult) -> None:
    html = (hostile_run.path / "report.html").read_text(encoding="utf-8")
    tags = parse(html)
    text = "".join(tags.text)
    assert SCRIPT.split(" ", 3)[3] in text  # "<script>...</script></pre><b>bold</b>" shown as text
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;&lt;/pre&gt;" in html
    assert "&lt;img src=x onerror=&quot;document.title=&#x27;pwned&#x27;&quot;&gt;" in html
    assert "<b>bold</b>" not in html
    # the API key in a response is redacted
    assert "sk-ant-api03-abcdefghijklmnop" not in html
    assert IMG.split(" key ")[0].replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;").replace(
        "'", "&#x27;") in html


def test_confusion_counts_and_worst_examples(hostile_run: knowgap.RunResult) -> None:
    html = (hostile_run.path / "report.html").read_text(encoding="utf-8")
    for group in ("prompt=grounded", "prompt=plain"):
        assert f"answerable × abstained · {group}" in html
    # every answerable case abstained (8 per group), every unanswerable one answered
    assert html.count("answerable=true, abstained=true: 8") == 2
    assert html.count("answerable=false, abstained=false: 8") == 2
    assert html.count("answerable=true, abstained=false: 0") == 2
    assert "failed trials per group: prompt=grounded: 16 of 16, prompt=plain: 16 of 16" in html
    tags = parse(html)
    assert tags.classes["div.example"] == 20  # the default limit, shared round robin by the two groups
    assert tags.classes["pre.response"] == 20


def test_no_failures_and_metric_values(perfect_run: knowgap.RunResult) -> None:
    html = (perfect_run.path / "report.html").read_text(encoding="utf-8")
    assert "no failed trials" in html
    assert "failed trials per group: prompt=grounded: 0 of 16, prompt=plain: 0 of 16" in html
    assert "<title>prompt=plain: 100.0% (95% CI 67.6% to 100.0%) (n=8)</title>" in html  # a bar's tooltip
    assert parse(html).classes["div.example"] == 0


def test_suite_sections_hook(hostile_run: knowgap.RunResult, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def sections(self: StarterSuite, records: object, metrics: object) -> list[ReportSection]:
        return [ReportSection(title="Abstention table", html="<p id=custom>custom section</p>",
                              markdown="custom *markdown*")]

    monkeypatch.setattr(StarterSuite, "report_sections", sections)
    run = load_run_data(hostile_run.path)
    html = render_html([run])
    assert "<h3>Abstention table</h3><p id=custom>custom section</p>" in html
    from knowgap.report import summary_markdown

    assert "#### Abstention table\n\ncustom *markdown*" in summary_markdown([run])

    def broken(self: StarterSuite, records: object, metrics: object) -> list[ReportSection]:
        raise RuntimeError("chart bug <x>")

    monkeypatch.setattr(StarterSuite, "report_sections", broken)
    html = write_html([run], tmp_path / "r.html").read_text(encoding="utf-8")
    assert "the suite's report sections failed: RuntimeError: chart bug &lt;x&gt;" in html
    assert html.count('class="chart bar-chart"') == 4


def test_combined_report_and_link_template(hostile_run: knowgap.RunResult, perfect_run: knowgap.RunResult) -> None:
    runs = [load_run_data(hostile_run.path), load_run_data(perfect_run.path)]
    html = render_html(runs, link_template="http://127.0.0.1:8000/runs/{run_id}/trials/{trial_id}")
    tags = parse(html)
    # the scorecard, where it fails most and the headline plots, then the two runs; 3 metric charts and a headline
    # chart per run
    assert tags.tags["section"] == 3 + 2 and tags.classes["svg.bar-chart"] == 8
    assert (f'<a href="#run-0" title="{hostile_run.run_id}">starter · {hostile_run.run_id}</a>'
            f'<a href="#run-1" title="{perfect_run.run_id}">starter · {perfect_run.run_id}</a>' in html)
    link = f"http://127.0.0.1:8000/runs/{hostile_run.run_id}/trials/en-library-hours|prompt=grounded|r0"
    assert f'<a href="{link}">' in html


def test_report_of_errored_trials(tmp_path: Path, runs_root: Path) -> None:
    never = scripted(tmp_path, {"request_hash": "0" * 64, "response": "never"})
    result = knowgap.run("starter", models={"target": never}, runs_root=runs_root)
    html = (result.path / "report.html").read_text(encoding="utf-8")
    tags = parse(html)
    assert tags.classes["div.err"] == 20
    assert "no scripted response for request" in html
    # accuracy has no data: its bars say n/a (3 metrics x 2 groups, and the 2 headline ones x 2 groups in the headline
    # chart), and no score table can be drawn
    assert tags.classes["svg.confusion"] == 0
    assert html.count(">n/a</text>") == 6 + 4


def test_rate_chart_helper_for_suites(hostile_run: knowgap.RunResult) -> None:
    from knowgap.report.charts import rate_by, rate_chart

    records = load_run_data(hostile_run.path).records
    # abstained: every answerable case (8 per prompt), no unanswerable one
    assert rate_by(records, "abstained", ["prompt"]) == [("prompt=grounded", 8, 16), ("prompt=plain", 8, 16)]
    assert rate_by(records, "correct", []) == [("all", 0, 16)]  # None (unanswerable) is not counted
    svg = rate_chart(records, "abstained", ["prompt"])
    assert svg.count('class="bar"') == 2 and "abstained by prompt (95% CI)" in svg
    assert "prompt=plain: 50.0% (95% CI 28.0% to 72.0%) (8 of 16)" in svg


def test_suite_chooses_its_score_tables(hostile_run: knowgap.RunResult, monkeypatch: pytest.MonkeyPatch) -> None:
    run = load_run_data(hostile_run.path)
    monkeypatch.setattr(StarterSuite, "score_tables", [])
    assert parse(render_html([run])).classes["svg.confusion"] == 0
    monkeypatch.setattr(StarterSuite, "score_tables", [("abstained", "answerable"), ("correct", "abstained")])
    page = render_html([run])
    # "correct" is None on unanswerable cases, so it is not categorical in every trial: only the first pair
    assert parse(page).classes["svg.confusion"] == 2 and "abstained × answerable · prompt=plain" in page
