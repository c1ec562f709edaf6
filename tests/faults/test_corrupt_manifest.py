"""A run whose manifest is damaged or lost never vanishes: `knowgap runs` lists it as damaged with the reason, the
commands that read it say what is wrong and how to repair it, and `knowgap repair` rebuilds the manifest from the
run's started.json and trials.jsonl, equal to the one it replaces in everything the run's files still hold.

The runs are made by the real CLI on a ``python:`` function; the damage is real: random bytes over manifest.json, the
file deleted, a run killed (SIGKILL) in the middle and its manifest damaged after.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from knowgap.engine.store import MANIFEST, STARTED, TRIALS
from tests.helpers import knowgap_cli

SYSTEM = '''
import os
import time

def answer(request):
    with open(os.environ["CALLS"], "a") as log:
        log.write("call\\n")
    time.sleep(float(os.environ.get("SLEEP_S", "0")))
    if sum(map(ord, request.messages[-1].content)) % 4 == 0:  # about a quarter of the trials error
        raise ValueError("no clock here")
    return "I don't know."
'''


@pytest.fixture
def system(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    file = tmp_path / "system.py"
    file.write_text(SYSTEM, encoding="utf-8")
    monkeypatch.setenv("CALLS", str(tmp_path / "calls.log"))
    return f"python:{file}:answer"


def calls(tmp_path: Path) -> int:
    log = tmp_path / "calls.log"
    return len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI on the test's runs, which never crashes: an uncaught exception exits 1 with a traceback (knowgap's own
    exits are 0, 2, 3; the errored trials' causes quote the system's own traceback, so that word proves nothing)."""
    proc = knowgap_cli(*args, "--runs-dir", str(tmp_path / "runs"), cwd=tmp_path)
    assert proc.returncode != 1, proc.stderr
    return proc


def one_line(text: str) -> str:
    return " ".join(text.split())


def new_run(tmp_path: Path, system: str) -> Path:
    before = set((tmp_path / "runs").glob("*")) if (tmp_path / "runs").exists() else set()
    proc = cli(tmp_path, "run", "starter", "--model", system, "-q")
    assert proc.returncode in (0, 3), proc.stderr
    [run] = set((tmp_path / "runs").glob("*")) - before
    return run


def manifest_of(run: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run / MANIFEST).read_text(encoding="utf-8"))
    return data


@pytest.mark.slow  # fourteen CLI subprocesses, about 10 s
def test_damaged_and_lost_manifests_are_listed_and_rebuilt(tmp_path: Path, system: str) -> None:
    noisy, lost, intact = (new_run(tmp_path, system) for _ in range(3))
    originals = {run: manifest_of(run) for run in (noisy, lost)}
    assert originals[noisy]["status"] == "finished_with_errors" and originals[noisy]["trials_error"] > 0
    noise = random.Random(35).randbytes(700)
    (noisy / MANIFEST).write_bytes(noise)
    (lost / MANIFEST).unlink()

    listed = cli(tmp_path, "runs")
    assert listed.returncode == 0
    text = one_line(listed.stdout)
    assert intact.name in text
    assert (f"damaged: {noisy.name}: {noisy / MANIFEST}: Invalid JSON" in text
            and f"knowgap repair {noisy.name} rebuilds it" in text)
    assert f"damaged: {lost.name}: {lost / MANIFEST} is missing; knowgap repair {lost.name} rebuilds it" in text

    for command in (["show", noisy.name], ["report", noisy.name, "--md"], ["resume", noisy.name]):
        refused = cli(tmp_path, *command)
        assert refused.returncode == 2, refused.stdout
        [line] = refused.stderr.splitlines()
        assert f"{noisy / MANIFEST}: Invalid JSON" in line and f"knowgap repair {noisy.name} rebuilds it" in line
    refused = cli(tmp_path, "show", lost.name)
    assert refused.returncode == 2 and f"knowgap repair {lost.name} rebuilds it" in refused.stderr

    made = calls(tmp_path)
    for run in (noisy, lost):
        repaired = cli(tmp_path, "repair", run.name)
        assert repaired.returncode == 0, repaired.stderr
        out = one_line(repaired.stdout)
        before = originals[run]
        assert f"status {before['status']}: {before['trials_ok']} ok / {before['trials_error']} errors of 32" in out
        rebuilt = manifest_of(run)
        for field in ("run_id", "knowgap_version", "git_commit", "config", "dataset_hashes", "judges",
                      "metric_judges", "computed_metrics", "models", "status", "started_at", "trials_total",
                      "trials_ok", "trials_error", "usage", "error_causes"):
            assert rebuilt[field] == before[field], field
        assert rebuilt["repaired"].startswith("rebuilt by knowgap repair at ")
    [kept] = noisy.glob(f"{MANIFEST}.damaged-*")
    assert kept.read_bytes() == noise  # the damaged file is kept, not overwritten
    assert calls(tmp_path) == made  # no model was called

    assert "damaged" not in cli(tmp_path, "runs").stdout
    shown = one_line(cli(tmp_path, "show", noisy.name).stdout)
    assert f"trials {originals[noisy]['trials_ok']} ok / {originals[noisy]['trials_error']} errors / 32" in shown
    assert cli(tmp_path, "report", noisy.name, "--md").returncode == 0
    again = cli(tmp_path, "repair", noisy.name)
    assert again.returncode == 0 and "the manifest reads; nothing to repair" in again.stdout


def test_an_interrupted_run_is_rebuilt_as_interrupted_and_resumes(tmp_path: Path, system: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLEEP_S", "0.05")
    runs = tmp_path / "runs"
    proc = subprocess.Popen([sys.executable, "-m", "knowgap", "run", "starter", "--model", system, "--runs-dir",
                             str(runs), "--concurrency", "1", "-q"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and calls(tmp_path) < 12:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    [run] = runs.iterdir()
    lines = (run / TRIALS).read_bytes().split(b"\n")[:-1]
    stored, stored_ok = len(lines), sum(json.loads(line)["status"] == "ok" for line in lines)
    assert 0 < stored < 32
    (run / MANIFEST).write_text('{"run_id": "' + run.name + '", "status": "runn', encoding="utf-8")  # cut short

    repaired = cli(tmp_path, "repair", run.name)
    assert repaired.returncode == 0, repaired.stderr
    assert f"continue with knowgap resume {run.name}" in repaired.stdout
    rebuilt = manifest_of(run)
    assert rebuilt["status"] == "interrupted" and rebuilt["trials_ok"] + rebuilt["trials_error"] == stored
    made = calls(tmp_path)
    resumed = cli(tmp_path, "resume", run.name, "-q")
    assert resumed.returncode == 3, resumed.stdout + resumed.stderr  # the system errors on some questions
    # the trials stored ok are not run again (errored ones are; a call that finished as the run was killed may be
    # answered by the cache)
    assert 32 - stored_ok - 1 <= calls(tmp_path) - made <= 32 - stored_ok
    final = manifest_of(run)
    assert final["trials_ok"] + final["trials_error"] == 32 and final["status"] == "finished_with_errors"


def test_a_run_without_its_started_json_cannot_be_rebuilt(tmp_path: Path, system: str) -> None:
    run = new_run(tmp_path, system)
    (run / STARTED).unlink(missing_ok=True)  # as a run made before knowgap wrote it
    (run / MANIFEST).write_text("{", encoding="utf-8")
    listed = one_line(cli(tmp_path, "runs").stdout)
    assert f"damaged: {run.name}" in listed and "it cannot be rebuilt (the run has no started.json)" in listed
    refused = cli(tmp_path, "repair", run.name)
    assert refused.returncode == 2
    assert f"cannot rebuild the manifest of {run.name}: the run has no {STARTED}" in refused.stderr
    assert str(run / TRIALS) in one_line(refused.stderr)
    assert (run / MANIFEST).read_text(encoding="utf-8") == "{"  # left as it was
