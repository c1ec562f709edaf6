"""An ``http:`` system (a team's JSON service) is held to the same return contract as a ``python:`` function
(issue 35, item 2): an answer without the reply text is a trial error naming what came back, never an empty answer
scored as an abstention. A real server on 127.0.0.1, the real command line."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.helpers import knowgap_cli

ANSWERS = {"/answer-key": {"answer": "hello"}, "/text-null": {"text": None}, "/ok": {"text": "I do not know."}}


class _Service(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        body = json.dumps(ANSWERS[self.path]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the stdlib's name)
        pass


@pytest.fixture(scope="module")
def service() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Service)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.server
@pytest.mark.parametrize(("path", "message"), [
    ("/answer-key", "the answer has no 'text' (missing: text); it holds {'answer': 'hello'}"),
    ("/text-null", "'text' is NoneType, not text"),
])
def test_an_answer_without_text_fails_the_run_instead_of_scoring_an_abstention(
        service: str, tmp_path: Path, path: str, message: str) -> None:
    done = knowgap_cli("run", "starter", "--model", service + path, "--sample", "2", "--max-retries", "0",
                       "--runs-dir", str(tmp_path / "runs"), "-q")
    assert done.returncode == 3, done.stdout + done.stderr
    assert message in done.stderr
    (run,) = (tmp_path / "runs").iterdir()
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert (manifest["status"], manifest["trials_ok"]) == ("failed", 0)


@pytest.mark.server
def test_an_answer_with_text_is_scored(service: str, tmp_path: Path) -> None:
    done = knowgap_cli("run", "starter", "--model", service + "/ok", "--sample", "2", "--runs-dir",
                       str(tmp_path / "runs"), "-q")
    assert done.returncode == 0, done.stdout + done.stderr
