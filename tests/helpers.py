"""Helpers for tests: the repository root, scripted-model files, free ports, the real CLI in a subprocess,
waiting for servers."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
"""The repository root (README.md, examples/, src/, pyproject.toml), wherever a test file sits below tests/."""

SHARED_DATA = next((p / "shared" / "data" for p in REPO.parents if (p / "shared" / "data").is_dir()), None)
"""The labelled calibration data (``../shared/data`` next to the checkout), or None where it is absent."""

Answer = str | dict[str, Any]
"""One line of a scripted-model file: a response text, or a whole row (``{"request_hash": ..., "response": ...}``)."""


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    """``rows`` as a UTF-8 JSONL file at ``path`` (its folder made if needed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def script_file(path: Path, *answers: Answer) -> Path:
    """A scripted-model file at ``path`` (written again if it exists): a text becomes ``{"response": text}``.
    The model answers in trial order, cycling, unless the rows are keyed by ``request_hash``."""
    return write_jsonl(path, [{"response": a} if isinstance(a, str) else a for a in answers])


def scripted(folder: Path, *answers: Answer, name: str | None = None) -> str:
    """The spec (``scripted:PATH``) of a scripted model answering ``answers`` from ``folder/name``; without a
    name each call writes a new file (``script-1.jsonl``, ``script-2.jsonl``...) in ``folder``."""
    if name is None:
        name = f"script-{len(list(folder.glob('script-*.jsonl'))) + 1}.jsonl"
    return f"scripted:{script_file(folder / name, *answers)}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def knowgap_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
                timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run the real `knowgap` command line in a subprocess, as a user would."""
    return subprocess.run([sys.executable, "-m", "knowgap", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd, timeout=timeout, check=False)


def wait_for_http(url: str, timeout: float = 120.0, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Poll ``url`` until it answers 200; fail early if ``proc`` died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before answering {url}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{url} did not answer within {timeout}s")


@contextmanager
def llama_server(gguf: Path, log_dir: Path, *extra: str, alias: str = "qwen-0.5b") -> Iterator[str]:
    """A real ``python -m llama_cpp.server`` on 127.0.0.1 serving ``gguf``; yields its /v1 URL and stops it."""
    port = free_port()
    with (log_dir / "server.log").open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", alias,
             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", *extra],
            stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for_http(f"http://127.0.0.1:{port}/v1/models", timeout=180, proc=proc)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
