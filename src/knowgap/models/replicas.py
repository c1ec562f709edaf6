"""Several endpoints for one model: ``openai-compat:MODEL@URL1,URL2,...``.

:class:`ReplicaPool` is one provider over an :class:`~knowgap.models.openai_http.OpenAIChatModel` per URL, all
serving the same model. Each call goes to the live replica with the fewest calls outstanding (ties in turn),
so a slow replica gets fewer calls. A replica whose connection is refused, lost or timed out (an
:class:`~knowgap.models.http_errors.EndpointUnreachable`), or under which a call was abandoned (the gateway's
per-call time-out), is taken out and the failed call goes to another live replica at once. Calls in flight on
it fail at once when its server died (and move the same way); after a time-out, when they might hang too, they
are moved at once. So a trial's call is answered once and cached once. A replica taken out is probed
(``GET /models``) after 1 s, then 2, 4... up to 30 s, and used again once it answers. An HTTP error status
(429, 5xx) is the request's, not the replica's: it goes back to the gateway's retry as with one endpoint.
When no replica is live (and none answers its probe), the call fails with a transient error naming every
replica and why it is out, and the gateway retries it as usual.

Identity (the response cache and ``--resume``): the first URL's, exactly as ``openai-compat:MODEL@URL1`` alone.
The replicas serve one model, so which one answered does not matter, and adding replicas after the first keeps
the cache and the identity; putting another URL first names another model (docs/scale.md says why).

The list is split at every comma; each item must be an http(s) URL. A comma inside a URL is written ``%2C``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from knowgap.models.base import ChatModel
from knowgap.models.errors import ModelUnavailableError, TransientModelError
from knowgap.models.http_errors import EndpointUnreachable
from knowgap.models.identity import url_without_credentials
from knowgap.models.openai_http import OpenAIChatModel
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.redaction import redact

log = logging.getLogger("knowgap.models")

SEPARATOR = ","
BACKOFF_START_S = 1.0
BACKOFF_CAP_S = 30.0
PROBE_TIMEOUT_S = 5.0


def split_replica_urls(spec: str, text: str) -> list[str]:
    """The URLs of ``text`` (``URL1,URL2,...``). ModelUnavailableError naming the item when one is empty, not an
    http(s) URL (a comma inside a URL is written %2C) or listed twice."""
    items = [item.strip() for item in text.split(SEPARATOR)]
    seen: dict[str, int] = {}

    def shown(item: str) -> str:
        # ``text`` has its ${NAME} references filled in: a piece of one (a secret holding a comma) is not shown
        return "(hidden: the spec names environment variables)" if "${" in spec else f"'{redact(item)}'"

    for number, item in enumerate(items, 1):
        where = f"bad model spec '{redact(spec)}': replica {number} of {len(items)}"
        if not item:
            raise ModelUnavailableError(f"{where} is empty (a stray comma?); expected "
                                        "openai-compat:MODEL@URL1,URL2,... with every URL starting with http(s)://")
        if not item.startswith(("http://", "https://")):
            raise ModelUnavailableError(
                f"{where}, {shown(item)}, is not an http:// or https:// URL; replicas are separated by commas, "
                "so write a comma inside a URL (or in a ${NAME} it names) as %2C")
        try:
            endpoint = url_without_credentials(item)
        except ValueError as exc:  # a port that is not a number, a bad IPv6 literal
            why = "unreadable" if "${" in spec else str(exc)
            raise ModelUnavailableError(f"{where}, {shown(item)}, is not a valid URL ({why}); a comma inside a URL "
                                        "(or in a ${NAME} it names) is written %2C") from None
        if endpoint in seen:
            raise ModelUnavailableError(f"{where} repeats replica {seen[endpoint]} ({shown(endpoint)}); "
                                        "list each once")
        seen[endpoint] = number
    return items


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class _Moved(Exception):
    """The call's replica was taken out while the call was in flight: send it to another one."""


@dataclass(eq=False)
class Replica:
    """One endpoint of a pool: its provider, the calls outstanding on it and its counters."""

    model: OpenAIChatModel
    url: str
    """Its base URL without credentials, redacted (for messages, logs and the manifest)."""
    outstanding: int = 0
    answered: int = 0
    failures: int = 0
    """Calls that failed on it and went to another replica (refused, lost, timed out, abandoned)."""
    taken_out: int = 0
    """Times it was taken out."""
    taken_out_at: str | None = None
    """When it was last taken out (UTC)."""
    down: bool = False
    retry_at: float = 0.0
    backoff_s: float = BACKOFF_START_S
    reason: str = ""
    """Why it was last taken out."""
    inflight: set[asyncio.Future[ChatResponse]] = field(default_factory=set)
    probe: asyncio.Task[None] | None = None

    def counters(self) -> str:
        text = f"{self.url}: {self.answered} answered, {self.failures} failed"
        if self.taken_out:
            text += f", taken out {self.taken_out}x (last at {self.taken_out_at}"
            text += f"; still out: {self.reason})" if self.down else ")"
        return text


class ReplicaPool(ChatModel):
    """``openai-compat:MODEL@URL1,URL2,...``: one model served by several endpoints (see the module docstring)."""

    supports_tools = True
    supports_logprobs = True

    def __init__(self, spec: str, model: str, urls: list[str], *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.spec = spec
        self.model = model
        self.replicas = [Replica(OpenAIChatModel.openai_compat(f"openai-compat:{model}@{redact(url)}", model, url),
                                 redact(url_without_credentials(url))) for url in urls]
        self.default_concurrency = OpenAIChatModel.default_concurrency * len(urls)
        """Each endpoint's default, times the endpoints."""
        self._clock = clock
        self._turn = 0

    @classmethod
    def parse(cls, spec: str, model: str, urls: str) -> ReplicaPool:
        return cls(spec, model, split_replica_urls(spec, urls))

    def use_concurrency(self, limit: int) -> None:
        """Each replica may carry every call in flight (the others may be out), so each sizes its pool to all."""
        for replica in self.replicas:
            replica.model.use_concurrency(limit)

    def identity(self) -> str:
        """The first replica's identity: the replicas serve one model (see the module docstring)."""
        return self.replicas[0].model.identity()

    def describe(self) -> dict[str, str]:
        return {"spec": redact(self.spec), "backend": f"openai-compatible HTTP, {len(self.replicas)} replicas",
                "base_url": self.replicas[0].url, "model": self.model,
                "replicas": ", ".join(r.url for r in self.replicas)}

    def counters(self) -> str:
        """Per replica: calls answered, calls failed over, times taken out and when."""
        return "; ".join(r.counters() for r in self.replicas)

    # calls ------------------------------------------------------------------------------------
    async def chat(self, request: ChatRequest) -> ChatResponse:
        tried: set[Replica] = set()
        while True:
            replica = await self._choose(tried)
            if replica is None:
                raise TransientModelError(redact(
                    f"{self.spec}: no replica answers ("
                    + "; ".join(f"{r.url}: {r.reason if r.down else 'back, but this call failed there already'}"
                                for r in self.replicas) + ")"))
            tried.add(replica)
            try:
                return await self._send(replica, request)
            except _Moved:
                continue
            except EndpointUnreachable as exc:
                replica.failures += 1
                self._take_out(replica, str(exc).removeprefix(f"{replica.model.spec}: ").removeprefix(
                    f"cannot reach {redact(replica.model.base_url)}: "), move_calls=exc.timed_out)

    async def _send(self, replica: Replica, request: ChatRequest) -> ChatResponse:
        call = asyncio.ensure_future(replica.model.chat(request))
        replica.inflight.add(call)
        replica.outstanding += 1
        try:
            response = await call
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # our caller gave up: the per-call time-out, or the run stops
                replica.failures += 1
                self._take_out(replica, "a call was abandoned (no answer within the per-call time-out, or the run "
                                        "stopped)", move_calls=True)
                raise
            replica.failures += 1
            raise _Moved from None  # the replica was taken out under this call
        finally:
            replica.outstanding -= 1
            replica.inflight.discard(call)
        replica.answered += 1
        replica.backoff_s = BACKOFF_START_S
        return response

    async def _choose(self, tried: set[Replica]) -> Replica | None:
        """The live replica with the fewest calls outstanding (not one this call tried), probing replicas that
        are due; when none is live, waits for the probes. None when no replica can take the call."""
        now = self._clock()
        for replica in self.replicas:
            if replica.down and replica.probe is None and now >= replica.retry_at:
                replica.probe = asyncio.ensure_future(self._probe(replica))
        live = [r for r in self.replicas if not r.down and r not in tried]
        if not live:
            probes = [r.probe for r in self.replicas if r.probe is not None and r not in tried]
            if probes:
                await asyncio.wait(probes)
            live = [r for r in self.replicas if not r.down and r not in tried]
        if not live:
            return None
        self._turn += 1
        n = len(self.replicas)
        order = {id(r): (i - self._turn) % n for i, r in enumerate(self.replicas)}
        return min(live, key=lambda r: (r.outstanding, order[id(r)]))

    def _take_out(self, replica: Replica, reason: str, *, move_calls: bool) -> None:
        """No new call goes to ``replica`` until it answers a probe. ``move_calls`` (it did not answer in time, so it
        may hold others that never will): its calls in flight go to another replica now. After a refused or lost
        connection they are left alone: on a dead server they fail at once and move then; on a live one (a single
        stale connection) they finish."""
        replica.reason = redact(reason)
        moved = [c for c in replica.inflight if not c.done()] if move_calls else []
        for call in moved:
            call.cancel()
        if replica.down:
            return
        replica.down = True
        replica.taken_out += 1
        replica.taken_out_at = _utc_now()
        wait = self._back_off(replica)
        log.warning("%s: replica %s taken out (%s); probed again in %.0f s%s", redact(self.spec), replica.url,
                    replica.reason, wait, f"; {len(moved)} call(s) in flight on it moved to another replica"
                    if moved else "")

    async def _probe(self, replica: Replica) -> None:
        try:
            alive = await replica.model.answers(PROBE_TIMEOUT_S)
        except Exception:  # a probe that breaks is a probe that failed; it must not end the run
            alive = False
        finally:
            replica.probe = None
        if alive:
            replica.down = False
            log.warning("%s: replica %s answers again; back in use", redact(self.spec), replica.url)
        else:
            self._back_off(replica)

    def _back_off(self, replica: Replica) -> float:
        """Probe ``replica`` after its back-off, which doubles (up to the cap) until a call succeeds there."""
        wait = replica.backoff_s
        replica.retry_at = self._clock() + wait
        replica.backoff_s = min(BACKOFF_CAP_S, wait * 2)
        return wait

    async def aclose(self) -> None:
        for replica in self.replicas:
            if replica.probe is not None:
                replica.probe.cancel()
                replica.probe = None
        if any(r.answered or r.failures for r in self.replicas):
            level = logging.WARNING if any(r.taken_out for r in self.replicas) else logging.INFO
            log.log(level, "%s: replicas: %s", redact(self.spec), self.counters())
        for replica in self.replicas:
            await replica.model.aclose()
