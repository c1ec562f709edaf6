"""Crash and resume end to end: SIGKILL the real CLI mid-run, resume it, compare with an uninterrupted run.

The model is the fake OpenAI-compatible server (tests/fakes), whose answers depend only on the request, so
a resumed run must end with exactly the trials and scores of an uninterrupted one. The server logs every
answer it sent, which shows whether a call was made twice.

A SIGKILL at an arbitrary moment can land after the server sent an answer but before the client stored it
in the response cache; that call is then, unavoidably, made again on resume. So the strict "no call made
twice" check kills the client at a point where no answer is on the wire (the server holds every request
after its K-th answer), and the kill-at-any-moment test checks what the engine does promise: no call whose
answer reached the cache is made again, and only calls in flight at the kill may be.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from knowgap.engine.cache import cache_key
from knowgap.engine.records import Manifest, TrialRecord
from knowgap.engine.store import MANIFEST, TRIALS
from knowgap.models.openai_http import OpenAIChatModel
from knowgap.models.types import ChatRequest
from tests.fakes.fake_openai_server import FakeServer, fake_server, fingerprint_body
from tests.helpers import knowgap_cli

pytestmark = [pytest.mark.server, pytest.mark.slow]

STARTER_TRIALS = 32
CONCURRENCY = 2  # few trials in flight, so a run with --delay takes a few seconds
PAUSE_AFTER = 12
WAIT_S = 120.0


# helpers -----------------------------------------------------------------------------------------


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "KNOWGAP_HOME": str(home)}
    env.pop("KNOWGAP_RUNS", None)
    return env


def _run_args(spec: str, runs: Path) -> list[str]:
    return ["run", "starter", "--model", spec, "--concurrency", str(CONCURRENCY), "--runs-dir", str(runs),
            "-q"]


def _start_cli(args: list[str], home: Path, cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "knowgap", *args], env=_env(home), cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait_until(what: str, check: Callable[[], bool], proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if check():
            return
        if proc is not None and proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise AssertionError(f"the run exited ({proc.returncode}) before {what}: {err[-2000:]}")
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _complete_lines(file: Path) -> list[bytes]:
    """The finished (newline-terminated) lines of a file being appended to."""
    if not file.exists():
        return []
    data = file.read_bytes()
    return data[:data.rfind(b"\n") + 1].splitlines()


def _run_dir(runs: Path) -> Path | None:
    found = [p for p in runs.iterdir() if (p / MANIFEST).exists()] if runs.exists() else []
    assert len(found) <= 1
    return found[0] if found else None


def _kill(proc: subprocess.Popen[bytes]) -> None:
    assert proc.poll() is None, "the run finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    if proc.stderr:
        proc.stderr.close()


def _manifest(run_dir: Path) -> Manifest:
    return Manifest.model_validate_json((run_dir / MANIFEST).read_text(encoding="utf-8"))


def _records(run_dir: Path) -> list[TrialRecord]:
    """Every line of trials.jsonl, which must all be whole records (no torn line left)."""
    data = (run_dir / TRIALS).read_bytes()
    assert data.endswith(b"\n")
    return [TrialRecord.model_validate_json(line) for line in data.splitlines()]


def _http_fingerprint(request: ChatRequest) -> str:
    """The fingerprint the fake server logs for the HTTP body knowgap sends for ``request``."""
    model = OpenAIChatModel("openai-compat:fake@http://unused/v1", "fake", "http://unused/v1", api_key=None,
                            compat=True)
    return fingerprint_body(model.payload(request))


def _cached_keys(home: Path) -> set[str]:
    db = sqlite3.connect(f"file:{home / 'cache.sqlite'}?mode=ro", uri=True)
    try:
        return {row[0] for row in db.execute("SELECT key FROM responses")}
    finally:
        db.close()


def _outcome(records: list[TrialRecord]) -> dict[str, tuple[dict[str, Any], Any]]:
    return {r.trial_id: (r.scores, r.output.get("response")) for r in records}


def _check_resumed(run_dir: Path, reference: dict[str, tuple[dict[str, Any], Any]]) -> list[TrialRecord]:
    records = _records(run_dir)
    ids = Counter(r.trial_id for r in records)
    assert len(records) == STARTER_TRIALS and set(ids.values()) == {1}, ids.most_common(3)
    assert all(r.status == "ok" for r in records), [r.error for r in records if r.status != "ok"]
    assert _outcome(records) == reference, "the resumed run differs from the uninterrupted one"
    manifest = _manifest(run_dir)
    assert manifest.status == "finished"
    assert len(manifest.resumed_at) == 1
    assert manifest.trials_total == manifest.trials_ok == STARTER_TRIALS and manifest.trials_error == 0
    assert (run_dir / "metrics.json").exists()
    return records


def _kill_when_quiescent(srv: FakeServer, runs: Path, home: Path, cwd: Path) -> Path:
    """Start the run on a server started with --pause-after PAUSE_AFTER and SIGKILL it once the server
    has answered PAUSE_AFTER calls, the client has stored their trials and is waiting on held calls."""
    proc = _start_cli(_run_args(srv.spec, runs), home, cwd)
    try:
        _wait_until("the run folder appears", lambda: _run_dir(runs) is not None, proc)
        run_dir = _run_dir(runs)
        assert run_dir is not None
        _wait_until(f"{PAUSE_AFTER} trials are stored",
                    lambda: len(_complete_lines(run_dir / TRIALS)) >= PAUSE_AFTER, proc)
        _wait_until("calls are in flight", lambda: any(e["outcome"] == "held" for e in srv.entries()), proc)
        _kill(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    srv.control("release", mode="drop")  # the held calls die with the client, unanswered
    _wait_until("held calls are dropped", lambda: Counter(e["outcome"] for e in srv.entries())["held"]
                == Counter(e["outcome"] for e in srv.entries())["dropped"])
    assert len(_complete_lines(run_dir / TRIALS)) == PAUSE_AFTER
    assert _manifest(run_dir).status == "running", "a killed run never wrote its end"
    return run_dir


# the uninterrupted reference run -----------------------------------------------------------------


@dataclass
class Reference:
    outcome: dict[str, tuple[dict[str, Any], Any]]
    """Scores and response per trial id."""
    lines: dict[str, bytes]
    """The stored trials.jsonl line per trial id."""


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    """The trials of an uninterrupted run (own server, own KNOWGAP_HOME, own runs folder)."""
    base = tmp_path_factory.mktemp("reference")
    runs, home = base / "runs", base / "home"
    with fake_server(base, name="reference") as srv:
        proc = knowgap_cli(*_run_args(srv.spec, runs), env={"KNOWGAP_HOME": str(home)}, cwd=base, timeout=300)
        assert proc.returncode == 0, proc.stderr
        served = srv.served_ok()
    run_dir = _run_dir(runs)
    assert run_dir is not None
    records = _records(run_dir)
    assert len(records) == STARTER_TRIALS and all(r.status == "ok" for r in records)
    assert len(served) == STARTER_TRIALS and set(served.values()) == {1}
    outcome = _outcome(records)
    assert len({scores["abstained"] for scores, _ in outcome.values()}) == 2, "the replies should vary"
    lines = {r.trial_id: line for r, line in zip(records, (run_dir / TRIALS).read_bytes().splitlines(),
                                                  strict=True)}
    return Reference(outcome, lines)


# tests ---------------------------------------------------------------------------------------------


def test_sigkill_then_run_resume_repeats_no_call(tmp_path: Path, kg_home: Path,
                                                 reference: Reference) -> None:
    runs = tmp_path / "runs"
    with fake_server(tmp_path, "--delay", "0.15", "--pause-after", str(PAUSE_AFTER)) as srv:
        run_dir = _kill_when_quiescent(srv, runs, kg_home, tmp_path)
        before = {TrialRecord.model_validate_json(line).trial_id
                  for line in _complete_lines(run_dir / TRIALS)}

        proc = knowgap_cli("run", "starter", "--resume", run_dir.name, "--runs-dir", str(runs), "-q",
                           env={"KNOWGAP_HOME": str(kg_home)}, cwd=tmp_path, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert f"trials: {STARTER_TRIALS} ok, 0 errors of {STARTER_TRIALS}" in proc.stdout
        assert f"model calls made now: {STARTER_TRIALS - PAUSE_AFTER}" in proc.stdout
        log = srv.entries()

    records = _check_resumed(run_dir, reference.outcome)
    served = Counter(e["fingerprint"] for e in log if e["outcome"] == "ok")
    assert len(served) == STARTER_TRIALS
    assert set(served.values()) == {1}, f"calls answered twice across kill + resume: {served.most_common(3)}"
    dropped = {e["fingerprint"] for e in log if e["outcome"] == "dropped"}
    assert dropped and dropped <= set(served), "calls in flight at the kill were made again on resume"
    # the trials stored before the kill were kept as they were, not run again
    assert {r.trial_id for r in records[:PAUSE_AFTER]} == before
    assert all(not c.cached for r in records for c in r.calls)


def test_sigkill_at_any_moment_then_knowgap_resume(tmp_path: Path, kg_home: Path,
                                                   reference: Reference) -> None:
    runs = tmp_path / "runs"
    with fake_server(tmp_path, "--delay", "0.25") as srv:
        proc = _start_cli(_run_args(srv.spec, runs), kg_home, tmp_path)
        try:
            _wait_until("the run folder appears", lambda: _run_dir(runs) is not None, proc)
            run_dir = _run_dir(runs)
            assert run_dir is not None
            _wait_until("10 trials are stored", lambda: len(_complete_lines(run_dir / TRIALS)) >= 10, proc)
            _kill(proc)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
        stored_at_kill = [TrialRecord.model_validate_json(line) for line in _complete_lines(run_dir / TRIALS)]
        cached_at_kill = _cached_keys(kg_home)
        assert STARTER_TRIALS > len(stored_at_kill) >= 10

        proc2 = knowgap_cli("resume", run_dir.name, "--runs-dir", str(runs), "-q",
                            env={"KNOWGAP_HOME": str(kg_home)}, cwd=tmp_path, timeout=300)
        assert proc2.returncode == 0, proc2.stderr
        assert f"trials: {STARTER_TRIALS} ok, 0 errors of {STARTER_TRIALS}" in proc2.stdout
        time.sleep(0.5)  # let the server finish logging answers to the killed client (a few ms each)
        served = srv.served_ok()

    records = _check_resumed(run_dir, reference.outcome)
    spec = srv.spec
    fingerprint = {cache_key(spec, r.calls[0].request, r.repeat): _http_fingerprint(r.calls[0].request)
                   for r in records}
    assert len(set(fingerprint.values())) == STARTER_TRIALS and cached_at_kill <= set(fingerprint)
    assert set(served) == set(fingerprint.values())
    # a call whose answer was in the cache at the kill, or whose trial was stored, was not made again
    for key in cached_at_kill:
        assert served[fingerprint[key]] == 1
    for record in stored_at_kill:
        assert served[_http_fingerprint(record.calls[0].request)] == 1
    # only calls in flight at the kill can have been made twice: at most one per worker
    twice = [fp for fp, count in served.items() if count > 1]
    assert set(served.values()) <= {1, 2} and len(twice) <= CONCURRENCY, served.most_common(3)
    # stored trials were kept; trials whose answer was cached but not yet stored were replayed from it
    by_id = {r.trial_id: r for r in records}
    for record in stored_at_kill:
        assert by_id[record.trial_id].model_dump() == record.model_dump()
    stored_ids = {r.trial_id for r in stored_at_kill}
    for r in records:
        if r.trial_id not in stored_ids:
            assert r.calls[0].cached == (cache_key(spec, r.calls[0].request, r.repeat) in cached_at_kill)


def _mid_character_cut(line: bytes) -> bytes:
    """A prefix of ``line`` that ends inside a multi-byte UTF-8 character (past its middle)."""
    cut = next(i for i in range(len(line) // 2, len(line)) if 0x80 <= line[i] <= 0xBF)
    fragment = line[:cut]
    with pytest.raises(UnicodeDecodeError):
        fragment.decode("utf-8")
    return fragment


@pytest.mark.parametrize("tear", ["last-record-half", "mid-character"])
def test_torn_last_line_is_cut_on_resume(tear: str, tmp_path: Path, kg_home: Path,
                                         reference: Reference) -> None:
    runs = tmp_path / "runs"
    with fake_server(tmp_path, "--delay", "0.15", "--pause-after", str(PAUSE_AFTER)) as srv:
        run_dir = _kill_when_quiescent(srv, runs, kg_home, tmp_path)
        trials = run_dir / TRIALS
        lines = _complete_lines(trials)
        stored = {TrialRecord.model_validate_json(line).trial_id for line in lines}
        if tear == "last-record-half":
            # the last record torn in half, as a crash in the middle of its write would leave it; its call
            # finished (and was cached) before the crash
            torn: TrialRecord | None = TrialRecord.model_validate_json(lines[-1])
            kept, fragment = lines[:-1], lines[-1][: len(lines[-1]) // 2]
        else:
            # a record of a Chinese case still in flight, torn inside a multi-byte character
            in_flight = next(i for i in reference.lines if i.startswith("zh-") and i not in stored)
            torn, kept, fragment = None, lines, _mid_character_cut(reference.lines[in_flight])
        trials.write_bytes(b"".join(line + b"\n" for line in kept) + fragment)

        proc = knowgap_cli("resume", run_dir.name, "--runs-dir", str(runs), "-q",
                           env={"KNOWGAP_HOME": str(kg_home)}, cwd=tmp_path, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stdout + proc.stderr
        log = srv.entries()

    records = _check_resumed(run_dir, reference.outcome)  # every line is a whole record: the fragment was cut
    after = (run_dir / TRIALS).read_bytes().splitlines()
    assert after[: len(kept)] == kept, "the whole lines before the torn one were kept as they were"
    assert fragment not in after
    served = Counter(e["fingerprint"] for e in log if e["outcome"] == "ok")
    assert len(served) == STARTER_TRIALS and set(served.values()) == {1}, served.most_common(3)
    usage = _manifest(run_dir).usage["target"][srv.spec]
    assert usage.failed_calls == 0
    if torn is not None:
        again = next(r for r in records if r.trial_id == torn.trial_id)
        assert again.calls[0].cached, "the torn trial's call finished before the crash: replayed from cache"
        assert again.scores == torn.scores and again.output == torn.output
        assert usage.cached_calls == 1
    else:
        assert usage.cached_calls == 0
