"""Model calls outside a run (dataset generation, judging a file): the same model layer as a run (response
cache, retries with backoff, concurrency limit, accounting), driven synchronously."""

from __future__ import annotations

import asyncio
from types import TracebackType

from knowgap.engine.cache import ResponseCache
from knowgap.engine.client import ModelClient, RetryPolicy
from knowgap.errors import KnowgapError
from knowgap.models.registry import create_model
from knowgap.models.types import ChatRequest
from knowgap.paths import cache_path


class Caller:
    def __init__(self, spec: str, *, run_id: str, role: str) -> None:
        self.spec, self.role = spec, role
        self.model = create_model(spec)
        self.model.prepare()
        self.cache = ResponseCache(cache_path())
        self.client = ModelClient(self.model, run_id=run_id, cache=self.cache, use_cache=True, concurrency=None,
                                  retry=RetryPolicy())
        self.calls = 0

    def __enter__(self) -> Caller:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def chat(self, request: ChatRequest) -> str:
        record = asyncio.run(self.client.call(self.role, request, 0))
        self.calls += 1
        if record.response is None:
            raise KnowgapError(f"{self.role} model {self.spec} failed: {record.error}")
        return record.response.text

    def close(self) -> None:
        try:
            asyncio.run(self.model.aclose())
        finally:
            self.cache.close()
