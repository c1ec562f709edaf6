"""Identical calls in flight at once are made once: the first goes to the model, the others wait for its record.

Two calls are identical when their response-cache keys are (:func:`knowgap.engine.cache.cache_key`: the model's
identity, the whole request, the repeat index). The response cache already answers an identical call that comes
after one has finished; :class:`InFlight` covers the window while the first is still running, which is when the
duplicates of a concurrent run arrive (extract's clean runs of every adversarial variant of one review, abstain's
HyDE call under each system prompt, a judge asked the same thing by several trials). It works with the cache off
too (a gateway without one, ``--no-cache``).

What the waiters get back (:func:`follower_record`, applied by the gateway): a record of their own (their role)
with a copy of the first call's response marked ``cached`` (like a cache hit: a call and a cached call, with no
tokens, latency or cost in the usage, which so counts each provider call once). When the first call failed for good
(after its own retries), every waiter gets the same error, also marked ``cached`` and counted as a failed call; they
do not try again: the same request failed a moment ago (a permanent error would recur, a transient one has just
used up its retries).

When the trial that made the first call is cancelled before the call ends, the call is abandoned (as without
coalescing) and the first call waiting for it is made in its place (the others then wait for that one).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import ClassVar

from knowgap.engine.records import CallRecord, ModelUsage


def follower_record(first: CallRecord, role: str, usage: ModelUsage) -> CallRecord:
    """The record of a call answered by an identical one in flight: ``first``'s outcome, for ``role``, marked
    cached (the provider was not asked again), counted in ``role``'s ``usage`` as a cache hit (or a failed call)."""
    if first.response is None:
        usage.failed_calls += 1
        response = None
    else:
        usage.calls += 1
        usage.cached_calls += 1
        response = first.response.model_copy(update={"cached": True}, deep=True)
    return CallRecord(role=role, model=first.model, request=first.request, response=response, error=first.error,
                      cached=True)


class _Abandoned(Exception):
    """The first call's caller was cancelled before its call ended: a waiting call makes the call itself."""


class _Flight:
    """One call in flight: the futures of the identical calls waiting for its record (made only when one waits)."""

    __slots__ = ("waiters",)

    def __init__(self) -> None:
        self.waiters: list[asyncio.Future[CallRecord]] = []

    def settle(self, record: CallRecord | None, error: BaseException | None = None) -> None:
        for waiter in self.waiters:
            if waiter.done():  # its caller was cancelled
                continue
            if error is None:
                assert record is not None
                waiter.set_result(record)
            else:
                waiter.set_exception(error)


class InFlight:
    """The calls of one model now in flight, by cache key; ``run`` makes each key's call once at a time."""

    enabled: ClassVar[bool] = True
    """False sends every call to the model (benchmarks/suite_efficiency.py --coalescing measures both ways)."""

    def __init__(self) -> None:
        self._calls: dict[str, _Flight] = {}
        self.shared = 0
        """Calls answered by an identical call in flight (not sent to the model)."""

    def __len__(self) -> int:
        return len(self._calls)

    async def run(self, key: str, call: Callable[[], Awaitable[CallRecord]],
                  follow: Callable[[CallRecord], CallRecord]) -> CallRecord:
        """``call()``'s record; when a call with ``key`` is already in flight, ``follow`` of that call's record
        instead (the gateway's :func:`follower_record`). A call with no identical one in flight costs two dict
        operations (no task, no future)."""
        if not self.enabled:
            return await call()
        flight = self._calls.get(key)
        if flight is not None:
            waiter: asyncio.Future[CallRecord] = asyncio.get_running_loop().create_future()
            flight.waiters.append(waiter)
            try:
                first = await waiter
            except _Abandoned:
                return await self.run(key, call, follow)
            self.shared += 1
            return follow(first)
        flight = self._calls[key] = _Flight()
        try:
            record = await call()
        except asyncio.CancelledError:
            del self._calls[key]
            flight.settle(None, _Abandoned())
            raise
        except BaseException as exc:  # a bug below the gateway: every waiting call sees it, as the first did
            del self._calls[key]
            flight.settle(None, exc)
            raise
        del self._calls[key]
        flight.settle(record)
        return record
