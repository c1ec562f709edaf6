"""Usage is the sum over the whole run: a run killed with SIGKILL and resumed reports the same calls and
tokens as a clean run of the same plan, with calls served from the cache counted separately."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import knowgap
from knowgap.engine.records import Manifest, ModelUsage
from knowgap.engine.store import MANIFEST, TRIALS
from tests.fakes.fake_openai_server import fake_server
from tests.helpers import knowgap_cli, scripted

PAUSE_AFTER = 12


def _manifest(run_dir: Path) -> Manifest:
    return Manifest.model_validate_json((run_dir / MANIFEST).read_text(encoding="utf-8"))


def _wait(what: str, check: Callable[[], bool], proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if check():
            return
        assert proc.poll() is None, f"the run exited before {what}"
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _run_dir(runs: Path) -> Path | None:
    found = [p for p in runs.iterdir() if (p / MANIFEST).exists()] if runs.exists() else []
    return found[0] if found else None


def _lines(file: Path) -> int:
    return file.read_bytes().count(b"\n") if file.exists() else 0


@pytest.mark.server
def test_usage_after_sigkill_and_resume_equals_a_clean_run(tmp_path: Path, kg_home: Path) -> None:
    env = {"KNOWGAP_HOME": str(kg_home)}
    with fake_server(tmp_path / "clean", name="clean") as srv:
        clean = knowgap_cli("run", "starter", "--model", srv.spec, "--runs-dir", str(tmp_path / "clean-runs"), "-q",
                            "--no-cache", env={"KNOWGAP_HOME": str(tmp_path / "clean-home")}, cwd=tmp_path)
        assert clean.returncode == 0, clean.stderr
    clean_dir = _run_dir(tmp_path / "clean-runs")
    assert clean_dir is not None
    expected = _manifest(clean_dir).usage["target"][srv.spec]
    assert expected.calls == 32 and expected.prompt_tokens > 0

    runs = tmp_path / "runs"
    with fake_server(tmp_path, "--pause-after", str(PAUSE_AFTER)) as srv:
        proc = subprocess.Popen([sys.executable, "-m", "knowgap", "run", "starter", "--model", srv.spec,
                                 "--concurrency", "2", "--runs-dir", str(runs), "-q"],
                                env={**os.environ, **env}, cwd=tmp_path, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            _wait("the run folder appears", lambda: _run_dir(runs) is not None, proc)
            run_dir = _run_dir(runs)
            assert run_dir is not None
            _wait(f"{PAUSE_AFTER} trials are stored", lambda: _lines(run_dir / TRIALS) >= PAUSE_AFTER, proc)
            _wait("calls are held", lambda: any(e["outcome"] == "held" for e in srv.entries()), proc)
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.kill()
            proc.wait(timeout=30)
        srv.control("release", mode="drop")
        resumed = knowgap_cli("resume", run_dir.name, "--runs-dir", str(runs), "-q", env=env, cwd=tmp_path,
                              timeout=300)
        assert resumed.returncode == 0, resumed.stderr
        assert f"model calls made now: {32 - PAUSE_AFTER}" in resumed.stdout  # this invocation's own calls

    usage = _manifest(run_dir).usage["target"][srv.spec]
    assert (usage.calls, usage.cached_calls, usage.failed_calls) == (32, 0, 0), usage
    assert (usage.prompt_tokens, usage.completion_tokens) == (expected.prompt_tokens, expected.completion_tokens)
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert f"| target | `{srv.spec}` | 32 | 0 | 0 | {expected.prompt_tokens} / {expected.completion_tokens} |" in report
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert "<td class=num>32</td><td class=num>0</td>" in html


def test_cached_calls_are_counted_apart_across_a_crash(tmp_path: Path, runs_root: Path) -> None:
    """What SIGKILL leaves on disk (some trials stored, the manifest still 'running' with no usage), resumed
    with the rest of the answers in the cache: calls of the whole run, the cached ones apart, tokens only
    for calls that reached the model."""
    spec = scripted(tmp_path, *(f"answer {i}" for i in range(5)))
    prices = {spec: (1.0, 2.0)}
    first = knowgap.run("starter", models={"target": spec}, runs_root=runs_root, prices=prices)
    full = first.manifest.usage["target"][spec]
    assert full.calls == 32 and full.cached_calls == 0 and full.prompt_tokens > 0
    lines = (first.path / TRIALS).read_bytes().splitlines(keepends=True)
    (first.path / TRIALS).write_bytes(b"".join(lines[:10]))
    raw = json.loads((first.path / MANIFEST).read_text(encoding="utf-8"))
    raw.update(status="running", usage={}, ended_at=None, trials_ok=0, trials_error=0)
    (first.path / MANIFEST).write_text(json.dumps(raw), encoding="utf-8")
    kept = [json.loads(line) for line in lines[:10]]
    prompt = sum(r["calls"][0]["response"]["usage"]["prompt_tokens"] for r in kept)
    completion = sum(r["calls"][0]["response"]["usage"]["completion_tokens"] for r in kept)

    result = knowgap.resume(first.run_id, runs_root=runs_root)
    usage: ModelUsage = result.manifest.usage["target"][spec]
    assert (usage.calls, usage.cached_calls) == (32, 22)
    assert (usage.prompt_tokens, usage.completion_tokens) == (prompt, completion)
    assert usage.cost_usd == pytest.approx((prompt * 1.0 + completion * 2.0) / 1e6)
    assert result.provider_calls == 0
