"""Every reported number names its judge and that judge's validity card: a metric whose judge has a card at or
above balanced accuracy 0.80 is reportable (its BA shown), one below or without a card is a SCREEN with the
reason, a proportion of the judge's verdicts gets the Rogan-Gladen corrected rate; in the CLI table, report.md,
report.html and the web app. Runs are real starter runs of scripted models; cards are saved into the test's own
KNOWGAP_HOME, where knowgap looks first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import knowgap
from knowgap.engine.records import Manifest, MetricJudge, MetricValue
from knowgap.judges import abstention
from knowgap.judges.cards import LanguageFigure, ValidityCard, binary_card, corrected, save_card
from knowgap.report.data import load_run_data
from knowgap.report.html import render_html
from knowgap.report.judging import Judgements, judgements
from knowgap.report.markdown import render_markdown
from knowgap.report.summary import run_summary
from knowgap.suites.starter.scoring import ANSWER_MATCH_VERSION
from knowgap.web.data import RunsView
from tests.helpers import knowgap_cli, scripted

# answers cycle through these in trial order, so each group's abstention rate lies strictly between 0 and 1
RESPONSES = ["I don't know.", "It is 42.", "Yes, 42."]


def card(judge: str, version: str, tp: int, fn: int, fp: int, tn: int) -> ValidityCard:
    """A card measured on a made-up labelled set with these confusion counts: real replies of two models, in
    English and Chinese alike (the starter run's two languages), so only its balanced accuracy decides."""
    verdicts = [True] * tp + [False] * fn + [True] * fp + [False] * tn
    labels = [True] * (tp + fn) + [False] * (fp + tn)
    n = len(labels)
    made = binary_card(judge, version, verdicts, labels, positive="positive", dataset=f"test/{judge}.jsonl",
                       dataset_sha256="0" * 64, writers=["model-a", "model-b"] * (n // 2) + ["model-a"] * (n % 2))
    return made.model_copy(update={"languages": {"en": LanguageFigure(n=n // 2), "zh": LanguageFigure(n=n - n // 2)}})


@pytest.fixture
def good_abstention() -> ValidityCard:
    c = card("abstention", abstention.VERSION, tp=45, fn=5, fp=4, tn=46)  # BA 0.91
    save_card(c)
    return c


@pytest.fixture
def weak_answer_match() -> ValidityCard:
    c = card("answer-match", ANSWER_MATCH_VERSION, tp=30, fn=20, fp=20, tn=30)  # BA 0.60
    save_card(c)
    return c


@pytest.fixture
def run(tmp_path: Path, runs_root: Path, good_abstention: ValidityCard,
        weak_answer_match: ValidityCard) -> knowgap.RunResult:
    return knowgap.run("starter", models={"target": scripted(tmp_path, *RESPONSES)}, runs_root=runs_root)


def pct(x: float) -> str:
    return f"{x:.1%}"


def metric(result: knowgap.RunResult, group: str, name: str) -> MetricValue:
    return next(m for m in result.metrics if m.group == group and m.name == name)


def md_row(report: str, group: str, name: str) -> str:
    return next(line for line in report.splitlines() if line.startswith(f"| {group} | {name} |"))


def test_report_md_shows_each_metric_judge_card_screen_and_corrected_rate(run: knowgap.RunResult,
                                                                          good_abstention: ValidityCard) -> None:
    report = (run.path / "report.md").read_text(encoding="utf-8")
    m = metric(run, "prompt=plain", "abstention_unanswerable")
    assert 0 < (m.value or 0) < 1
    fixed = corrected(round((m.value or 0) * m.n), m.n, good_abstention)
    assert fixed is not None and fixed.ci_low is not None and fixed.ci_high is not None
    row = md_row(report, "prompt=plain", "abstention_unanswerable")
    assert f"| {pct(fixed.value or 0)} [{pct(fixed.ci_low)}, {pct(fixed.ci_high)}] |" in row
    assert f"abstention {abstention.VERSION} · BA 0.91 [" in row and "SCREEN" not in row
    weak = md_row(report, "prompt=plain", "accuracy")
    assert f"SCREEN: answer-match {ANSWER_MATCH_VERSION} · BA 0.60 [" in weak
    assert "judge balanced accuracy 0.60 < 0.80 on test/answer-match.jsonl (n=100)" in weak
    assert md_row(report, "prompt=plain", "errors").endswith("| computed |")
    judges = report.split("## Judges", 1)[1]
    assert f"**abstention** `{abstention.VERSION}` (abstention_unanswerable, over_abstention): test/abstention.jsonl " \
           "(n=100) · BA 0.91 [" in judges
    assert "sensitivity 0.90 [" in judges and "specificity 0.92 [" in judges


def test_a_judge_without_a_card_makes_a_screen(tmp_path: Path, runs_root: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from knowgap.judges import cards

    monkeypatch.setattr(cards, "SHIPPED_DIR", tmp_path / "no-shipped-cards")  # the abstention card ships now
    result = knowgap.run("starter", models={"target": scripted(tmp_path, *RESPONSES)}, runs_root=runs_root)
    found = judgements(result.manifest, result.metrics)
    by_name = {j.metric: j for j in found}
    assert by_name["abstention_unanswerable"].status == "screen"
    assert by_name["abstention_unanswerable"].reason == "the judge has no validity card: its accuracy is unmeasured"
    assert by_name["abstention_unanswerable"].corrected is None
    report = (result.path / "report.md").read_text(encoding="utf-8")
    assert "**abstention** `" in report and "**no validity card**" in report


def test_cli_table_marks_screens_with_their_reason(run: knowgap.RunResult, runs_root: Path) -> None:
    shown = knowgap_cli("show", run.run_id, "--runs-dir", str(runs_root), env={"COLUMNS": "220"})
    assert shown.returncode == 0, shown.stderr
    line = next(x for x in shown.stdout.splitlines() if "prompt=plain" in x and " accuracy " in x)
    assert f"SCREEN: answer-match {ANSWER_MATCH_VERSION} · BA 0.60" in line
    over = next(x for x in shown.stdout.splitlines() if "prompt=plain" in x and "over_abstention" in x)
    assert "BA 0.91" in over and "SCREEN" not in over
    assert "  accuracy: judge balanced accuracy 0.60 < 0.80 on test/answer-match.jsonl (n=100)" in shown.stdout
    assert "over_abstention:" not in shown.stdout


def test_html_pr_summary_and_web_data_carry_the_same_judgements(run: knowgap.RunResult, runs_root: Path) -> None:
    data = load_run_data(run.path)
    summary = run_summary(data)
    assert f"SCREEN: answer-match {ANSWER_MATCH_VERSION} · BA 0.60" in next(
        line for line in summary.splitlines() if "| accuracy |" in line)
    html = render_html([data])
    assert html.count('<tr data-judge="screen">') == 2  # accuracy in both groups
    assert '<span class="badge screen" title="judge balanced accuracy 0.60 &lt; 0.80' in html
    assert "<h3>Judges</h3><table class=judges>" in html and "test/abstention.jsonl" in html
    web = RunsView(runs_root).run(run.run_id)
    rows = {(m["group"], m["name"]): m["judgement"] for m in web["metrics"]}
    assert rows[("prompt=plain", "accuracy")]["status"] == "screen"
    assert rows[("prompt=plain", "errors")]["status"] == "computed"
    assert rows[("prompt=plain", "over_abstention")]["accuracy"].startswith("BA 0.91 [")


def test_an_old_manifest_without_judges_still_renders(run: knowgap.RunResult, runs_root: Path) -> None:
    file = run.path / "manifest.json"
    data = json.loads(file.read_text(encoding="utf-8"))
    del data["metric_judges"], data["computed_metrics"]
    file.write_text(json.dumps(data), encoding="utf-8")
    old = Manifest.model_validate(data)
    report = render_markdown(old, run.metrics)
    assert "judge unknown: this run was recorded before knowgap named each metric's judge" in md_row(
        report, "prompt=plain", "accuracy")
    assert "Judges unknown: this run was recorded before knowgap named each metric's judge." in report
    html = render_html([load_run_data(run.path)])
    assert 'id="judges-unknown"' in html and html.count('data-judge="unknown"') == len(run.metrics)
    assert RunsView(runs_root).run(run.run_id)["metrics"][0]["judgement"]["status"] == "unknown"
    shown = knowgap_cli("show", run.run_id, "--runs-dir", str(runs_root), env={"COLUMNS": "220"})
    assert shown.returncode == 0 and "judge unknown" in shown.stdout


def test_a_breakdown_inherits_its_judge_and_a_negative_rate_is_corrected_as_one() -> None:
    weak = card("faithfulness", "f-1", tp=40, fn=10, fp=5, tn=45)  # positive: faithful
    manifest = Manifest(run_id="r", knowgap_version="0", config={"suite": "extract"},  # type: ignore[arg-type]
                        metric_judges={"offline_unfaithful_rate": MetricJudge(judge="faithfulness", version="f-1",
                                                                              counts="negative")},
                        computed_metrics=["errors"])
    judged = Judgements(manifest)
    judged._cards[("faithfulness", "f-1", None)] = weak  # the card this test controls, not a shipped one
    rate = MetricValue.proportion("offline_unfaithful_rate:lang=en", "g", 12, 40)
    j = judged.of(rate)
    assert j.judge is not None and j.judge.judge == "faithfulness"
    faithful = corrected(40 - 12, 40, weak)
    assert faithful is not None and faithful.value is not None and j.corrected is not None
    assert j.corrected.value == pytest.approx(1 - faithful.value)
    assert j.corrected.ci_low == pytest.approx(1 - (faithful.ci_high or 0))
    assert judged.of(MetricValue.count("errors", "g", 0)).status == "computed"
    assert judged.of(MetricValue.count("tokens", "g", 0)).status == "unknown"  # declared by neither


def test_a_clustered_rate_is_corrected_on_its_effective_n() -> None:
    """12 of 40 runs in 10 cases whose runs agree (4 each): the corrected interval is the one of 3 of 10."""
    good = card("faithfulness", "f-1", tp=40, fn=10, fp=5, tn=45)
    manifest = Manifest(run_id="r", knowgap_version="0", config={"suite": "extract"},  # type: ignore[arg-type]
                        metric_judges={"faithfulness_judge_pass_rate": MetricJudge(judge="faithfulness",
                                                                                    version="f-1",
                                                                                    counts="positive")})
    judged = Judgements(manifest)
    judged._cards[("faithfulness", "f-1", None)] = good
    runs = MetricValue.proportion_of("faithfulness_judge_pass_rate", "g", [c < 3 for c in range(10) for _ in range(4)],
                                     [c for c in range(10) for _ in range(4)])
    assert (runs.n, runs.n_cases, runs.n_eff) == (40, 10, 10.0)
    got = judged.of(runs).corrected
    expected = corrected(3, 10, good)
    assert got is not None and expected is not None
    assert (got.value, got.ci_low, got.ci_high) == pytest.approx((expected.value, expected.ci_low, expected.ci_high))
