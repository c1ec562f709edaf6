"""``knowgap run SUITE --until decided --thresholds gate.yaml`` end to end through the real CLI, and the eval file's
``until``: a run stopped when its gate is decided exits as its gate says, its report shows each sequence beside
the fixed-n interval, ``knowgap gate`` reads the sequence, and ``knowgap resume RUN --until all`` continues it to
every case. The system is a real ``python:`` function that abstains on every question, so over_abstention (the
answerable questions it declines) is 1.0 on every case and fails ``<= 0.5`` long before the 16th case."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowgap.errors import InputError
from knowgap.evaluation.eval_file import load_eval, run_eval
from tests.helpers import knowgap_cli

SYSTEM = '''from knowgap.models.types import ChatRequest


def reply(request: ChatRequest) -> str:
    return "I don't know: the context does not say."
'''


@pytest.fixture
def system(tmp_path: Path) -> str:
    path = tmp_path / "abstainer.py"
    path.write_text(SYSTEM, encoding="utf-8")
    return f"python:{path}:reply"


def _manifest(runs: Path) -> dict[str, Any]:
    [folder] = [p for p in runs.iterdir() if p.is_dir()]
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return,unused-ignore]


@pytest.mark.slow
def test_a_run_stops_when_its_gate_is_decided_and_resumes_to_every_case(tmp_path: Path, system: str) -> None:
    gate = tmp_path / "gate.yaml"
    gate.write_text("thresholds:\n  - over_abstention <= 0.5\n", encoding="utf-8")
    runs = tmp_path / "runs"
    done = knowgap_cli("run", "starter", "-m", system, "--runs-dir", str(runs), "--until", "decided",
                       "--thresholds", str(gate), "--concurrency", "1", "--no-cache", "-q")
    assert done.returncode == 1, done.stderr
    manifest = _manifest(runs)
    record = manifest["sequential"]
    assert manifest["status"] == "stopped" and record["reason"] == "decided"
    assert record["units_run"] < record["units_total"] == 16
    assert f"stopped after {record['units_run']} of 16 cases" in done.stdout
    assert "fail      over_abstention <= 0.5" in done.stdout
    assert record["rule"]["order_seed"] == 0 and record["rule"]["alpha"] == 0.05
    run_id = manifest["run_id"]
    report = (runs / run_id / "report.md").read_text(encoding="utf-8")
    assert "## Stopping rule" in report and f"knowgap resume {run_id} --until all" in report
    assert "Each end of a sequence is a one-sided bound" in report and "wrong with probability at most 0.05" in report
    html = (runs / run_id / "report.html").read_text(encoding="utf-8")
    assert html.count('class="chart sequence-chart"') == len(record["sequences"]) == 2
    assert 'class="fixed-n"' in html

    gated = knowgap_cli("gate", run_id, "--runs-dir", str(runs), "--thresholds", str(gate))
    assert gated.returncode == 1, gated.stdout + gated.stderr
    assert "sequence [" in gated.stdout and "violates <= 0.5" in gated.stdout
    other = tmp_path / "other.yaml"
    other.write_text("thresholds:\n  - abstention_unanswerable >= 0.5\n", encoding="utf-8")
    unsequenced = knowgap_cli("gate", run_id, "--runs-dir", str(runs), "--thresholds", str(other))
    assert unsequenced.returncode == 1 and "--until all" in unsequenced.stdout

    shown = knowgap_cli("show", run_id, "--runs-dir", str(runs))
    assert "stopped after" in shown.stdout and "continue to every case" in shown.stdout

    resumed = knowgap_cli("resume", run_id, "--runs-dir", str(runs), "--until", "all", "-q")
    assert resumed.returncode == 1, resumed.stderr  # the full set fails the gate too
    manifest = _manifest(runs)
    assert manifest["status"] == "finished" and manifest["trials_ok"] == 32
    assert manifest["sequential"]["reason"] == "every case ran"
    assert "model calls made now: " + str(32 - record["trials_run"]) in resumed.stdout


def test_run_refuses_a_rule_it_cannot_keep(tmp_path: Path, system: str) -> None:
    gate = tmp_path / "gate.yaml"
    gate.write_text("thresholds:\n  - {metric: over_abstention, op: '<=', value: 0.5, use: ci_high}\n",
                    encoding="utf-8")
    runs = tmp_path / "runs"
    bound = knowgap_cli("run", "starter", "-m", system, "--runs-dir", str(runs), "--until", "decided",
                        "--thresholds", str(gate))
    assert bound.returncode == 2 and "not a bound of its interval (use: ci_high)" in bound.stderr
    gate_alone = knowgap_cli("run", "starter", "-m", system, "--runs-dir", str(runs), "--thresholds", str(gate))
    assert gate_alone.returncode == 2 and "give --until decided too" in gate_alone.stderr
    alone = knowgap_cli("run", "starter", "-m", system, "--runs-dir", str(runs), "--max-calls", "5")
    assert alone.returncode == 2 and "give --until decided" in alone.stderr
    bare = knowgap_cli("run", "starter", "-m", system, "--runs-dir", str(runs), "--until", "decided")
    assert bare.returncode == 2 and "--until decided needs thresholds" in bare.stderr
    gate.write_text("thresholds:\n  - over_abstension <= 0.5\n", encoding="utf-8")
    typo = knowgap_cli("run", "starter", "-m", system, "--runs-dir", str(runs), "--until", "decided",
                       "--thresholds", str(gate))
    assert typo.returncode == 2
    assert "produces no metric 'over_abstension' (did you mean 'over_abstention'?)" in typo.stderr
    assert not runs.exists() or not any(runs.iterdir())


EVAL = """\
name: until
models: {{target: "{system}"}}
until: {until}
concurrency: 1
use_cache: false
suites:
  - suite: starter
thresholds:
  - over_abstention <= 0.5
report: {{html: null, markdown: null}}
"""


def test_an_eval_file_stops_each_entry_when_its_gate_is_decided(tmp_path: Path, system: str) -> None:
    file = tmp_path / "eval.yaml"
    file.write_text(EVAL.format(system=system, until="decided"), encoding="utf-8")
    result = run_eval(file, runs_root=tmp_path / "runs", progress=False)
    [(_, run)] = result.runs
    assert run.status == "stopped" and run.manifest.sequential.reason == "decided"
    assert result.gate is not None and not result.passed
    assert all("sequence [" in c.message for c in result.gate.checks)


def test_an_eval_file_with_until_decided_and_no_threshold_is_refused(tmp_path: Path, system: str) -> None:
    file = tmp_path / "eval.yaml"
    file.write_text(EVAL.format(system=system, until="decided").replace(
        "thresholds:\n  - over_abstention <= 0.5\n", ""), encoding="utf-8")
    with pytest.raises(InputError, match="no threshold applies to entry 'starter'"):
        load_eval(file)
    file.write_text(EVAL.format(system=system, until="later"), encoding="utf-8")
    with pytest.raises(InputError, match="expected decided, all, or width=W"):
        load_eval(file)


@pytest.mark.slow
def test_a_candidate_run_stops_when_its_difference_from_main_is_decided(tmp_path: Path, system: str) -> None:
    """Main's run abstains on every question; the candidate answers every one ('Paris'), so it declines no
    answerable question: over_abstention drops by 1.0 on every case, decided lower (better: a rate of bad
    behaviour) long before the end."""
    runs = tmp_path / "runs"
    main = knowgap_cli("run", "starter", "-m", system, "--runs-dir", str(runs), "--no-cache", "-q")
    assert main.returncode == 0, main.stderr
    [baseline] = [p.name for p in runs.iterdir()]
    answerer = tmp_path / "answerer.py"
    answerer.write_text("def reply(request):\n    return 'Paris.'\n", encoding="utf-8")
    done = knowgap_cli("run", "starter", "-m", f"python:{answerer}:reply", "--runs-dir", str(runs), "--no-cache",
                       "-q", "--until", "decided", "--against", baseline, "--compare", "over_abstention",
                       "--concurrency", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    [candidate] = [p for p in runs.iterdir() if p.name != baseline]
    record = json.loads((candidate / "manifest.json").read_text(encoding="utf-8"))["sequential"]
    assert record["reason"] == "decided" and record["units_run"] < 16
    diffs = [s for s in record["sequences"] if s["kind"] == "difference"]
    assert [(s["comparison"], s["decision"]) for s in diffs] == [("lower", "pass")] * 2
    assert all(s["high"] < 0 for s in diffs)
    assert "pass      over_abstention against" in done.stdout
    html = (candidate / "report.html").read_text(encoding="utf-8")
    assert html.count('class="chart sequence-chart"') == 2
