"""Fault tolerance end to end: the real engine against a real (fake) OpenAI-compatible HTTP server.

Every third call fails (429, 500, or hangs past the client time-out); every trial must still finish, each
exactly once, each distinct request must be answered successfully exactly once, and the retries must show
in the manifest's usage. An unreachable server must give errored trials with a clear message, not a crash.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

import knowgap
from knowgap.engine.store import TRIALS
from tests.fakes.fake_openai_server import fake_server
from tests.helpers import free_port, knowgap_cli

STARTER_TRIALS = 32  # 16 cases x 2 prompts
TIMEOUT_S = 2.0
HANG_S = 5.0  # well past the client time-out: the client must give up and retry


def _trial_lines(run_path: Path) -> list[dict[str, object]]:
    text = (run_path / TRIALS).read_text(encoding="utf-8")
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["429", "500", "hang"])
def test_every_third_call_fails_and_every_trial_still_finishes_once(kind: str, tmp_path: Path,
                                                                   runs_root: Path) -> None:
    flags = ("--fault-every", "3", "--fault-kind", kind, "--hang-seconds", str(HANG_S))
    with fake_server(tmp_path, *flags) as srv:
        # max_retries is generous so that no request can (by bad luck of the interleaving) hit the fault
        # slot more often than it may retry.
        result = knowgap.run("starter", models={"target": srv.spec}, runs_root=runs_root, timeout_s=TIMEOUT_S,
                             concurrency=4, max_retries=12)
        log = srv.entries()

    manifest = result.manifest
    assert manifest.status == "finished"
    assert manifest.trials_total == manifest.trials_ok == STARTER_TRIALS and manifest.trials_error == 0

    lines = _trial_lines(result.path)
    ids = Counter(str(r["trial_id"]) for r in lines)
    assert len(lines) == STARTER_TRIALS and len(ids) == STARTER_TRIALS, "each trial stored exactly once"
    assert all(r["status"] == "ok" for r in lines), [r["error"] for r in lines if r["status"] != "ok"]

    outcomes = Counter(e["outcome"] for e in log)
    assert set(outcomes) == {"ok", kind}
    assert outcomes[kind] >= STARTER_TRIALS // 3, "the server injected a fault on every third call"
    served = Counter(e["fingerprint"] for e in log if e["outcome"] == "ok")
    assert len(served) == STARTER_TRIALS, "one distinct request per trial"
    assert set(served.values()) == {1}, f"requests answered more than once: {served.most_common(3)}"
    faulted = {e["fingerprint"] for e in log if e["outcome"] == kind}
    assert faulted <= set(served), "every request that met a fault was retried until it was answered"

    usage = manifest.usage["target"][srv.spec]
    assert usage.retries > 0
    assert usage.retries == outcomes[kind], "one retry per injected fault"
    assert (usage.calls, usage.failed_calls, usage.cached_calls) == (STARTER_TRIALS, 0, 0)
    assert result.provider_calls == len(log), "every attempt reached the server"
    attempts = sum(int(c["attempts"]) for r in lines for c in r["calls"])  # type: ignore[union-attr]
    assert attempts == len(log)
    # the stored manifest says the same as the returned one
    stored, _ = knowgap.load_run(result.run_id, runs_root)
    assert stored.usage["target"][srv.spec].retries == usage.retries


@pytest.mark.server
@pytest.mark.slow
def test_mixed_faults(tmp_path: Path, runs_root: Path) -> None:
    flags = ("--fault-every", "3", "--fault-kind", "mixed", "--hang-seconds", str(HANG_S))
    with fake_server(tmp_path, *flags) as srv:
        result = knowgap.run("starter", models={"target": srv.spec}, runs_root=runs_root, timeout_s=TIMEOUT_S,
                             concurrency=4, max_retries=12)
        log = srv.entries()
    assert result.manifest.trials_ok == STARTER_TRIALS
    assert {e["outcome"] for e in log} == {"ok", "429", "500", "hang"}
    assert set(srv.served_ok().values()) == {1} and len(srv.served_ok()) == STARTER_TRIALS
    assert result.manifest.usage["target"][srv.spec].retries == sum(e["outcome"] != "ok" for e in log)


def test_unreachable_server_gives_errored_trials_not_a_crash(runs_root: Path) -> None:
    port = free_port()  # nothing listens here
    url = f"http://127.0.0.1:{port}/v1"
    spec = f"openai-compat:x@{url}"
    result = knowgap.run("starter", models={"target": spec}, runs_root=runs_root, timeout_s=TIMEOUT_S,
                         max_retries=1)
    manifest = result.manifest
    assert manifest.status == result.status == "failed" and not result.ok
    assert manifest.trials_total == manifest.trials_error == STARTER_TRIALS and manifest.trials_ok == 0
    records = knowgap.iter_trials(result.run_id, runs_root)
    assert len(records) == STARTER_TRIALS
    for record in records:
        assert record.status == "error"
        assert record.error is not None
        assert f"cannot reach {url}" in record.error, record.error
        assert "gave up after 2 attempts" in record.error, record.error
        assert record.calls and record.calls[0].attempts == 2 and record.calls[0].response is None
    usage = manifest.usage["target"][spec]
    assert (usage.calls, usage.failed_calls, usage.retries) == (0, STARTER_TRIALS, STARTER_TRIALS)
    errors = {m.group: m.value for m in result.metrics if m.name == "errors"}
    assert errors == {"prompt=grounded": 16.0, "prompt=plain": 16.0}


def test_unreachable_server_via_cli_exits_3_and_reports_errors(tmp_path: Path, kg_home: Path) -> None:
    port = free_port()
    runs = tmp_path / "cli-runs"
    proc = knowgap_cli("run", "starter", "--model", f"openai-compat:x@http://127.0.0.1:{port}/v1",
                       "--max-retries", "1", "--timeout", str(TIMEOUT_S), "--runs-dir", str(runs), "-q",
                       env={"KNOWGAP_HOME": str(kg_home)}, timeout=300)
    assert proc.returncode == 3, proc.stderr
    assert re.search(rf"trials: 0 ok, {STARTER_TRIALS} errors of {STARTER_TRIALS}", proc.stdout), proc.stdout
    assert f"{STARTER_TRIALS} trials: " in proc.stderr and f"cannot reach http://127.0.0.1:{port}/v1" in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "failed" and manifest["trials_error"] == STARTER_TRIALS
