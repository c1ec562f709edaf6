"""How fast a model's calls may go: per-model rate limits (requests and tokens per minute, token buckets) and the
pause a rate-limited server puts on the model's whole pool.

- :class:`TokenBucket` refills ``per_minute / 60`` units a second up to one second's worth (at least one unit), so
  calls are spread evenly instead of bursting a minute's allowance at the start. A take larger than the bucket
  waits for a full bucket and leaves it in debt, which later takes wait out; takers are served first come,
  first served.
- :class:`RateLimits` is one model's ``--rpm`` and ``--tpm``: a request takes one request and its estimated tokens
  (:func:`estimate_tokens`: the prompt's UTF-8 bytes / 4 plus ``max_tokens``, as OpenAI itself counts a request
  against its limit) before it is sent; when the answer comes, the estimate is corrected to the prompt +
  completion tokens the server reported (a failed attempt gives its tokens back).
- :class:`PoolPause`: when a server answers 429, every call of that model waits until the pause ends before it
  is sent (not only the call that was refused).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from knowgap.models.types import ChatRequest

Clock = Callable[[], float]


def estimate_tokens(request: ChatRequest) -> int:
    """Tokens a request may count against a tokens-per-minute limit before its answer says: about one token per 4
    bytes of its messages (a CJK character is 3 bytes), plus all of ``max_tokens``."""
    size = sum(len(m.content.encode("utf-8")) for m in request.messages)
    return size // 4 + 1 + request.max_tokens


class TokenBucket:
    """Units per minute, in a bucket holding one second's worth (at least 1)."""

    def __init__(self, per_minute: float, *, clock: Clock = time.monotonic) -> None:
        if per_minute <= 0:
            raise ValueError(f"a rate limit must be > 0 per minute, got {per_minute}")
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate)
        self.level = self.capacity
        self._clock = clock
        self._stamp = clock()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self.level = min(self.capacity, self.level + (now - self._stamp) * self.rate)
        self._stamp = now

    async def take(self, amount: float) -> None:
        """Wait until ``amount`` (or a full bucket, for more than it holds) is there, then take it."""
        async with self._lock:
            need = min(amount, self.capacity)
            self._refill()
            while self.level < need:
                await asyncio.sleep((need - self.level) / self.rate)
                self._refill()
            self.level -= amount

    def give(self, amount: float) -> None:
        """Put ``amount`` back (negative: take more, as debt) after the fact."""
        self._refill()
        self.level = min(self.capacity, self.level + amount)


class RateLimits:
    """One model's requests-per-minute and tokens-per-minute limits (either may be None: no limit)."""

    def __init__(self, rpm: int | None = None, tpm: int | None = None, *, clock: Clock = time.monotonic) -> None:
        self.rpm = rpm
        self.tpm = tpm
        self._requests = TokenBucket(rpm, clock=clock) if rpm else None
        self._tokens = TokenBucket(tpm, clock=clock) if tpm else None

    @property
    def active(self) -> bool:
        return self._requests is not None or self._tokens is not None

    async def before(self, request: ChatRequest) -> int:
        """Wait for the request's turn; returns the tokens taken for it (0 without a tokens limit)."""
        if self._requests is not None:
            await self._requests.take(1)
        if self._tokens is None:
            return 0
        estimate = estimate_tokens(request)
        await self._tokens.take(estimate)
        return estimate

    def after(self, taken: int, used: int | None) -> None:
        """Correct the tokens taken to those the server reported (``used``; None: the attempt failed, nothing
        counted)."""
        if self._tokens is not None and taken:
            self._tokens.give(taken - (used or 0))


class PoolPause:
    """Until when a model's pool sends nothing (a server's Retry-After, or the backoff after a 429)."""

    def __init__(self, *, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self.until = 0.0
        self.pauses = 0
        """How many times a 429 paused (or lengthened the pause of) the pool."""

    def extend(self, seconds: float) -> float | None:
        """Pause the pool for ``seconds`` from now; returns the pause's new end, or None when it was paused longer
        already."""
        end = self._clock() + seconds
        if end <= self.until:
            return None
        self.until = end
        self.pauses += 1
        return end

    async def wait(self) -> None:
        """Until the pause ends, however often it is lengthened meanwhile."""
        while (left := self.until - self._clock()) > 0:
            until = self.until
            await asyncio.sleep(left)
            if self.until == until:  # not lengthened while this call slept
                return
