"""The HTTP providers' connection pool, with each HTTP client (aiohttp, httpx in shards), against a real server
process: as many calls in flight as the model's concurrency (no fixed cap), and the same errors either way."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import httpx
import pytest

from knowgap.engine.gateway import ModelGateway, RetryPolicy
from knowgap.engine.records import CallRecord
from knowgap.models.http_pool import CLIENT_ENV, http_client_kind
from knowgap.models.types import ChatRequest
from tests.fakes.latency_server import latency_server
from tests.helpers import free_port

KINDS = ["httpx", pytest.param("aiohttp", marks=pytest.mark.skipif(
    importlib.util.find_spec("aiohttp") is None, reason="aiohttp not installed"))]


def _calls(spec: str, n: int, concurrency: int, max_retries: int = 0) -> list[CallRecord]:
    async def go() -> list[CallRecord]:
        gateway = ModelGateway(run_id="pool-test", concurrency=concurrency,
                               retry=RetryPolicy(max_retries=max_retries, base_s=0.01, timeout_s=30))
        try:
            return list(await asyncio.gather(*(gateway.call(spec, "target", ChatRequest.simple(f"q{i}", max_tokens=2))
                                               for i in range(n))))
        finally:
            await gateway.aclose()

    return asyncio.run(go())


@pytest.mark.server
@pytest.mark.parametrize("kind", KINDS)
def test_every_call_of_the_concurrency_is_in_flight_at_once(kind: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CLIENT_ENV, kind)
    assert http_client_kind() == kind
    n = 100  # more than the 64 connections the providers used to stop at
    log = tmp_path / "arrivals.jsonl"
    with latency_server("--latency-ms", "1500", log=log) as server:
        records = _calls(server.spec, n, concurrency=n)
        arrivals = server.arrivals()
    assert all(r.response is not None and r.response.text == "ok" for r in records)
    first_answer = arrivals[0]["t"] + 1.5
    assert sum(a["t"] < first_answer for a in arrivals) == n, "every call was sent before the first answer came"


@pytest.mark.server
@pytest.mark.parametrize("kind", KINDS)
def test_the_same_errors_through_either_client(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CLIENT_ENV, kind)
    with latency_server("--latency-ms", "0", "--reject-first", "2", "--retry-after", "0",
                        log=tmp_path / "log.jsonl") as server:
        refused = _calls(server.spec, 2, concurrency=2)
    assert all(r.error and "HTTP 429" in r.error and "rate limited" in r.error for r in refused), refused
    url = f"http://127.0.0.1:{free_port()}/v1"
    unreachable = _calls(f"openai-compat:m@{url}", 1, concurrency=1)
    assert unreachable[0].error is not None and f"cannot reach {url}" in unreachable[0].error


def test_an_unknown_client_is_named_in_the_call_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CLIENT_ENV, "requests")
    record = _calls(f"openai-compat:m@http://127.0.0.1:{free_port()}/v1", 1, concurrency=1)[0]
    assert record.error is not None and "KNOWGAP_HTTP_CLIENT must be aiohttp or httpx, got 'requests'" in record.error


@pytest.mark.skipif(importlib.util.find_spec("aiohttp") is None, reason="aiohttp not installed")
@pytest.mark.parametrize(("content_type", "body"), [
    ("application/json", '{"detail": "模型 overloaded"}'.encode()),
    ("text/plain; charset=latin-1", "café".encode("latin-1")),
    ('text/plain; charset="utf-8"', "naïve".encode()),
    ("text/plain; charset=no-such-charset", "x\u00e9".encode()),
    ("text/html", b"bad \xff byte"),
])
def test_an_answer_read_through_aiohttp_reads_as_httpx_reads_it(content_type: str, body: bytes) -> None:
    from multidict import CIMultiDict, CIMultiDictProxy

    from knowgap.models.http_pool import PooledAnswer

    headers = {"Content-Type": content_type, "Retry-After": "7"}
    ours = PooledAnswer(503, CIMultiDictProxy(CIMultiDict(headers)), body)
    theirs = httpx.Response(503, headers=headers, content=body)
    assert ours.text == theirs.text
    assert ours.headers.get("retry-after") == theirs.headers.get("retry-after") == "7"
    if content_type == "application/json":
        assert ours.json() == theirs.json() == {"detail": "模型 overloaded"}
