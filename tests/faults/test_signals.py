"""SIGTERM (what CI runners, ``timeout`` and ``docker stop`` send) stops a run as Ctrl-C does (issue 35, item 7):
status ``interrupted``, the resume command printed, exit 130, the finished trials kept, and a resume that makes
no call again but the one in flight at the signal.

The real CLI in a subprocess, on a real ``python:`` system whose third call blocks (in its worker thread, which
the run must not wait for); real signals sent with ``os.kill``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import knowgap_cli

SYSTEM = """import os, pathlib, time

def answer(request):
    calls = pathlib.Path(os.environ["CALLS"])
    number = len(list(calls.iterdir()))
    (calls / f"{number:03d}").write_text(request.messages[-1].content, encoding="utf-8")
    if os.environ.get("BLOCK_FROM") and number >= int(os.environ["BLOCK_FROM"]):
        time.sleep(3600)
    return "I do not know."
"""
TRIALS = 8  # starter: 4 cases x 2 prompts
WAIT_S = 60.0


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell does for a job started with `&`


def _default_sigint() -> None:
    # a child inherits an ignored SIGINT: where pytest itself was started with `&` (a background CI job), the
    # "default" cases would otherwise run with SIGINT ignored and wait for the blocked call forever
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(tmp_path: Path, system: Path, *, ignore_sigint: bool = False) -> subprocess.Popen[str]:
    calls = tmp_path / "calls"
    calls.mkdir()
    env = {**os.environ, "CALLS": str(calls), "BLOCK_FROM": "2"}
    return subprocess.Popen([sys.executable, "-m", "knowgap", "run", "starter", "--model", f"python:{system}:answer",
                             "--sample", "4", "--concurrency", "1", "--runs-dir", str(tmp_path / "runs"), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=_ignore_sigint if ignore_sigint else _default_sigint)


def _wait_for_calls(calls: Path, n: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + WAIT_S
    while len(list(calls.iterdir())) < n:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"fewer than {n} calls in {WAIT_S}s"
        time.sleep(0.05)


def _manifest(runs: Path) -> dict[str, Any]:
    (path,) = runs.glob("*/manifest.json")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _other_thread(pid: int) -> int:
    """The id of one of the process's threads other than its main thread."""
    if not sys.platform.startswith("linux"):
        pytest.skip("lists a process's threads in /proc")
    threads = sorted(int(tid) for tid in os.listdir(f"/proc/{pid}/task") if int(tid) != pid)
    assert threads, "the run has a thread besides the main one (the blocked call's)"
    return threads[-1]


@pytest.mark.parametrize(("sig", "ignore_sigint", "taker"), [
    (signal.SIGTERM, False, "main"),
    (signal.SIGINT, False, "main"),
    (signal.SIGTERM, True, "main"),
    (signal.SIGINT, False, "other"),
    (signal.SIGTERM, False, "other"),
], ids=["sigterm", "sigint", "sigterm-with-sigint-ignored", "sigint-taken-by-another-thread",
        "sigterm-taken-by-another-thread"])
def test_a_stop_signal_interrupts_the_run_and_resume_finishes_it(tmp_path: Path, sig: signal.Signals,
                                                                 ignore_sigint: bool, taker: str) -> None:
    """``taker``: the thread the kernel hands the signal to. A signal sent to a process goes to any of its threads
    that does not block it; ``kill`` of a thread's id still signals the whole process but offers the signal to that
    thread first (Linux), which is how a CI runner's or a user's signal can land on a worker thread. Before the
    run's loop watched a wakeup fd, such a run hung in ``select`` (CI, 2026-12-05: no exit within 60 s)."""
    system = tmp_path / "system.py"
    system.write_text(SYSTEM, encoding="utf-8")
    runs, calls = tmp_path / "runs", tmp_path / "calls"
    proc = _start(tmp_path, system, ignore_sigint=ignore_sigint)
    try:
        _wait_for_calls(calls, 3, proc)  # two trials answered and stored (or about to be), the third call blocks
        os.kill(proc.pid if taker == "main" else _other_thread(proc.pid), sig)
        stdout, stderr = proc.communicate(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    manifest = _manifest(runs)
    run_id = manifest["run_id"]
    assert proc.returncode == 130, (proc.returncode, stdout, stderr)
    assert manifest["status"] == "interrupted", manifest["status"]
    assert f"knowgap resume {run_id}" in stderr, stderr
    assert manifest["trials_ok"] == 2 and manifest["trials_error"] == 0, "the finished trials are kept"
    trials = (runs / run_id / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(trials) == 2

    resumed = knowgap_cli("resume", run_id, "--runs-dir", str(runs), "-q", env={"CALLS": str(calls)},
                          timeout=WAIT_S)
    assert resumed.returncode == 0, resumed.stderr
    assert "model calls made now: 6" in resumed.stdout, "no call made again but the one in flight"
    assert _manifest(runs)["status"] == "finished"
    assert len(list(calls.iterdir())) == 3 + 6
