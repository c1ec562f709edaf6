"""Error messages always say what failed and where (issue 35, item 11): a connection the server resets has a
cause (it read ``cannot reach URL:  (gave up…)`` with httpx), and a runs folder on a full disk is named in the
error (it read ``error: no space left on device``).

A real TCP server on 127.0.0.1 that reads the request and resets the connection (SO_LINGER 0), and a real full
tmpfs (mounted by the test where it may; skipped, saying why, where it may not); the real CLI in subprocesses.
"""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowgap.errors import exception_text
from tests.helpers import knowgap_cli

CLIENTS = ["httpx", pytest.param("aiohttp", marks=pytest.mark.skipif(
    __import__("importlib").util.find_spec("aiohttp") is None, reason="aiohttp is the fast-http extra"))]


@pytest.fixture
def resetting_server() -> Iterator[str]:
    """The URL of a server that reads each request and answers it with a TCP reset."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(5)
            try:
                conn.recv(65536)
            except OSError:
                pass
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()  # linger on, time 0: the close sends RST, not FIN

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/chat"
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


@pytest.mark.server
@pytest.mark.parametrize("client", CLIENTS)
def test_a_connection_reset_has_a_cause(tmp_path: Path, resetting_server: str, client: str) -> None:
    runs = tmp_path / "runs"
    done = knowgap_cli("run", "starter", "--model", resetting_server, "--sample", "1", "--max-retries", "0",
                       "--runs-dir", str(runs), "-q", env={"KNOWGAP_HTTP_CLIENT": client}, timeout=120)
    assert done.returncode == 3, done.stderr
    (manifest,) = runs.glob("*/manifest.json")
    causes = [c["message"] for c in json.loads(manifest.read_text(encoding="utf-8"))["error_causes"]]
    head = f"cannot reach {resetting_server}: "
    assert causes and all(head in c for c in causes), causes
    for cause in causes:
        said = cause.split(head, 1)[1].removesuffix(" (gave up after 1 attempts)")
        assert said.strip(), f"an empty cause: {cause!r}"
        assert "Connection reset by peer" in said, cause  # ECONNRESET's own words, found under httpx's empty ReadError


def test_an_exception_without_a_message_is_named() -> None:
    try:
        try:
            raise ConnectionResetError(104, "Connection reset by peer")
        except ConnectionResetError as exc:
            raise RuntimeError() from exc
    except RuntimeError as outer:
        assert exception_text(outer) == "RuntimeError (ConnectionResetError: [Errno 104] Connection reset by peer)"
    assert exception_text(ValueError()) == "ValueError"
    assert exception_text(ValueError("bad")) == "bad"


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 64 KiB tmpfs (needs root and mount); skipped, saying why, where it cannot be mounted."""
    where = tmp_path / "small-disk"
    where.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)], capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root and mount): {proc.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_disk_under_the_runs_folder_names_the_file(tmp_path: Path, full_disk: Path) -> None:
    """The trials of a run outgrow a 64 KiB disk: the error names trials.jsonl (the write that failed, and the
    close that failed to flush it again, which used to replace the first error by a bare 'no space left')."""
    system = tmp_path / "wordy.py"
    system.write_text("def answer(request):\n    return 'I do not know. ' * 200\n", encoding="utf-8")
    runs = full_disk / "runs"
    done = knowgap_cli("run", "starter", "--model", f"python:{system}:answer", "--no-cache", "--runs-dir", str(runs),
                       "-q", timeout=120)
    assert done.returncode == 2, (done.stdout, done.stderr)
    (run,) = runs.iterdir()
    assert f"error: cannot write to {run / 'trials.jsonl'}: no space left on device" in done.stderr, done.stderr
