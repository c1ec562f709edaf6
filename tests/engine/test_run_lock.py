"""Run state you can trust: one writer per run (a second resume stops before any model call, naming the
holder), and a run whose writer died (SIGKILL) shows as interrupted, not as running forever.

Real processes: the CLI runs against the fake OpenAI-compatible server, which holds every request after its
K-th answer, so the first writer is alive and stuck while the second one tries.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

import knowgap
from knowgap.engine.records import Manifest, TrialRecord
from knowgap.engine.store import MANIFEST, TRIALS, RunStore
from knowgap.web.data import RunsView
from tests.fakes.fake_openai_server import fake_server
from tests.helpers import knowgap_cli, scripted

pytestmark = [pytest.mark.server]

PAUSE_AFTER = 6


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "KNOWGAP_HOME": str(home)}
    env.pop("KNOWGAP_RUNS", None)
    return env


def _wait(what: str, check: Callable[[], bool], proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if check():
            return
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the run exited ({proc.returncode}) before {what}")
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _settled(count: Callable[[], int], proc: subprocess.Popen[bytes], quiet: float = 1.0) -> int:
    """``count()`` once it has not changed for ``quiet`` seconds: every worker of the stuck run has sent its call
    (under load the last ones arrive after the first is held)."""
    last, since = count(), time.monotonic()
    deadline = since + 120
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = count()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return now
        if proc.poll() is not None:
            raise AssertionError(f"the run exited ({proc.returncode}) while its calls settled")
    raise AssertionError("the stuck run's calls did not settle")


def _lines(file: Path) -> int:
    return file.read_bytes().count(b"\n") if file.exists() else 0


def _run_dir(runs: Path) -> Path | None:
    found = [p for p in runs.iterdir() if (p / MANIFEST).exists()] if runs.exists() else []
    return found[0] if found else None


def _start_stuck_run(spec: str, runs: Path, home: Path, cwd: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """A real run, alive, holding its run folder, waiting on held calls after PAUSE_AFTER stored trials."""
    proc = subprocess.Popen([sys.executable, "-m", "knowgap", "run", "starter", "--model", spec, "--concurrency",
                             "2", "--runs-dir", str(runs), "-q"], env=_env(home), cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait("the run folder appears", lambda: _run_dir(runs) is not None, proc)
    run_dir = _run_dir(runs)
    assert run_dir is not None
    _wait(f"{PAUSE_AFTER} trials are stored", lambda: _lines(run_dir / TRIALS) >= PAUSE_AFTER, proc)
    return proc, run_dir


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def test_second_writer_stops_naming_the_holder_and_calls_no_model(tmp_path: Path, kg_home: Path) -> None:
    runs = tmp_path / "runs"
    with fake_server(tmp_path, "--pause-after", str(PAUSE_AFTER)) as srv:
        first, run_dir = _start_stuck_run(srv.spec, runs, kg_home, tmp_path)
        try:
            _wait("calls are held", lambda: any(e["outcome"] == "held" for e in srv.entries()), first)
            requests_before = _settled(lambda: len(srv.entries()), first)
            for args in (["resume", run_dir.name], ["run", "starter", "--resume", run_dir.name]):
                second = knowgap_cli(*args, "--runs-dir", str(runs), "-q", env={"KNOWGAP_HOME": str(kg_home)},
                                     cwd=tmp_path, timeout=120)
                assert second.returncode == 2, second.stdout + second.stderr
                assert "Traceback" not in second.stderr
                assert f"is being written by pid {first.pid}" in second.stderr, second.stderr
            time.sleep(0.3)
            assert len(srv.entries()) == requests_before, "the second writer called the model"
            assert _lines(run_dir / TRIALS) == PAUSE_AFTER, "the second writer wrote trials"
            assert first.poll() is None
        finally:
            _kill(first)
        srv.control("release", mode="serve")
        # the lock died with its holder: resume now runs and finishes, each trial once
        done = knowgap_cli("resume", run_dir.name, "--runs-dir", str(runs), "-q", env={"KNOWGAP_HOME": str(kg_home)},
                           cwd=tmp_path, timeout=300)
        assert done.returncode == 0, done.stderr
    records = [TrialRecord.model_validate_json(line) for line in (run_dir / TRIALS).read_bytes().splitlines()]
    ids = Counter(r.trial_id for r in records)
    assert len(ids) == 32 and set(ids.values()) == {1}
    assert RunStore(run_dir).current_manifest().status == "finished"


def test_a_killed_run_shows_interrupted_not_running(tmp_path: Path, kg_home: Path) -> None:
    runs = tmp_path / "runs"
    env = {"KNOWGAP_HOME": str(kg_home)}
    with fake_server(tmp_path, "--pause-after", str(PAUSE_AFTER)) as srv:
        first, run_dir = _start_stuck_run(srv.spec, runs, kg_home, tmp_path)
        try:
            # alive: running, in the CLI and the web app
            listed = knowgap_cli("runs", "--runs-dir", str(runs), env=env, cwd=tmp_path)
            assert "running" in listed.stdout and "interrupted" not in listed.stdout
            assert RunsView(runs).runs()[0]["status"] == "running"
        finally:
            _kill(first)
        srv.control("release", mode="drop")

    raw = Manifest.model_validate_json((run_dir / MANIFEST).read_text(encoding="utf-8"))
    assert raw.status == "running", "a SIGKILLed run never wrote its end"
    listed = knowgap_cli("runs", "--runs-dir", str(runs), env=env, cwd=tmp_path)
    assert "interrupted — resume with knowgap" in listed.stdout, listed.stdout  # the table may wrap the rest
    assert f"{PAUSE_AFTER}/32" in listed.stdout, "the trials stored before the kill are counted"
    shown = knowgap_cli("show", run_dir.name, "--runs-dir", str(runs), env=env, cwd=tmp_path)
    assert f"interrupted — resume with knowgap resume {run_dir.name}" in shown.stdout, shown.stdout
    [row] = RunsView(runs).runs()
    assert row["status"] == "interrupted"
    assert row["status_text"] == f"interrupted — resume with knowgap resume {run_dir.name}"
    assert RunsView(runs).run(run_dir.name)["manifest"]["status"] == "interrupted"
    assert knowgap.list_runs(runs)[0].status == "interrupted"


def test_a_process_holding_the_lock_keeps_the_python_api_out(tmp_path: Path, runs_root: Path) -> None:
    result = knowgap.run("starter", models={"target": scripted(tmp_path, "x")}, runs_root=runs_root)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from knowgap.engine.store import RunStore; "
        f"s = RunStore(Path({str(result.path)!r})); s.lock(); print('locked', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"locked"
        with pytest.raises(knowgap.KnowgapError, match=f"being written by pid {holder.pid} on "):
            knowgap.resume(result.run_id, runs_root=runs_root)
    finally:
        holder.kill()
        holder.wait()
    assert knowgap.resume(result.run_id, runs_root=runs_root).ok  # free again once the holder is gone
