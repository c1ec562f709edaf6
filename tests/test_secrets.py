"""An API key never lands in a run's files, the cache, or the CLI's output, even when a server echoes it.

The fake server answers every third call with HTTP 500 whose body repeats the request's Authorization
header (a server leaking the key in an error). With no retries those errors end up in trial records; with
retries they go through the retry path. Afterwards every file under the runs folder and KNOWGAP_HOME is read
as bytes and must not hold the key.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.fake_openai_server import fake_server
from tests.helpers import knowgap_cli

SECRET = "sk-test-SECRET-abcdef123456"
# the key, and its distinctive tail (a partly masked key still leaks)
NEEDLES = (SECRET.encode(), b"SECRET-abcdef123456", b"abcdef123456")
STARTER_TRIALS = 32


def _files(*roots: Path) -> list[Path]:
    return [p for root in roots if root.exists() for p in sorted(root.rglob("*")) if p.is_file()]


def _assert_clean(label: str, data: bytes) -> None:
    for needle in NEEDLES:
        assert needle not in data, f"{label} holds the API key ({needle!r})"


@pytest.mark.server
def test_echoed_api_key_is_never_stored_or_printed(tmp_path: Path, kg_home: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    runs = tmp_path / "runs"
    env = {"KNOWGAP_HOME": str(kg_home), "OPENAI_API_KEY": SECRET}
    outputs: list[tuple[str, str]] = []
    with fake_server(tmp_path, "--fault-every", "3", "--fault-kind", "500", "--echo-auth") as srv:
        # no retries: the leaking 500s become the error of a third of the trials
        failing = knowgap_cli("run", "starter", "--model", srv.spec, "--max-retries", "0", "--runs-dir",
                              str(runs), "-q", env=env, cwd=tmp_path, timeout=300)
        assert failing.returncode == 3, failing.stderr  # some trials errored
        outputs.append(("run without retries", failing.stdout + failing.stderr))
        # retries, no reuse of the first run's answers, and the progress output on
        retrying = knowgap_cli("run", "starter", "--model", srv.spec, "--max-retries", "12", "--no-cache",
                               "--runs-dir", str(runs), env=env, cwd=tmp_path, timeout=300)
        assert retrying.returncode == 0, retrying.stderr
        assert f"trials: {STARTER_TRIALS} ok, 0 errors" in retrying.stdout
        outputs.append(("run with retries", retrying.stdout + retrying.stderr))
        log = srv.entries()

    assert log and all(e["auth"] for e in log), "the key was sent to the server"
    assert sum(e["outcome"] == "500" for e in log) >= STARTER_TRIALS // 3

    run_dirs = sorted(p for p in runs.iterdir() if p.is_dir())
    assert len(run_dirs) == 2
    for run_dir in run_dirs:
        shown = knowgap_cli("show", run_dir.name, "--runs-dir", str(runs), "--trials", str(STARTER_TRIALS),
                            env=env, cwd=tmp_path, timeout=120)
        assert shown.returncode == 0, shown.stderr
        outputs.append((f"show {run_dir.name}", shown.stdout + shown.stderr))
        shown_json = knowgap_cli("show", run_dir.name, "--runs-dir", str(runs), "--json", env=env,
                                 cwd=tmp_path, timeout=120)
        assert shown_json.returncode == 0, shown_json.stderr
        outputs.append((f"show --json {run_dir.name}", shown_json.stdout + shown_json.stderr))

    # the leak really reached the engine: the first run's errors carry the server's (masked) echo
    first = next(d for d in run_dirs if b"HTTP 500" in (d / "trials.jsonl").read_bytes())
    trials = (first / "trials.jsonl").read_text(encoding="utf-8")
    assert "authorization" in trials and "***" in trials
    assert "errors" in outputs[0][1] and f"{STARTER_TRIALS} ok" not in outputs[0][1]

    files = _files(runs, kg_home)
    assert any(p.name == "cache.sqlite" for p in files) and any(p.name == "trials.jsonl" for p in files)
    for path in files:
        _assert_clean(str(path), path.read_bytes())
    for label, text in outputs:
        _assert_clean(label, text.encode())
