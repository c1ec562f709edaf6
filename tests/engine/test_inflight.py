"""Identical calls in flight at once reach the provider once (knowgap.engine.inflight): the others get a copy of the
first call's record, marked cached; usage counts the provider call once; a failure is shared, not repeated."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

import knowgap
from knowgap.engine.cache import ResponseCache
from knowgap.engine.gateway import ModelGateway, RetryPolicy
from knowgap.models.errors import PermanentModelError, TransientModelError
from knowgap.models.types import ChatRequest, ChatResponse, Usage
from tests.fakes.fake_openai_server import fake_server
from tests.fakes.models import FakeModel


class Slow(FakeModel):
    """Answers after ``delay`` seconds (so calls overlap), echoing the prompt; raises ``error`` when given."""

    spec = "test:slow"
    default_concurrency = 8

    def __init__(self, delay: float = 0.05, error: Exception | None = None) -> None:
        super().__init__()
        self.delay, self.error = delay, error

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error
        return ChatResponse(text="re: " + request.messages[-1].content, latency_s=self.delay,
                            usage=Usage(prompt_tokens=10, completion_tokens=3))


def gateway(model: Slow, cache: ResponseCache | None, max_retries: int = 6) -> ModelGateway:
    return ModelGateway(run_id="r1", cache=cache, providers={model.spec: model},
                        retry=RetryPolicy(max_retries=max_retries, base_s=0.01))


async def together(gw: ModelGateway, calls: list[tuple[str, str, int]]) -> list[knowgap.CallRecord]:
    """The (role, prompt, repeat) calls started at once."""
    return list(await asyncio.gather(*(gw.call("test:slow", role, ChatRequest.simple(prompt), repeat)
                                       for role, prompt, repeat in calls)))


@pytest.mark.parametrize("with_cache", [True, False], ids=["cache", "no-cache"])
def test_identical_calls_in_flight_reach_the_provider_once(tmp_path: Path, with_cache: bool) -> None:
    model = Slow()
    cache = ResponseCache(tmp_path / "cache.sqlite") if with_cache else None
    gw = gateway(model, cache)
    calls = [("target", "a", 0), ("target", "a", 0), ("judge", "a", 0), ("target", "b", 0), ("target", "a", 1)]
    records = asyncio.run(together(gw, calls))
    sent = Counter(r.messages[-1].content for r in model.requests)
    assert sent == {"a": 2, "b": 1}, "a (repeat 0), a (repeat 1) and b once each"
    assert gw.provider_calls == 3
    assert [r.response.text if r.response else None for r in records] == ["re: a", "re: a", "re: a", "re: b", "re: a"]
    assert [r.cached for r in records] == [False, True, True, False, False]
    assert [r.role for r in records] == ["target", "target", "judge", "target", "target"]
    assert records[1].response is not records[0].response and records[1].response.cached  # type: ignore[union-attr]
    client = gw.client("test:slow")
    assert client.inflight.shared == 2 and len(client.inflight) == 0, "nothing left in flight"
    target, judge = client.usage["target"], client.usage["judge"]
    assert (target.calls, target.cached_calls, target.prompt_tokens) == (4, 1, 30), "3 provider calls' tokens"
    assert (judge.calls, judge.cached_calls, judge.prompt_tokens) == (1, 1, 0)
    if cache is not None:
        cache.close()


def test_a_failed_call_is_shared_by_those_waiting_for_it_not_repeated() -> None:
    model = Slow(error=PermanentModelError("test:slow: 400 bad request"))
    gw = gateway(model, None)
    records = asyncio.run(together(gw, [("target", "a", 0)] * 3))
    assert model.calls == 1
    assert {r.error for r in records} == {"test:slow: 400 bad request"}
    assert [r.cached for r in records] == [False, True, True]
    assert gw.client("test:slow").usage["target"].failed_calls == 3


def test_a_transient_failure_is_retried_by_the_first_call_only() -> None:
    model = Slow(error=TransientModelError("test:slow: 503"))
    gw = gateway(model, None, max_retries=2)
    records = asyncio.run(together(gw, [("target", "a", 0)] * 4))
    assert model.calls == 3, "one call and its 2 retries, for all four"
    assert [r.attempts for r in records] == [3, 1, 1, 1]
    assert all(r.error and "gave up after 3 attempts" in r.error for r in records)


def test_when_the_first_caller_is_cancelled_a_waiting_call_is_made_in_its_place(tmp_path: Path) -> None:
    model = Slow(delay=0.1)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    gw = gateway(model, cache)

    async def main() -> list[knowgap.CallRecord]:
        first = asyncio.ensure_future(gw.call("test:slow", "target", ChatRequest.simple("a")))
        await asyncio.sleep(0.01)
        waiting = [asyncio.ensure_future(gw.call("test:slow", role, ChatRequest.simple("a")))
                   for role in ("target", "judge")]
        await asyncio.sleep(0.01)
        first.cancel()
        records = list(await asyncio.gather(*waiting))
        assert first.cancelled()
        return records

    records = asyncio.run(main())
    assert [r.response.text if r.response else None for r in records] == ["re: a", "re: a"]
    assert [r.cached for r in records] == [False, True], "the first waiting call made it; the other waited for it"
    assert model.calls == 2, "the cancelled call and the one made in its place"
    assert len(gw.client("test:slow").inflight) == 0
    cache.close()


def test_one_after_another_the_second_comes_from_the_cache_not_the_inflight_table(tmp_path: Path) -> None:
    model = Slow(delay=0.0)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    gw = gateway(model, cache)
    first = gw.call_sync("test:slow", "target", ChatRequest.simple("a"))
    second = gw.call_sync("test:slow", "target", ChatRequest.simple("a"))
    assert (first.cached, second.cached, model.calls) == (False, True, 1)
    assert gw.client("test:slow").inflight.shared == 0
    gw.close()
    cache.close()


@pytest.mark.parametrize("use_cache", [True, False], ids=["cache", "no-cache"])
def test_a_suite_run_sends_each_distinct_request_once(runs_root: Path, use_cache: bool) -> None:
    """extract: every adversarial variant of a review re-runs that review's clean summary (same request, same
    seed); at concurrency 16 those are in flight together. Each distinct request reaches the model once and every
    trial still records all its calls."""
    model = Slow(delay=0.03)  # all cases: a sample is taken round-robin over reviews, one variant of each first
    result = knowgap.run("extract", models={"target": "test:slow"}, options={}, providers={
        "test:slow": model}, runs_root=runs_root, concurrency=16, use_cache=use_cache)
    sent = Counter(r.fingerprint() for r in model.requests)
    assert sent and max(sent.values()) == 1, "no request sent twice"
    records = knowgap.iter_trials(result.run_id, runs_root=runs_root)
    calls = [c for r in records for c in r.calls]
    assert len(calls) > len(sent), "the suite asks some requests more than once (else this test shows nothing)"
    assert result.provider_calls == len(sent) == sum(not c.cached for c in calls)
    usage = [by_model["test:slow"] for by_model in result.manifest.usage.values()]  # target and judge roles
    assert sum(u.calls for u in usage) == len(calls) and sum(u.failed_calls for u in usage) == 0
    assert sum(u.cached_calls for u in usage) == len(calls) - len(sent)
    assert sum(u.prompt_tokens for u in usage) == 10 * len(sent), "tokens of the provider calls only"


@pytest.mark.server
def test_an_http_server_answers_each_distinct_request_of_a_run_once(tmp_path: Path, runs_root: Path) -> None:
    """The same through openai-compat: a real server process (tests/fakes) that answers after 50 ms logs every
    request it served; an extract run at concurrency 16 asks some requests twice, the server serves each once."""
    with fake_server(tmp_path, "--delay", "0.05") as srv:
        result = knowgap.run("extract", models={"target": srv.spec}, options={}, runs_root=runs_root,
                             concurrency=16, use_cache=False)
        served = srv.served_ok()
    assert served and set(served.values()) == {1}, "no request served twice"
    calls = [c for r in knowgap.iter_trials(result.run_id, runs_root=runs_root) for c in r.calls]
    assert len(calls) > len(served), "some requests were asked more than once"
    assert sum(not c.cached for c in calls) == len(served) == result.provider_calls
