"""Connections of an HTTP provider: a pool that follows the model's concurrency and stays fast at 64-256 calls
in flight.

httpx's connection pool matches every queued request against every connection each time a request starts or
ends (``httpcore``'s ``_assign_requests_to_connections``), so its cost per call grows with the square of the
calls in flight (encode/httpx#3215): one ``AsyncClient`` with 64 connections and 64 calls in flight served
about 115 requests/s against a server answering in 50 ms (limit 1,280/s), with 8 connections per client about
1,080/s (measured with ``benchmarks/http_concurrency.py``). So :class:`HttpPool` holds one small client per
``SHARD`` connections, as many as the model's concurrency needs, and sends each call through the one with the
fewest calls in flight.
"""

from __future__ import annotations

from typing import Any

import httpx

SHARD = 8
"""Connections per httpx client (measured best of 4, 8, 16, 32 at 64 and 256 calls in flight)."""

DEFAULT_CONNECTIONS = 64
"""Connections when nobody said how many calls go at once (a provider used outside a gateway)."""


class HttpPool:
    """Keep-alive connections for up to ``connections`` calls in flight, over ``ceil(connections / SHARD)`` httpx
    clients sharing headers and time-outs."""

    def __init__(self, *, headers: dict[str, str], timeout: httpx.Timeout,
                 connections: int = DEFAULT_CONNECTIONS) -> None:
        shards = max(1, -(-connections // SHARD))
        per_shard = max(1, -(-connections // shards))
        limits = httpx.Limits(max_connections=per_shard, max_keepalive_connections=per_shard)
        tls = httpx.create_ssl_context()  # one for all shards: loading the CA bundle takes ~30 ms each time
        self._clients = [httpx.AsyncClient(headers=headers, timeout=timeout, limits=limits, verify=tls)
                         for _ in range(shards)]
        self._in_flight = [0] * shards
        self.connections = shards * per_shard

    async def post(self, url: str, **kwargs: Any) -> httpx.Response:
        shard = min(range(len(self._clients)), key=self._in_flight.__getitem__)
        self._in_flight[shard] += 1
        try:
            return await self._clients[shard].post(url, **kwargs)
        finally:
            self._in_flight[shard] -= 1

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()
