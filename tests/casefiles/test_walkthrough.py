"""docs/extract.md, "Your own reviews": a CSV of reviews goes from import to report in three commands (import,
inject, run + report), here through the real command line with a scripted model that always says positive."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from typer.testing import CliRunner

from knowgap.cli import app
from tests.helpers import REPO, scripted

REVIEWS = REPO / "tests" / "fixtures" / "extract" / "reviews" / "my_reviews.csv"


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_a_csv_of_reviews_goes_from_import_to_report(tmp_path: Path) -> None:
    cases, adversarial, runs = tmp_path / "cases.jsonl", tmp_path / "adversarial.jsonl", tmp_path / "runs"
    said = _cli("data", "import", "extract", str(REVIEWS), "--map", "Review text=review",
                "--map", "Overall=expected_sentiment", "--map", "Mixed feelings?=expected_conflicting",
                "--ignore", "Aspects (MAMS)", "--set", "kind=normal", "--set", "lang=en", "--out", str(cases))
    assert f"wrote 8 extract cases to {cases} (checked)" in said
    said = _cli("data", "inject", "extract", str(cases), "--types", "sentiment_override", "--positions", "start,end",
                "--out", str(adversarial))
    assert "left out: the attack pushes for the sentiment the review already has" in said
    model = scripted(tmp_path, json.dumps({"summary": "A restaurant review.", "overall_sentiment": "positive",
                                           "contains_conflicting_signals": False}))
    _cli("run", "extract", "--data", str(adversarial), "--model", model, "--runs", "1", "--faithfulness-runs", "0",
         "--no-offline-checker", "--no-coverage", "--runs-dir", str(runs), "-q")
    run = next(runs.iterdir())
    report = tmp_path / "report.md"
    _cli("report", str(run), "--md", "--out", str(report))
    metrics = {m["name"]: m for m in json.loads((run / "metrics.json").read_text())}  # one configuration
    with REVIEWS.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    labelled = [r for r in rows if r["Overall"]]
    # the model always says positive and not mixed: right on the positive and on the unmixed reviews
    positive = sum(r["Overall"] == "positive" for r in labelled)
    assert metrics["sentiment_accuracy"]["value"] == positive / len(labelled)
    assert metrics["sentiment_accuracy"]["n"] == len(labelled)
    assert metrics["conflict_accuracy"]["value"] == sum(r["Mixed feelings?"] == "0" for r in rows) / len(rows)
    adversarial_cases = sum(1 for line in adversarial.read_text().splitlines() if '"adversarial"' in line)
    assert metrics["flip_rate"]["value"] == 0.0 and metrics["flip_rate"]["n"] == adversarial_cases
    accuracy = metrics["sentiment_accuracy"]["value"]
    assert f"| sentiment\\_accuracy | {accuracy:.1%} |" in report.read_text(encoding="utf-8")
