"""A server's Retry-After is honoured: parsed from the header, and never undercut by the jittered backoff."""

from __future__ import annotations

import asyncio
import random
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from knowgap.engine import gateway as gateway_module
from knowgap.engine.gateway import ModelClient, RetryPolicy
from knowgap.models.base import ChatModel
from knowgap.models.errors import TransientModelError
from knowgap.models.http_errors import retry_after_seconds
from knowgap.models.types import ChatRequest, ChatResponse
from tests.fakes.models import Failing


def test_retry_after_seconds_parses_delta_and_http_date() -> None:
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds(" 0.5 ") == 0.5
    assert retry_after_seconds("-3") == 0.0
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("") is None
    assert retry_after_seconds("soon") is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 <= (retry_after_seconds(later) or 0) <= 30
    past = format_datetime(datetime.now(UTC) - timedelta(seconds=30), usegmt=True)
    assert retry_after_seconds(past) == 0.0


def test_delay_never_shorter_than_retry_after_and_capped() -> None:
    policy = RetryPolicy(base_s=0.5, cap_s=30.0)
    rng = random.Random(1)
    assert all(policy.delay(0, rng) <= 0.5 for _ in range(100))
    assert all(policy.delay(0, rng, retry_after=4.0) >= 4.0 for _ in range(100))
    assert policy.delay(0, rng, retry_after=10_000.0) == policy.max_retry_after_s


def test_client_waits_what_the_server_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(gateway_module.asyncio, "sleep", fake_sleep)
    model = Failing(TransientModelError("HTTP 429", status=429, retry_after=3.0), times=2)  # throttled twice
    client = ModelClient(model, run_id="r", cache=None, use_cache=False, concurrency=1,
                         retry=RetryPolicy(max_retries=5, base_s=0.01, cap_s=0.02))
    record = asyncio.run(client.call("target", ChatRequest.simple("hi"), 0))
    assert record.response is not None and record.response.text == "ok"
    assert model.calls == 3 and record.attempts == 3
    assert waits == [3.0, 3.0]


class _SlowThread(ChatModel):
    """Answers after ``seconds`` of work in a thread, as in-process llama.cpp does (the work cannot be stopped)."""

    def __init__(self, seconds: float, interruptible: bool) -> None:
        self.spec, self.seconds, self.interruptible, self.calls = "slow:x", seconds, interruptible, 0

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        await asyncio.to_thread(time.sleep, self.seconds)
        return ChatResponse(text="done")


def test_a_call_that_cannot_be_interrupted_is_not_timed_out_and_retried() -> None:
    retry = RetryPolicy(max_retries=2, base_s=0.0, cap_s=0.0, timeout_s=0.05)
    stuck = _SlowThread(0.3, interruptible=False)
    record = asyncio.run(ModelClient(stuck, run_id="r", cache=None, use_cache=False, concurrency=1,
                                     retry=retry).call("target", ChatRequest.simple("hi"), 0))
    assert record.response is not None and record.attempts == 1 and stuck.calls == 1
    remote = _SlowThread(0.3, interruptible=True)  # an HTTP call is abandoned at the time-out and retried
    record = asyncio.run(ModelClient(remote, run_id="r", cache=None, use_cache=False, concurrency=1,
                                     retry=retry).call("target", ChatRequest.simple("hi"), 0))
    assert record.response is None and record.attempts == 3 and "no answer within" in (record.error or "")
    from knowgap.models.local import LocalModel
    assert LocalModel.interruptible is False
