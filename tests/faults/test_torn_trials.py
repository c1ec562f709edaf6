"""A torn last trial line is found on every read and never counted; the durability rule holds: trials.jsonl is
fsynced before any manifest that counts its trials is written, and a manifest is written atomically (temp file,
fsync, rename, fsync of the folder).

The runs are the real CLI on a ``python:`` function; the torn line is a real one (the last line cut in the middle, as
a crash or a power loss in the middle of its write leaves it); the system calls are the real ones, seen by strace.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import knowgap
from knowgap.engine import store as store_module
from knowgap.engine.store import MANIFEST, TORN, TRIALS
from tests.helpers import knowgap_cli

SYSTEM = '''
import os
import time

def answer(request):
    with open(os.environ["CALLS"], "a") as log:
        log.write("call\\n")
    time.sleep(float(os.environ.get("SLEEP_S", "0")))
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
    proc = knowgap_cli(*args, "--runs-dir", str(tmp_path / "runs"), cwd=tmp_path)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def tear_last_line(run: Path) -> bytes:
    """Cut the last line of the run's trials.jsonl in the middle; returns the bytes left of it."""
    file = run / TRIALS
    data = file.read_bytes()
    last = data[: -1].rfind(b"\n") + 1
    torn = data[last: last + (len(data) - last) // 2]
    file.write_bytes(data[:last] + torn)
    return torn


def test_a_torn_last_line_is_counted_honestly_then_run_again(tmp_path: Path, system: str) -> None:
    done = cli(tmp_path, "run", "starter", "--model", system, "-q")
    assert done.returncode == 0, done.stderr
    [run] = (tmp_path / "runs").iterdir()
    torn = tear_last_line(run)
    assert len((run / TRIALS).read_bytes().splitlines()) == 32  # 31 whole lines and the torn one

    show = cli(tmp_path, "show", run.name)
    assert show.returncode == 0, show.stderr
    text = " ".join(show.stdout.split())
    assert "trials 31 ok / 0 errors / 32" in text
    assert "status interrupted" in text and f"knowgap resume {run.name}" in text
    assert f"damaged: {TRIALS} ends in a torn line (line 32, {len(torn)} bytes cut off mid-write): not counted" in text
    assert "the manifest counted 1 trial more, and the metrics were computed with it" in text

    as_json = json.loads(cli(tmp_path, "show", run.name, "--json").stdout)["manifest"]
    assert (as_json["trials_ok"], as_json["trials_error"], as_json["status"]) == (31, 0, "interrupted")
    assert "torn line" in as_json["damage"]
    assert json.loads((run / MANIFEST).read_text(encoding="utf-8"))["trials_ok"] == 32  # read, not rewritten

    md = cli(tmp_path, "report", run.name, "--md").stdout
    assert "31 ok / 0 errors of 32 trials" in md and "torn line (line 32" in md
    assert "32 ok" not in md
    listed = cli(tmp_path, "runs").stdout
    assert "31/32" in listed and "torn" in listed and "damaged" in listed  # in a wrapped table cell
    assert len(knowgap.iter_trials(run.name, tmp_path / "runs")) == 31

    resumed = cli(tmp_path, "resume", run.name, "-q")
    assert resumed.returncode == 0, resumed.stderr
    assert "trials: 32 ok, 0 errors of 32; model calls made now: 0" in resumed.stdout  # its call: from the cache
    assert calls(tmp_path) == 32
    assert (run / TORN).read_bytes() == torn + b"\n"  # the torn bytes are kept, out of the way
    shown = " ".join(cli(tmp_path, "show", run.name).stdout.split())
    assert "status finished trials 32 ok / 0 errors / 32" in shown and "damaged" not in shown


def test_a_torn_line_while_the_run_is_being_written_is_not_damage(tmp_path: Path, system: str) -> None:
    """A reader that comes in the middle of a write sees a line without its newline: not damage while the writer
    lives (it holds the run's lock); the same bytes once the writer is dead are."""
    from knowgap.engine.lock import RunLock
    from knowgap.engine.store import RunStore

    done = cli(tmp_path, "run", "starter", "--model", system, "-q")
    [run] = (tmp_path / "runs").iterdir()
    assert done.returncode == 0
    manifest = json.loads((run / MANIFEST).read_text(encoding="utf-8"))
    manifest["status"] = "running"
    (run / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    tear_last_line(run)
    lock = RunLock(run)
    lock.acquire()  # a live writer
    try:
        live = RunStore(run).current_manifest()
        assert (live.status, live.trials_ok, live.damage) == ("running", 32, None)
    finally:
        lock.release()
    dead = RunStore(run).current_manifest()
    assert (dead.status, dead.trials_ok) == ("interrupted", 31)
    assert dead.damage is not None and "torn line (line 32" in dead.damage


# durability -----------------------------------------------------------------------------------------------------

_CALL = re.compile(r"^(\d+) +(\w+)\((.*)\) += (-?\d+)")
_UNFINISHED = re.compile(r"^(\d+) +(\w+)\((.*) <unfinished \.\.\.>$")
_RESUMED = re.compile(r"^(\d+) +<\.\.\. (\w+) resumed>(.*)\) += (-?\d+)")
_FD = re.compile(r"^\d+<([^>]*)>")
_PATHS = re.compile(r'"([^"]*)"')


def _syscalls(log: Path) -> list[tuple[str, str, str, int]]:
    """(call, path of the fd or the renamed-to path, the renamed-from path, result) of each traced call, in the
    order they returned (a call another thread interrupted in the log is joined to its end)."""
    out = []
    waiting: dict[tuple[str, str], str] = {}  # (pid, call) -> arguments logged before the call was interrupted
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        if m := _UNFINISHED.match(line):
            waiting[(m.group(1), m.group(2))] = m.group(3)
            continue
        if m := _RESUMED.match(line):
            pid, call, rest, result = m.group(1), m.group(2), m.group(3), int(m.group(4))
            args = waiting.pop((pid, call), "") + rest
        elif m := _CALL.match(line):
            call, args, result = m.group(2), m.group(3), int(m.group(4))
        else:
            continue
        if call.startswith("rename"):
            paths = _PATHS.findall(args)
            out.append(("rename", paths[-1], paths[0], result))
        elif call in ("write", "fsync", "fdatasync"):
            fd = _FD.match(args)
            out.append((call, fd.group(1) if fd else "", "", result))
    return out


@pytest.mark.slow  # a traced CLI run
def test_no_manifest_counts_a_trial_before_its_line_is_on_disk(tmp_path: Path, system: str) -> None:
    """strace shows the order the kernel saw: at every rename onto manifest.json every byte written to trials.jsonl
    has been fsynced, the manifest's temp file was fsynced before it, and the folder is fsynced after it."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed (apt-get install strace)")
    log = tmp_path / "strace.log"
    proc = subprocess.run(["strace", "-f", "-y", "-qq", "-s", "0", "-o", str(log), "-e",
                           "trace=write,fsync,fdatasync,rename,renameat,renameat2", sys.executable, "-m", "knowgap",
                           "run", "starter", "--model", system, "--runs-dir", str(tmp_path / "runs"), "-q"],
                          capture_output=True, text=True, cwd=tmp_path, env=dict(os.environ), timeout=300, check=False)
    if "PTRACE" in proc.stderr.upper() and proc.returncode != 0:
        pytest.skip(f"strace cannot trace here: {proc.stderr.strip()[:200]}")
    assert proc.returncode == 0, proc.stderr
    [run] = (tmp_path / "runs").iterdir()
    trials, manifest, folder = str(run / TRIALS), str(run / MANIFEST), str(run)
    written = synced = 0
    synced_paths: set[str] = set()
    manifests = 0
    folder_synced_after_last = False
    for call, path, source, result in _syscalls(log):
        if call == "write" and path == trials and result > 0:
            written += result
        elif call in ("fsync", "fdatasync") and result == 0:
            synced_paths.add(path)
            if path == trials:
                synced = written
            if path == folder:
                folder_synced_after_last = True
        elif call == "rename" and path == manifest and result == 0:
            manifests += 1
            assert synced == written, f"manifest {manifests} written with {written - synced} bytes of trials unsynced"
            assert source in synced_paths, "the manifest's temp file is fsynced before it is renamed"
            folder_synced_after_last = False
    assert written == (run / TRIALS).stat().st_size and written > 0  # every write to trials.jsonl was seen
    assert manifests >= 2 and folder_synced_after_last  # created, finished; the folder fsynced after the last


def test_trials_are_fsynced_while_the_run_goes(tmp_path: Path, system: str, runs_root: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A power loss costs at most the trials of the last SYNC_EVERY_S seconds: trials.jsonl is fsynced that often
    while trials are appended, not only at the end (here every 0.1 s, a trial taking 0.02 s)."""
    monkeypatch.setattr(store_module, "SYNC_EVERY_S", 0.1)
    monkeypatch.setenv("SLEEP_S", "0.02")
    real_fsync = os.fsync
    sizes: list[int] = []

    def fsync(fd: int) -> None:  # the real fsync, noting the size of trials.jsonl each time it is synced
        if os.readlink(f"/proc/self/fd/{fd}").endswith(TRIALS):
            sizes.append(os.fstat(fd).st_size)
        real_fsync(fd)

    monkeypatch.setattr(store_module.os, "fsync", fsync)
    result = knowgap.run("starter", models={"target": system}, runs_root=runs_root, concurrency=1)
    assert result.manifest.trials_ok == 32
    final = (result.path / TRIALS).stat().st_size
    during = sorted({s for s in sizes if 0 < s < final})
    assert len(during) >= 3, sizes  # about 0.64 s of trials: several fsyncs before the end
