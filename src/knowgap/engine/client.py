"""The model client: every model call of a run goes through here.

It adds, around a provider: the response cache, a concurrency limit per model, a per-call time-out,
retries with exponential backoff and full jitter on transient errors (429, 5xx, time-outs, lost
connections), and token / latency / cost accounting per role.
"""

from __future__ import annotations

import asyncio
import logging
import random

from knowgap.engine.cache import ResponseCache, cache_key
from knowgap.engine.records import CallRecord, ModelUsage
from knowgap.models.base import ChatModel
from knowgap.models.errors import ModelError, TransientModelError
from knowgap.models.types import ChatRequest
from knowgap.redaction import redact

log = logging.getLogger("knowgap.models")


class RetryPolicy:
    def __init__(self, max_retries: int = 6, base_s: float = 0.5, cap_s: float = 30.0,
                 timeout_s: float = 300.0) -> None:
        self.max_retries = max_retries
        self.base_s = base_s
        self.cap_s = cap_s
        self.timeout_s = timeout_s

    max_retry_after_s = 120.0
    """The longest wait a server's Retry-After can impose on one retry."""

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        """Full jitter: uniform in [0, min(cap, base * 2**attempt)]; never shorter than the server's
        Retry-After (up to ``max_retry_after_s``)."""
        wait = rng.uniform(0, min(self.cap_s, self.base_s * (2 ** attempt)))
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.max_retry_after_s))
        return wait


class ModelClient:
    def __init__(self, model: ChatModel, *, run_id: str, cache: ResponseCache | None, use_cache: bool,
                 concurrency: int | None, retry: RetryPolicy,
                 price: tuple[float, float] | None = None) -> None:
        self.model = model
        self.spec = model.spec
        self.identity = model.identity()
        """What the model is (file sha256, endpoint + model name): the cache key's model part."""
        self.run_id = run_id
        self.cache = cache
        self.use_cache = use_cache
        self.retry = retry
        self.price = price
        self.limit = concurrency or model.default_concurrency
        self._sem = asyncio.Semaphore(self.limit)
        self._rng = random.Random(hash(run_id) & 0xFFFF)
        self.usage: dict[str, ModelUsage] = {}
        self.provider_calls = 0
        """Calls that reached the provider (cache hits excluded, retries included)."""

    def _account(self, role: str) -> ModelUsage:
        return self.usage.setdefault(role, ModelUsage())

    async def call(self, role: str, request: ChatRequest, repeat: int) -> CallRecord:
        usage = self._account(role)
        key = cache_key(self.identity, request, repeat)
        if self.cache is not None:
            hit = self.cache.get(key, run_id=None if self.use_cache else self.run_id)
            if hit is not None:
                hit.cached = True
                usage.calls += 1
                usage.cached_calls += 1
                return CallRecord(role=role, model=self.spec, request=request, response=hit, cached=True)
        attempt = 0
        while True:
            try:
                async with self._sem:
                    self.provider_calls += 1
                    response = await asyncio.wait_for(self.model.chat(request), self.retry.timeout_s)
                break
            except (TimeoutError, ModelError) as exc:
                error: ModelError = exc if isinstance(exc, ModelError) else TransientModelError(
                    f"{self.spec}: no answer within {self.retry.timeout_s:.0f}s")
                if not error.transient or attempt >= self.retry.max_retries:
                    usage.failed_calls += 1
                    usage.retries += attempt
                    message = redact(str(error))
                    if error.transient:
                        message += f" (gave up after {attempt + 1} attempts)"
                    return CallRecord(role=role, model=self.spec, request=request, error=message,
                                      attempts=attempt + 1)
                wait = self.retry.delay(attempt, self._rng, getattr(error, "retry_after", None))
                log.info("retrying %s in %.2fs after: %s", self.spec, wait, redact(str(error)))
                attempt += 1
                await asyncio.sleep(wait)
        response.model = self.spec
        usage.calls += 1
        usage.retries += attempt
        usage.prompt_tokens += response.usage.prompt_tokens
        usage.completion_tokens += response.usage.completion_tokens
        usage.latency_s += response.latency_s
        if self.price is not None:
            cost = (response.usage.prompt_tokens * self.price[0]
                    + response.usage.completion_tokens * self.price[1]) / 1e6
            usage.cost_usd = (usage.cost_usd or 0.0) + cost
        if self.cache is not None:
            self.cache.put(key, self.spec, self.run_id, response, self.identity)
        return CallRecord(role=role, model=self.spec, request=request, response=response, attempts=attempt + 1)
