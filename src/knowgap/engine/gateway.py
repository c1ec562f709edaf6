"""The model gateway: the one way knowgap calls a model, inside a run and outside it (judging a file, generating
a dataset, the extract summarizer, the label tools).

``ModelGateway`` turns a model spec and a role into calls with, around the provider: the response cache
(keyed by the model's identity, the whole request and the repeat index), a concurrency limit per model, a
per-call time-out, retries with exponential backoff and full jitter on transient errors (429, 5xx, time-outs,
lost connections; never sooner than a server's Retry-After), optional requests- and tokens-per-minute limits per
model, and token / latency / cost accounting per role. A 429 (or any answer with a Retry-After) pauses the
model's whole pool, not only the refused call: no call of that model is sent before the pause ends (see
:mod:`knowgap.engine.ratelimit`).
It builds each provider once per spec (from the registry, or takes a ready one), calls its ``prepare()``,
and closes them all at the end. Calls are async (``call``, ``generate``, ``call_chains``) or sync
(``call_sync``, ``text``, ``texts``: one private event loop per gateway, for commands that are not async;
``texts`` sends several requests at once, up to the model's concurrency limit).

``ModelClient`` is its per-model part: one provider with its semaphore, retry policy and usage.
No other module calls a provider's ``chat`` (tests/engine/test_gateway.py checks the source).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Coroutine, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from knowgap.engine.cache import ResponseCache, cache_key
from knowgap.engine.inflight import InFlight, follower_record
from knowgap.engine.ratelimit import PoolPause, RateLimits
from knowgap.engine.records import CallRecord, ModelUsage
from knowgap.errors import KnowgapError
from knowgap.models.base import ChatModel
from knowgap.models.errors import ModelError, TransientModelError
from knowgap.models.registry import create_model
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.paths import cache_path
from knowgap.redaction import redact

if TYPE_CHECKING:
    from knowgap.engine.tracing import RunTracer

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
    """One model behind the gateway: its provider, concurrency limit, retry policy, cache access and usage."""

    def __init__(self, model: ChatModel, *, run_id: str, cache: ResponseCache | None, use_cache: bool,
                 concurrency: int | None, retry: RetryPolicy,
                 price: tuple[float, float] | None = None, rpm: int | None = None,
                 tpm: int | None = None) -> None:
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
        model.use_concurrency(self.limit)
        self.rate_limits = RateLimits(rpm, tpm)
        """The model's --rpm / --tpm token buckets."""
        self.pause = PoolPause()
        """Set by a 429: no call of this model is sent before it ends."""
        self._rng = random.Random(hash(run_id) & 0xFFFF)
        self.usage: dict[str, ModelUsage] = {}
        self.provider_calls = 0
        """Calls that reached the provider (cache hits excluded, retries included)."""
        self.inflight = InFlight()
        """Identical calls in flight at once are made once (:mod:`knowgap.engine.inflight`)."""
        self.tracer: RunTracer | None = None
        """The run's OpenTelemetry spans (``--otel``): each call in a span of its own; None: no tracing."""

    def _account(self, role: str) -> ModelUsage:
        return self.usage.setdefault(role, ModelUsage())

    async def call(self, role: str, request: ChatRequest, repeat: int) -> CallRecord:
        """One call; one identical to a call in flight waits for that call's record (:mod:`.inflight`)."""
        key = cache_key(self.identity, request, repeat)
        call = self.inflight.run(key, lambda: self._call(role, request, key),
                                 lambda first: follower_record(first, role, self._account(role)))
        if self.tracer is not None:
            return await self.tracer.call(self.model, role, request, call)
        return await call

    async def _call(self, role: str, request: ChatRequest, key: str) -> CallRecord:
        usage = self._account(role)
        if request.top_logprobs and not self.model.supports_logprobs:
            usage.failed_calls += 1
            return CallRecord(role=role, model=self.spec, request=request,
                              error=f"{redact(self.spec)}: this provider cannot return token log-probabilities "
                                    "(ChatRequest.top_logprobs); use a local: or openai-compat: model")
        if self.cache is not None:
            hit = self.cache.get(key, run_id=None if self.use_cache else self.run_id)
            if hit is not None:
                hit.cached = True
                usage.calls += 1
                usage.cached_calls += 1
                return CallRecord(role=role, model=self.spec, request=request, response=hit, cached=True)
        attempt = 0
        own_pause = None  # the end of the pool pause this call set and has slept out itself
        while True:
            try:
                response = await self._attempt(request, own_pause)
                break
            except (TimeoutError, ModelError) as exc:
                error: ModelError = exc if isinstance(exc, ModelError) else TransientModelError(
                    f"{self.spec}: no answer within {self.retry.timeout_s:g}s{self.model.timeout_note()}")
                if not error.transient or attempt >= self.retry.max_retries:
                    usage.failed_calls += 1
                    usage.retries += attempt
                    message = redact(str(error))
                    if error.transient:
                        message += f" (gave up after {attempt + 1} attempts)"
                    return CallRecord(role=role, model=self.spec, request=request, error=message,
                                      attempts=attempt + 1)
                wait = self.retry.delay(attempt, self._rng, getattr(error, "retry_after", None))
                own_pause = None
                if error.status == 429 or getattr(error, "retry_after", None) is not None:
                    # rate-limited (or told when to come back): the whole pool waits, not only this call
                    own_pause = self.pause.extend(wait)
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

    async def _attempt(self, request: ChatRequest, own_pause: float | None = None) -> ChatResponse:
        """One attempt at the provider: in the model's concurrency limit, after any pause a 429 set (unless it is
        ``own_pause``, the pause this call set and slept out) and the model's rate limits; raises what the
        provider raises (or TimeoutError)."""
        async with self._sem:
            if self.pause.until != own_pause:
                await self.pause.wait()
            taken = await self.rate_limits.before(request) if self.rate_limits.active else 0
            self.provider_calls += 1
            timeout = self.retry.timeout_s if self.model.interruptible else None
            try:
                async with asyncio.timeout(timeout):  # no task per call, as asyncio.wait_for makes
                    response = await self.model.chat(request)
            except BaseException:
                self.rate_limits.after(taken, None)
                raise
            self.rate_limits.after(taken, response.usage.prompt_tokens + response.usage.completion_tokens)
            return response


T = TypeVar("T")

NextRequest = Callable[[int, list[str]], ChatRequest | None]
"""``(chain index, the chain's answers so far) -> its next request``, None when the chain is done
(:meth:`ModelGateway.call_chains`)."""


class ModelCallFailed(KnowgapError):
    """A call that failed for good (a permanent error, or a transient one past the retries)."""


class ModelGateway:
    """Model spec + role -> cached, retried, rate-limited, accounted calls; one provider per spec.

    ``providers`` are ready-made providers by spec (tests, benchmarks, Python users); other specs are built by
    :func:`~knowgap.models.registry.create_model`. ``prices`` are USD per million (prompt, completion) tokens by
    spec. ``rpm`` / ``tpm``: requests / tokens per minute, a limit for each model (spec) on its own.
    ``ModelGateway.open(run_id=...)`` uses (and closes) the user's response cache; a gateway given ``cache=None``
    caches nothing.
    """

    def __init__(self, *, run_id: str, cache: ResponseCache | None = None, use_cache: bool = True,
                 concurrency: int | None = None, retry: RetryPolicy | None = None,
                 prices: Mapping[str, Sequence[float]] | None = None,
                 providers: Mapping[str, ChatModel] | None = None, rpm: int | None = None,
                 tpm: int | None = None, prepare: bool = True) -> None:
        self.run_id = run_id
        self.prepare = prepare
        """Prepare each provider when it is made (load a local model); off where the calls run elsewhere (the
        driver of a Ray run only needs the models' identities)."""
        self.rpm = rpm
        self.tpm = tpm
        self.cache = cache
        self.use_cache = use_cache
        self.concurrency = concurrency
        self.retry = retry or RetryPolicy()
        self.prices = dict(prices or {})
        self.providers = dict(providers or {})
        self._clients: dict[str, ModelClient] = {}
        self._owns_cache = False
        self._loop: asyncio.Runner | None = None

    @classmethod
    def open(cls, *, run_id: str, **options: Any) -> ModelGateway:
        """A gateway over the response cache in ``KNOWGAP_HOME`` (closed with the gateway)."""
        gateway = cls(run_id=run_id, cache=ResponseCache(cache_path()), **options)
        gateway._owns_cache = True
        return gateway

    # models -----------------------------------------------------------------------------------
    def client(self, spec: str) -> ModelClient:
        """The client of ``spec``, made (and its provider prepared: a local pack loaded) on first use."""
        client = self._clients.get(spec)
        if client is None:
            provider = self.providers.get(spec) or create_model(spec)
            if self.prepare:
                provider.prepare()
            price = self.prices.get(spec)
            client = ModelClient(provider, run_id=self.run_id, cache=self.cache, use_cache=self.use_cache,
                                 concurrency=self.concurrency, retry=self.retry,
                                 price=(float(price[0]), float(price[1])) if price else None,
                                 rpm=self.rpm, tpm=self.tpm)
            self._clients[spec] = client
        return client

    def clients(self, roles: Mapping[str, str]) -> dict[str, ModelClient]:
        """A client for each role (role -> spec); roles that name the same spec share one."""
        return {role: self.client(spec) for role, spec in roles.items()}

    @property
    def provider_calls(self) -> int:
        """Calls that reached a provider (cache hits excluded, retries included)."""
        return sum(c.provider_calls for c in self._clients.values())

    @property
    def calls(self) -> int:
        """Calls asked of the gateway, answered from the cache or not, failed ones included."""
        return sum(u.calls + u.failed_calls for c in self._clients.values() for u in c.usage.values())

    # calls ------------------------------------------------------------------------------------
    async def call(self, spec: str, role: str, request: ChatRequest, repeat: int = 0) -> CallRecord:
        """One call; a failure is in the record's ``error`` (with the attempts made), never raised."""
        return await self.client(spec).call(role, request, repeat)

    async def generate(self, spec: str, role: str, request: ChatRequest, repeat: int = 0) -> ChatResponse:
        """One call's response; a failure raises :class:`ModelCallFailed`."""
        record = await self.call(spec, role, request, repeat)
        if record.response is None:
            raise ModelCallFailed(f"{role} model {redact(spec)} failed: {record.error}")
        return record.response

    def call_sync(self, spec: str, role: str, request: ChatRequest, repeat: int = 0) -> CallRecord:
        """``call`` from code that is not async (on the gateway's own event loop)."""
        return self._run(self.call(spec, role, request, repeat))

    def text(self, spec: str, role: str) -> Callable[[ChatRequest], str]:
        """A sync ``request -> response text`` function for ``role`` on ``spec`` (generators, detectors); the
        model is made now, so a missing model fails before any work."""
        self.client(spec)

        def answer(request: ChatRequest) -> str:
            return self._run(self.generate(spec, role, request)).text

        return answer

    def texts(self, spec: str, role: str) -> TextBatch:
        """Sync calls of ``role`` on ``spec`` that run concurrently up to the model's concurrency limit (the
        batch's ``limit``): several requests, answered in their order, or several chains of dependent calls (see
        :meth:`call_chains`). A failure raises :class:`ModelCallFailed`, as :meth:`text` does. The model is made
        now, so a missing model fails before any work."""
        return TextBatch(self, spec, role)

    async def call_chains(self, spec: str, role: str, count: int, step: NextRequest,
                          done: Callable[[int], None] | None = None) -> list[list[CallRecord]]:
        """``count`` chains of calls, concurrently: chain ``i`` makes the call ``step(i, its answers so far)``
        while that is not None, one call after another, then ``done(i)`` is called. The chains are started in
        their order, up to the model's concurrency limit at once (a new one as soon as one ends), so one call at a
        time makes exactly the calls of a caller that runs the chains one by one, in that order; each call has the
        cache, coalescing, retries and accounting of :meth:`call`. Returns each chain's records, the last one
        failed when a call failed for good. After a failure no chain after the failed one starts or goes on (its
        records stop there; calls in flight end and their responses reach the cache), while the chains before it
        run to their end, so the first failed record in chain order is the one a one-by-one caller meets first."""
        client = self.client(spec)
        chains: list[list[CallRecord]] = [[] for _ in range(count)]
        order = iter(range(count))  # shared by the workers: each chain is taken once, in order
        failed = count  # the first chain with a failed call (count: none)

        async def worker() -> None:
            nonlocal failed
            for index in order:
                answers: list[str] = []
                while index < failed and (request := step(index, answers)) is not None:
                    record = await client.call(role, request, 0)
                    chains[index].append(record)
                    if record.response is None:
                        failed = min(failed, index)
                        return
                    answers.append(record.response.text)
                if index >= failed:
                    return
                if done is not None:
                    done(index)

        # every worker ends before this returns (a raising ``step`` or ``done`` stops its own worker only), so no
        # call of this batch is left running on the gateway's loop
        ended = await asyncio.gather(*(worker() for _ in range(min(client.limit, count))), return_exceptions=True)
        for outcome in ended:
            if isinstance(outcome, BaseException):
                raise outcome
        return chains

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._loop is None:
            self._loop = asyncio.Runner()
        return self._loop.run(coro)

    # closing ----------------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Release every provider (connections, loaded models)."""
        for client in self._clients.values():
            await client.model.aclose()

    def close(self) -> None:
        """Release every provider and, for a gateway from ``open``, the response cache."""
        try:
            if self._clients:
                self._run(self.aclose())
        finally:
            if self._loop is not None:
                self._loop.close()
                self._loop = None
            if self._owns_cache and self.cache is not None:
                self.cache.close()

    def __enter__(self) -> ModelGateway:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class TextBatch:
    """Calls of one role on one model for commands that are not async (:meth:`ModelGateway.texts`), run
    concurrently up to ``limit``, the model's concurrency limit (so an embedded model decodes several at once, an
    HTTP provider serves several): ``batch(requests)`` answers several requests, ``batch.chains(count, step)``
    makes several chains of dependent calls (a question, then its answer). A caller that must stop early (after
    enough answers) sends its work in waves of about ``limit``."""

    def __init__(self, gateway: ModelGateway, spec: str, role: str) -> None:
        self.gateway = gateway
        self.spec = spec
        self.role = role
        self.limit = gateway.client(spec).limit
        """Calls of this model in flight at once (the gateway's limit for it)."""

    def __call__(self, requests: Sequence[ChatRequest], done: Callable[[int], None] | None = None) -> list[str]:
        """The response texts of ``requests`` in order (``done(index)`` is called as each is answered, for
        progress bars); the first call (in order) that failed for good raises :class:`ModelCallFailed`, after the
        calls in flight have ended, and no request after it is started."""
        return [texts[0] for texts in self.chains(len(requests), lambda i, got: None if got else requests[i], done)]

    def chains(self, count: int, step: NextRequest, done: Callable[[int], None] | None = None) -> list[list[str]]:
        """The answers of ``count`` chains of calls (:meth:`ModelGateway.call_chains`): chain ``i`` asks
        ``step(i, its answers so far)`` until that is None; ``done(i)`` is called as chain ``i`` ends. The first
        call (in chain order) that failed for good raises :class:`ModelCallFailed`, after the calls in flight have
        ended."""
        chains = self.gateway._run(self.gateway.call_chains(self.spec, self.role, count, step, done))
        texts = []
        for records in chains:
            for record in records:
                if record.response is None:
                    raise ModelCallFailed(f"{self.role} model {redact(self.spec)} failed: {record.error}")
            texts.append([record.response.text for record in records if record.response is not None])
        return texts
