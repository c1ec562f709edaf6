"""A fake OpenAI-compatible chat-completions server for end-to-end tests (standard library only).

Run it as ``python -m tests.fakes.fake_openai_server --port P --log FILE [options]``:

* ``POST /v1/chat/completions`` answers with a reply computed only from the request, so the same request
  always gets the same answer, with ``usage`` token counts.
* ``GET /v1/models`` answers 200 (readiness probe).
* ``--fault-every N --fault-kind 429|500|hang|mixed``: every Nth chat request (a counter under a lock)
  fails: HTTP 429 (``Retry-After: 0``), HTTP 500, or a hang (no answer for ``--hang-seconds``, then the
  connection is closed); ``mixed`` cycles through the three.
* ``--delay S``: every chat request waits S seconds before it is answered.
* ``--echo-auth``: error bodies echo the request's Authorization header (a server leaking a secret).
* ``--pause-after K``: after K successful answers, hold every further chat request until
  ``POST /_control/release`` (body ``{"mode": "drop"}`` closes the held ones unanswered, ``"serve"``
  answers them); lets a test kill a client at a point where no answer is on the wire.

Every chat request is logged to ``--log`` as one JSON line, flushed at once:
``{"n": N, "fingerprint": sha256 of the canonical JSON body, "outcome": "ok"|"429"|"500"|"hang"|"held"|
"dropped", "auth": bool}``. An ``ok`` line is written after the answer was sent, so the log says how many
times each distinct request was served.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FAULT_KINDS = ("429", "500", "hang")


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def fingerprint_body(obj: Any) -> str:
    """The fingerprint the server logs for a request body (a parsed JSON object)."""
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()


def reply_for(body: dict[str, Any]) -> str:
    """A deterministic answer; for a starter-style prompt "I don't know." or an echo of the context."""
    messages = body.get("messages") or []
    digest = hashlib.sha256(canonical_json(messages).encode("utf-8")).hexdigest()
    user = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
    if user.startswith("Context:") and "\n\nQuestion:" in user:
        context = user[len("Context:"):user.index("\n\nQuestion:")].strip()
        return "I don't know." if int(digest[0], 16) < 6 else f"According to the context: {context}"
    return f"answer {digest[:8]}"


class State:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.counter = 0
        self.faults = 0
        self.ok_served = 0
        self.lock = threading.Lock()
        self.serve_lock = threading.Lock()
        self.log_lock = threading.Lock()
        self.paused = False
        self.release = threading.Event()
        self.release_mode = "drop"
        self.log_fh = open(args.log, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the server

    def next_request(self) -> tuple[int, str]:
        """The request number and what to do with it: "ok" or a fault kind."""
        with self.lock:
            self.counter += 1
            n = self.counter
            every = self.args.fault_every
            if not every or n % every:
                return n, "ok"
            kind = self.args.fault_kind
            if kind == "mixed":
                kind = FAULT_KINDS[self.faults % len(FAULT_KINDS)]
            self.faults += 1
            return n, kind

    def log(self, n: int, fingerprint: str, outcome: str, auth: bool) -> None:
        line = json.dumps({"n": n, "fingerprint": fingerprint, "outcome": outcome, "auth": auth})
        with self.log_lock:
            self.log_fh.write(line + "\n")
            self.log_fh.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FakeHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self) -> None:  # noqa: N802
        if self.path.rstrip("/") == "/v1/models":
            models = [{"id": "fake", "object": "model", "owned_by": "tests"}]
            self._send(200, {"object": "list", "data": models})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802
        raw = self._read_body()
        state = self.server.state
        if self.path == "/_control/release":
            mode = (json.loads(raw or b"{}") or {}).get("mode", "drop")
            with state.serve_lock:
                state.release_mode = mode
                state.paused = False
                state.args.pause_after = None
                state.release.set()
            self._send(200, {"released": True, "mode": mode})
            return
        if self.path == "/_control/stats":
            with state.serve_lock:
                self._send(200, {"requests": state.counter, "ok": state.ok_served, "paused": state.paused})
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._send(400, {"error": {"message": "body is not JSON"}})
            return
        fingerprint = fingerprint_body(body)
        auth = self.headers.get("Authorization") or ""
        n, outcome = state.next_request()
        if state.args.delay:
            time.sleep(state.args.delay)
        if outcome == "ok":
            self._answer(n, body, fingerprint, auth)
        else:
            self._fault(n, outcome, fingerprint, auth)

    def _fault(self, n: int, kind: str, fingerprint: str, auth: str) -> None:
        state = self.server.state
        state.log(n, fingerprint, kind, bool(auth))
        leak = {"authorization": auth} if state.args.echo_auth else {}
        if kind == "429":
            self._send(429, {"error": {"message": "rate limited, slow down", "type": "rate_limit", **leak}},
                       {"Retry-After": "0"})
        elif kind == "500":
            self._send(500, {"error": {"message": "internal server error", "type": "server_error", **leak}})
        else:  # hang: no answer, then drop the connection
            time.sleep(state.args.hang_seconds)
            self.close_connection = True

    def _answer(self, n: int, body: dict[str, Any], fingerprint: str, auth: str) -> None:
        state = self.server.state
        text = reply_for(body)
        prompt_words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages") or [])
        payload = {
            "id": f"chatcmpl-{fingerprint[:12]}", "object": "chat.completion", "created": 0,
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_words, "completion_tokens": len(text.split()),
                      "total_tokens": prompt_words + len(text.split())},
        }
        if body.get("logprobs"):  # each word a token, certain, with a less likely alternative
            payload["choices"][0]["logprobs"] = {"content": [
                {"token": w, "logprob": 0.0, "top_logprobs": [{"token": w, "logprob": 0.0},
                                                               {"token": w.upper() + "!", "logprob": -5.0}]}
                for w in text.split()][:body.get("max_tokens") or None]}
        with state.serve_lock:
            limit = state.args.pause_after
            if not state.paused and (limit is None or state.ok_served < limit):
                self._send(200, payload)
                state.ok_served += 1
                state.log(n, fingerprint, "ok", bool(auth))
                if limit is not None and state.ok_served >= limit:
                    state.paused = True
                return
        state.log(n, fingerprint, "held", bool(auth))
        state.release.wait()
        if state.release_mode == "serve":
            with state.serve_lock:
                self._send(200, payload)
                state.ok_served += 1
                state.log(n, fingerprint, "ok", bool(auth))
        else:
            state.log(n, fingerprint, "dropped", bool(auth))
            self.close_connection = True

    def handle(self) -> None:
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass  # the client went away (a time-out, a killed process): nothing to answer


class FakeHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], state: State) -> None:
        super().__init__(address, Handler)
        self.state = state


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="A fake OpenAI-compatible server with fault injection.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--log", required=True, help="JSON-lines log of every chat request")
    p.add_argument("--fault-every", type=int, default=0, help="every Nth chat request fails (0: never)")
    p.add_argument("--fault-kind", choices=[*FAULT_KINDS, "mixed"], default="500")
    p.add_argument("--delay", type=float, default=0.0, help="seconds before each chat answer")
    p.add_argument("--hang-seconds", type=float, default=10.0, help="how long a hang lasts")
    p.add_argument("--echo-auth", action="store_true", help="error bodies echo the Authorization header")
    p.add_argument("--pause-after", type=int, default=None,
                   help="hold chat requests after this many successful answers, until /_control/release")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    server = FakeHTTPServer((args.host, args.port), State(args))
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


# test-side helpers -------------------------------------------------------------------------------


class FakeServer:
    """A running fake server subprocess, as the tests see it."""

    def __init__(self, proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.proc = proc
        self.port = port
        self.log = log
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self.spec = f"openai-compat:fake@{self.base_url}"

    def entries(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        lines = self.log.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def served_ok(self) -> Counter[str]:
        """How many times each distinct request fingerprint was answered successfully."""
        return Counter(e["fingerprint"] for e in self.entries() if e["outcome"] == "ok")

    def control(self, action: str, **body: Any) -> dict[str, Any]:
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/_control/{action}", method="POST",
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:  # noqa: S310 - loopback only
            return dict(json.loads(resp.read()))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


@contextmanager
def fake_server(workdir: Path, *flags: str, name: str = "server", port: int | None = None) -> Iterator[FakeServer]:
    """Start the fake server in a subprocess (on ``port``, default a free one), wait until it answers, stop it
    (always) on exit."""
    from tests.helpers import REPO, free_port, wait_for_http  # the server itself stays standard-library only

    workdir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    log = workdir / f"{name}.log.jsonl"
    stderr = (workdir / f"{name}.stderr").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "tests.fakes.fake_openai_server", "--port", str(port),
                             "--log", str(log), *flags], cwd=REPO, stdout=subprocess.DEVNULL, stderr=stderr)
    server = FakeServer(proc, port, log)
    try:
        wait_for_http(f"{server.base_url}/models", timeout=60, proc=proc)
        yield server
    finally:
        server.stop()
        stderr.close()


if __name__ == "__main__":
    main()
