"""docs/extract.md, "Your own reviews": a CSV of reviews goes from import to report in three commands (import,
inject, run + report). The two ``data`` commands run as the page writes them; the run swaps the embedded model
for a scripted one that always says positive, so the metrics are known from the CSV."""

from __future__ import annotations

import csv
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from knowgap.cli import app
from tests.helpers import REPO, scripted

REVIEWS = REPO / "tests" / "fixtures" / "extract" / "reviews" / "my_reviews.csv"


def doc_commands() -> list[list[str]]:
    """The commands of the walkthrough in docs/extract.md, each split as a shell would."""
    text = (REPO / "docs" / "extract.md").read_text(encoding="utf-8")
    section = text[text.index("## Your own reviews"):]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    return [shlex.split(line)[1:] for line in block.group(1).splitlines() if line.startswith("knowgap ")]


def _cli(args: list[str]) -> str:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.output


def test_a_csv_of_reviews_goes_from_import_to_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(REVIEWS, tmp_path / REVIEWS.name)
    monkeypatch.chdir(tmp_path)
    do_import, do_inject, do_run = doc_commands()
    assert [do_import[:2], do_inject[:2], do_run[:2]] == [["data", "import"], ["data", "inject"], ["run", "extract"]]
    assert "wrote 8 extract cases to cases.jsonl (checked)" in _cli(do_import)
    said = _cli(do_inject)
    assert "14 (case, attack) pairs left out: the attack pushes for the sentiment the review already has" in said
    assert "wrote 44 extract cases to with_attacks.jsonl (checked)" in said
    model = scripted(tmp_path, json.dumps({"summary": "A restaurant review.", "overall_sentiment": "positive",
                                           "contains_conflicting_signals": False}))
    run_args = do_run[:do_run.index("--model")] + ["--model", model, "--runs", "1", "--faithfulness-runs", "0",
                                                    "--no-offline-checker", "--no-coverage", "-q"]
    _cli(run_args)  # every case (no --sample), no judge: the scripted answer is no judge's reply
    run = next((tmp_path / "runs").iterdir())
    report = tmp_path / "report.md"
    _cli(["report", str(run), "--md", "--out", str(report)])
    metrics = {m["name"]: m for m in json.loads((run / "metrics.json").read_text())}  # one configuration
    with REVIEWS.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    labelled = [r for r in rows if r["Overall"]]
    # the model always says positive and not mixed: right on the positive and on the unmixed reviews
    positive = sum(r["Overall"] == "positive" for r in labelled)
    assert metrics["sentiment_accuracy"]["value"] == positive / len(labelled)
    assert metrics["sentiment_accuracy"]["n"] == len(labelled)
    assert metrics["conflict_accuracy"]["value"] == sum(r["Mixed feelings?"] == "0" for r in rows) / len(rows)
    assert metrics["flip_rate"]["value"] == 0.0 and metrics["flip_rate"]["n"] == 36
    accuracy = metrics["sentiment_accuracy"]["value"]
    assert f"| sentiment\\_accuracy | {accuracy:.1%} |" in report.read_text(encoding="utf-8")
