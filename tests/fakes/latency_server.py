"""A fast OpenAI-compatible chat-completions server that answers every request after a fixed latency (standard
library only: a raw asyncio HTTP/1.1 protocol with keep-alive, so the server is not what limits a client's
throughput; ``--workers N`` runs N processes on one port with SO_REUSEPORT).

    python tests/fakes/latency_server.py --port P [--latency-ms 50] [--workers 1]
        [--reject-first K --retry-after S] [--log FILE]

* ``POST .../chat/completions`` answers after ``--latency-ms`` with a fixed short reply and ``usage`` (prompt
  tokens = words in the messages, 1 completion token).
* ``GET .../models`` answers 200 at once (readiness probe).
* ``--reject-first K``: the first K chat requests are answered HTTP 429 (at once), with ``Retry-After: S`` when
  ``--retry-after`` is given (``--workers 1`` only: the count is per process).
* ``--log FILE``: one JSON line per chat request as it arrives, flushed at once:
  ``{"t": unix time of arrival, "n": N, "status": 200|429, "tokens": prompt tokens}``.

Used by ``benchmarks/http_concurrency.py`` and by the rate-limit and pooled-backoff tests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

_REPLY = b"ok"


def _response(status: int, body: bytes, extra: str = "") -> bytes:
    reason = {200: "OK", 404: "Not Found", 429: "Too Many Requests", 400: "Bad Request"}[status]
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            f"{extra}\r\n")
    return head.encode("ascii") + body


def _completion(body: dict[str, Any]) -> tuple[bytes, int]:
    messages = body.get("messages") or []
    prompt = sum(len(str(m.get("content", "")).split()) for m in messages if isinstance(m, dict))
    payload = {"id": "chatcmpl-latency", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
               "choices": [{"index": 0, "message": {"role": "assistant", "content": _REPLY.decode()},
                            "finish_reason": "stop"}],
               "usage": {"prompt_tokens": prompt, "completion_tokens": 1, "total_tokens": prompt + 1}}
    return json.dumps(payload).encode("utf-8"), prompt


class State:
    def __init__(self, args: argparse.Namespace) -> None:
        self.latency_s = args.latency_ms / 1000
        self.reject_first = args.reject_first
        self.retry_after = args.retry_after
        self.count = 0
        self.log: IO[str] | None = open(args.log, "a", encoding="utf-8") if args.log else None  # noqa: SIM115


class Protocol(asyncio.Protocol):
    """HTTP/1.1 with keep-alive and Content-Length bodies (what httpx and aiohttp send)."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.buf = b""
        self.transport: asyncio.Transport | None = None
        self.loop = asyncio.get_running_loop()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buf[:end].decode("latin-1")
            lines = head.split("\r\n")
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            if len(self.buf) < end + 4 + length:
                return
            body = self.buf[end + 4:end + 4 + length]
            self.buf = self.buf[end + 4 + length:]
            method, path = (lines[0].split(" ") + ["", ""])[:2]
            self.handle(method, path, body)

    def send(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def handle(self, method: str, path: str, raw: bytes) -> None:
        state = self.state
        if method == "GET" and path.rstrip("/").endswith("/models"):
            self.send(_response(200, b'{"object":"list","data":[{"id":"m","object":"model"}]}'))
            return
        if method != "POST" or not path.rstrip("/").endswith("/chat/completions"):
            self.send(_response(404, b'{"error":{"message":"no route"}}'))
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self.send(_response(400, b'{"error":{"message":"body is not JSON"}}'))
            return
        state.count += 1
        reject = state.count <= state.reject_first
        data, tokens = _completion(body)
        if state.log is not None:
            state.log.write(json.dumps({"t": time.time(), "n": state.count, "status": 429 if reject else 200,
                                        "tokens": tokens}) + "\n")
            state.log.flush()
        if reject:
            extra = f"Retry-After: {state.retry_after:g}\r\n" if state.retry_after is not None else ""
            self.send(_response(429, b'{"error":{"message":"rate limited","type":"rate_limit"}}', extra))
            return
        out = _response(200, data)
        if state.latency_s > 0:
            self.loop.call_later(state.latency_s, self.send, out)
        else:
            self.send(out)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--latency-ms", type=float, default=50.0)
    p.add_argument("--workers", type=int, default=1, help="server processes sharing the port (SO_REUSEPORT)")
    p.add_argument("--reject-first", type=int, default=0, help="answer the first K chat requests 429")
    p.add_argument("--retry-after", type=float, default=None, help="Retry-After seconds sent with those 429s")
    p.add_argument("--log", default=None, help="JSON line per chat request (arrival time, number, status)")
    return p.parse_args(argv)


def _serve(args: argparse.Namespace) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if args.workers > 1:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((args.host, args.port))
    sock.listen(1024)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        state = State(args)
        server = await loop.create_server(lambda: Protocol(state), sock=sock)
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        async with server:
            await stop.wait()

    asyncio.run(main())


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    children = []
    for _ in range(args.workers - 1):
        pid = os.fork()
        if pid == 0:
            _serve(args)
            os._exit(0)
        children.append(pid)
    try:
        _serve(args)
    finally:
        for pid in children:
            try:
                os.kill(pid, signal.SIGTERM)
                os.waitpid(pid, 0)
            except OSError:
                pass
    sys.exit(0)


# test- and benchmark-side helpers --------------------------------------------------------------------


class LatencyServer:
    """A running latency server subprocess."""

    def __init__(self, proc: subprocess.Popen[bytes], port: int, log: Path | None) -> None:
        self.proc = proc
        self.port = port
        self.log = log
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self.spec = f"openai-compat:m@{self.base_url}"

    def arrivals(self) -> list[dict[str, Any]]:
        """The logged chat requests in arrival order (``--log`` only)."""
        if self.log is None or not self.log.exists():
            return []
        rows = [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines() if line.strip()]
        return sorted(rows, key=lambda r: (r["t"], r["n"]))


@contextmanager
def latency_server(*flags: str, log: Path | None = None, python: str = sys.executable) -> Iterator[LatencyServer]:
    """Start the server on a free port, wait until it answers, stop it (always) on exit."""
    from tests.helpers import free_port, wait_for_http  # the server itself stays standard-library only

    port = free_port()
    extra = ["--log", str(log)] if log is not None else []
    proc = subprocess.Popen([python, __file__, "--port", str(port), *extra, *flags],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = LatencyServer(proc, port, log)
    try:
        wait_for_http(f"{server.base_url}/models", timeout=30, proc=proc)
        yield server
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


if __name__ == "__main__":
    main()
