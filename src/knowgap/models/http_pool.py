"""Connections of an HTTP provider: a pool that follows the model's concurrency and stays fast at 64-256 calls
in flight.

httpx's connection pool matches every queued request against every connection each time a request starts or
ends (``httpcore``'s ``_assign_requests_to_connections``), so its cost per call grows with the square of the
calls in flight (encode/httpx#3215): one ``AsyncClient`` with 64 connections and 64 calls in flight served
about 130 requests/s against a server answering in 50 ms (limit 1,280/s), split into clients of 8 connections
about 870-1,100/s, and aiohttp (a C HTTP parser) about 1,200/s; at 256 in flight (client CPU-bound on 2 cores)
httpx in shards about 950/s, aiohttp about 2,700/s (``benchmarks/http_concurrency.py``, machine under load).

So :class:`HttpPool` sends through aiohttp when it is installed (``pip install 'knowgap[fast-http]'``) and
otherwise through httpx clients of ``SHARD`` connections each (as many as the model's concurrency needs, each
call through the one with the fewest calls in flight); ``KNOWGAP_HTTP_CLIENT=httpx`` (or ``aiohttp``) picks one.
Either way callers see one answer type, :class:`HttpAnswer` (status, headers, body: an ``httpx.Response`` is one;
through aiohttp a :class:`PooledAnswer`, since building an ``httpx.Response`` for each answer and reading it back
was about a tenth of knowgap's CPU per call at 256 in flight), and ``httpx.HTTPError`` for a time-out or a lost or
refused connection.
"""

from __future__ import annotations

import json as jsonlib
import os
from typing import Any, Protocol

import httpx

from knowgap.errors import exception_text
from knowgap.models.errors import ModelUnavailableError

SHARD = 8
"""Connections per httpx client (measured best of 4, 8, 16, 32 at 64 and 256 calls in flight)."""

DEFAULT_CONNECTIONS = 64
"""Connections when nobody said how many calls go at once (a provider used outside a gateway)."""

CLIENT_ENV = "KNOWGAP_HTTP_CLIENT"
_BODY_JSON = jsonlib.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def http_client_kind() -> str:
    """``aiohttp`` or ``httpx``: ``KNOWGAP_HTTP_CLIENT`` when set, else aiohttp when it is installed."""
    wanted = os.environ.get(CLIENT_ENV, "").strip().lower()
    if wanted not in ("", "aiohttp", "httpx"):
        raise ModelUnavailableError(f"{CLIENT_ENV} must be aiohttp or httpx, got {wanted!r}")
    if wanted == "httpx":
        return "httpx"
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        if wanted == "aiohttp":
            raise ModelUnavailableError(f"{CLIENT_ENV}=aiohttp but aiohttp is not installed "
                             "(pip install 'knowgap[fast-http]')") from None
        return "httpx"
    return "aiohttp"


class Headers(Protocol):
    def get(self, key: str, default: None = None) -> str | None:
        """The header's value (names match whatever their case), or None."""
        ...


class HttpAnswer(Protocol):
    """An HTTP answer as the providers read it (``httpx.Response`` is one)."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Headers: ...

    @property
    def text(self) -> str: ...

    def json(self) -> Any: ...


class PooledAnswer:
    """An answer read through aiohttp: its status, headers (case-insensitive) and whole body."""

    __slots__ = ("status_code", "headers", "content")

    def __init__(self, status_code: int, headers: Headers, content: bytes) -> None:
        self.status_code = status_code
        self.headers = headers
        self.content = content

    @property
    def text(self) -> str:
        """The body decoded as its Content-Type's charset says (UTF-8 when it says none or one Python does not
        know), bad bytes replaced, as httpx decodes it."""
        charset = "utf-8"
        for param in (self.headers.get("content-type") or "").split(";")[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "charset" and value.strip().strip('"'):
                charset = value.strip().strip('"')
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body parsed as JSON (ValueError when it is not)."""
        return jsonlib.loads(self.content)


class HttpPool:
    """Keep-alive connections for up to ``connections`` calls in flight."""

    def __init__(self, *, headers: dict[str, str], timeout: httpx.Timeout,
                 connections: int = DEFAULT_CONNECTIONS) -> None:
        self.kind = http_client_kind()
        self.connections = connections
        self._headers = headers
        self._timeout = timeout
        self._session: Any = None
        self._proxies: dict[str, str | None] = {}
        self._clients: list[httpx.AsyncClient] = []
        self._in_flight: list[int] = []
        if self.kind == "httpx":
            shards = max(1, -(-connections // SHARD))
            per_shard = max(1, -(-connections // shards))
            limits = httpx.Limits(max_connections=per_shard, max_keepalive_connections=per_shard)
            tls = httpx.create_ssl_context()  # one for all shards: loading the CA bundle takes ~30 ms each time
            self._clients = [httpx.AsyncClient(headers=headers, timeout=timeout, limits=limits, verify=tls)
                             for _ in range(shards)]
            self._in_flight = [0] * shards

    @classmethod
    def json_api(cls, *, bearer: str | None, timeout_s: float | None, connections: int) -> HttpPool:
        """The pool of a JSON API provider: JSON bodies, ``Authorization: Bearer`` when ``bearer`` is given, a
        10 s connect time-out and no read limit of its own unless ``timeout_s`` (the model client's per-call
        time-out, --timeout, rules)."""
        headers = {"Content-Type": "application/json"}
        if bearer:
            headers["Authorization"] = f"Bearer {bearer}"
        return cls(headers=headers, timeout=httpx.Timeout(timeout_s, connect=10.0), connections=connections)

    async def post(self, url: str, *, json: Any) -> HttpAnswer:
        """POST ``json`` to ``url``; the answer (any status); httpx.HTTPError when there is none (a time-out, a lost
        or refused connection)."""
        if self.kind == "aiohttp":
            return await self._post_aiohttp(url, json)
        shard = min(range(len(self._clients)), key=self._in_flight.__getitem__)
        self._in_flight[shard] += 1
        try:
            return await self._clients[shard].post(url, json=json)
        finally:
            self._in_flight[shard] -= 1

    async def _post_aiohttp(self, url: str, payload: Any) -> PooledAnswer:
        import aiohttp

        if self._session is None:
            timeout = aiohttp.ClientTimeout(total=None, connect=self._timeout.connect,
                                            sock_read=self._timeout.read)
            self._session = aiohttp.ClientSession(
                headers=self._headers, timeout=timeout,
                connector=aiohttp.TCPConnector(limit=self.connections, limit_per_host=self.connections))
        body = _BODY_JSON.encode(payload).encode("utf-8")
        try:
            async with self._session.post(url, data=body, headers={"Content-Type": "application/json"},
                                          proxy=self._proxy(url)) as resp:
                content = await resp.read()  # decompressed already
                return PooledAnswer(resp.status, resp.headers, content)
        except TimeoutError as exc:
            raise httpx.ReadTimeout(f"no answer from {url} in time", request=httpx.Request("POST", url)) from exc
        except aiohttp.ClientError as exc:
            said = str(exc).strip()
            raise httpx.ConnectError(f"{type(exc).__name__}: {said}" if said else exception_text(exc),
                                     request=httpx.Request("POST", url)) from exc

    def _proxy(self, url: str) -> str | None:
        """The proxy the environment names for ``url`` (HTTP(S)_PROXY, NO_PROXY), as httpx would use it; looked up
        once per URL (aiohttp's own trust_env looks it up in a thread on every request)."""
        if url not in self._proxies:
            from aiohttp.helpers import get_env_proxy_for_url
            from yarl import URL

            try:
                proxy, _ = get_env_proxy_for_url(URL(url))
                self._proxies[url] = str(proxy)
            except LookupError:
                self._proxies[url] = None
        return self._proxies[url]

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()
        if self._session is not None:
            await self._session.close()
            self._session = None
