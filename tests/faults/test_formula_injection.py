"""Formula injection in exports: a model's reply or a case id that begins with ``=``, ``+``, ``-``, ``@``, a tab or
a carriage return is a formula to a spreadsheet that opens ``knowgap report RUN --csv``. Each such text cell is
written with a single quote before it (OWASP); numbers stay numbers; Parquet, read by programs, keeps values."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

import pytest

import knowgap
from knowgap.engine.records import MetricValue, RunConfig, TrialRecord
from knowgap.engine.runner import start_run
from knowgap.engine.suite import Case, Configuration, Suite, Trial, TrialContext, TrialResult
from knowgap.models.types import ChatRequest, Message
from knowgap.report import load_run_data, render_csv, write_parquet
from tests.fakes.models import Echo
from tests.helpers import knowgap_cli, write_jsonl

HOSTILE = {  # question key -> what the system under test answers
    "q1": '=HYPERLINK("http://x","y")',
    "q2": "+1+1",
    "q3": "-2+3",
    "q4": "@SUM(A1)",
    "q5": "\tx",
    "q6": "\rx",
    "q7": "The library closes at 9 pm.",  # harmless: written as it is
}
EQUALS_ID = "=1+cmd|' /C calc'!A0"

TARGET = '''\
import json
HOSTILE = json.loads({hostile!r})

def answer(request):
    question = request.messages[-1].content
    return next(reply for key, reply in HOSTILE.items() if key + "?" in question)
'''


@pytest.fixture
def hostile_csv(tmp_path: Path, runs_root: Path) -> tuple[Path, knowgap.RunResult]:
    """A real run whose system answers formulas (one case's id is one too), exported by the real CLI."""
    cases = write_jsonl(tmp_path / "cases.jsonl", [
        {"id": EQUALS_ID if key == "q1" else f"case-{key}", "lang": "en", "context": "The library opens at 9 am.",
         "question": f"What does {key}? mean", "answerable": False} for key in HOSTILE])
    target = tmp_path / "target.py"
    target.write_text(TARGET.format(hostile=json.dumps(HOSTILE)), encoding="utf-8")
    run = knowgap.run("starter", models={"target": f"python:{target}:answer"}, runs_root=runs_root,
                      options={"data": str(cases), "prompts": ["plain"]}, progress=False)
    assert run.manifest.trials_ok == len(HOSTILE)
    out = tmp_path / "trials.csv"
    proc = knowgap_cli("report", run.run_id, "--runs-dir", str(runs_root), "--csv", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out, run


def test_model_replies_and_case_ids_are_text_in_the_csv(hostile_csv: tuple[Path, knowgap.RunResult]) -> None:
    out, _ = hostile_csv
    with out.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    by_case = {r["case_id"]: r for r in rows}
    assert set(by_case) == {"'" + EQUALS_ID, *(f"case-{k}" for k in HOSTILE if k != "q1")}
    replies = {("q1" if case == "'" + EQUALS_ID else case.removeprefix("case-")): r["response"]
               for case, r in by_case.items()}
    for key, reply in HOSTILE.items():
        expected = reply if key == "q7" else "'" + reply
        assert replies[key] == expected, key
    hyperlink = by_case["'" + EQUALS_ID]
    assert hyperlink["trial_id"] == f"'{EQUALS_ID}|prompt=plain|r0"
    for row in rows:  # no cell of any column starts a formula; numbers are written as numbers
        assert not [c for c, v in row.items() if v[:1] in ("=", "+", "-", "@", "\t", "\r")], row
        assert row["repeat"] == "0" and float(row["duration_s"]) >= 0 and row["status"] == "ok"


def test_parquet_keeps_the_values_as_they_are(hostile_csv: tuple[Path, knowgap.RunResult], tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow not installed (pip install 'knowgap[parquet]')")
    _, run = hostile_csv
    rows = pq.read_table(write_parquet([load_run_data(run.path)], tmp_path / "t.parquet")).to_pylist()
    assert {r["case_id"] for r in rows} == {EQUALS_ID, *(f"case-{k}" for k in HOSTILE if k != "q1")}
    assert sorted(r["response"] for r in rows) == sorted(HOSTILE.values())


class Signed(Suite):
    """A suite whose trials store a number that is often negative (the reply's length minus 20), beside the reply."""

    name: ClassVar[str] = "signed-unregistered"
    description: ClassVar[str] = "three cases, one configuration"

    def cases(self) -> list[Case]:
        return [Case(id="-1"), Case(id="ab"), Case(id="@home")]

    def configurations(self) -> list[Configuration]:
        return [Configuration(id="only")]

    async def run_trial(self, trial: Trial, ctx: TrialContext) -> TrialResult:
        response = await ctx.generate("target", ChatRequest(messages=[Message(role="user", content=trial.case.id)]))
        return TrialResult(output={"response": response.text, "note": trial.case.id},
                           scores={"delta": len(response.text) - 20, "ratio": -0.25})

    def metrics(self, records: Iterable[TrialRecord]) -> list[MetricValue]:
        return []


def test_negative_numbers_stay_numbers(runs_root: Path) -> None:
    run = start_run(RunConfig(suite=Signed.name, models={"target": Echo.spec}), Signed, runs_root=runs_root,
                    providers={Echo.spec: Echo()}, progress=False)
    rows = {r["trial_id"]: r for r in csv.DictReader(io.StringIO(render_csv([load_run_data(run.path)])))}
    minus = rows["'-1|only|r0"]  # a case id is text, even one that reads as a number
    assert (minus["case_id"], minus["output.note"], minus["response"]) == ("'-1", "'-1", "echo: -1")
    assert (minus["score.delta"], minus["score.ratio"]) == ("-12", "-0.25")  # numbers: no quote
    assert rows["'@home|only|r0"]["case_id"] == "'@home" and rows["ab|only|r0"]["case_id"] == "ab"
