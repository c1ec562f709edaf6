"""``ModelGateway.texts``: several requests (or chains of dependent calls) of one role at once, up to the model's
concurrency limit, the texts in the requests' order; one at a time it makes exactly a one-by-one caller's calls; a
failure is the one a one-by-one caller would have met first, and nothing after it is started. The model is a real
ChatModel whose calls sleep (so they overlap and end out of order)."""

from __future__ import annotations

import asyncio

import pytest

from knowgap.engine.gateway import ModelCallFailed, ModelGateway
from knowgap.models.errors import PermanentModelError
from knowgap.models.types import ChatRequest, ChatResponse
from tests.fakes.models import FakeModel


class Sleepy(FakeModel):
    """Answers ``"<prompt>!"`` after ``delays[prompt]`` seconds (default 0.01); prompts in ``fail`` raise a
    permanent error after their delay. Records the most calls it had in flight at once."""

    spec = "test:sleepy"

    def __init__(self, delays: dict[str, float] | None = None, fail: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.delays, self.fail = delays or {}, fail
        self.in_flight = self.peak = 0

    async def chat(self, request: ChatRequest) -> ChatResponse:
        prompt = request.messages[-1].content
        self.requests.append(request)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.delays.get(prompt, 0.01))
        finally:
            self.in_flight -= 1
        if prompt in self.fail:
            raise PermanentModelError(f"{self.spec}: refused {prompt}")
        return ChatResponse(text=f"{prompt}!")


def prompts(*texts: str) -> list[ChatRequest]:
    return [ChatRequest.simple(t) for t in texts]


def test_texts_run_up_to_the_limit_and_come_back_in_order() -> None:
    model = Sleepy({"a": 0.2, "b": 0.001})  # b ends first, a last
    done: list[int] = []
    with ModelGateway.open(run_id="r", providers={model.spec: model}, concurrency=3) as gateway:
        batch = gateway.texts(model.spec, "generator")
        assert batch.limit == 3
        texts = batch(prompts("a", "b", "c", "d", "e", "f", "g"), done.append)
        assert texts == ["a!", "b!", "c!", "d!", "e!", "f!", "g!"]
        assert model.peak == 3  # the limit, and never more
        assert sorted(done) == list(range(7)) and done[0] == 1 and done[-1] == 0  # reported as they end
        assert [r.messages[-1].content for r in model.requests] == list("abcdefg")  # started in order
        assert gateway.calls == 7
        assert gateway.texts(model.spec, "generator")(prompts("a", "b")) == ["a!", "b!"]  # from the cache
        assert gateway.provider_calls == 7 and gateway.calls == 9


def test_the_first_failure_in_order_is_raised_and_nothing_starts_after_it() -> None:
    # b fails late, c fails early: a one-by-one caller meets b's error first, so that is the one raised
    model = Sleepy({"b": 0.05, "c": 0.001}, fail=("b", "c"))
    with ModelGateway.open(run_id="r", providers={model.spec: model}, concurrency=3) as gateway:
        with pytest.raises(ModelCallFailed, match=r"^generator model test:sleepy failed: test:sleepy: refused b$"):
            gateway.texts(model.spec, "generator")(prompts("a", "b", "c", "d", "e", "f"))
        # a, b, c were in flight; c's failure stopped d onwards from starting; a's answer is cached
        assert [r.messages[-1].content for r in model.requests] == ["a", "b", "c"]
        assert gateway.texts(model.spec, "generator")(prompts("a")) == ["a!"]
        assert len(model.requests) == 3


def chain_step(i: int, got: list[str]) -> ChatRequest | None:
    """Chain ``i``: two calls, ``i.0``, then ``i.1`` made from the first's answer ``i.0!``."""
    return None if len(got) == 2 else ChatRequest.simple(got[0].replace(".0!", ".1") if got else f"{i}.0")


def test_chains_slide_up_to_the_limit_and_one_at_a_time_are_one_by_one() -> None:
    one = Sleepy()
    with ModelGateway.open(run_id="r", providers={one.spec: one}, concurrency=1) as gateway:
        assert gateway.texts(one.spec, "generator").chains(3, chain_step) == [["0.0!", "0.1!"], ["1.0!", "1.1!"],
                                                                              ["2.0!", "2.1!"]]
    assert [r.messages[-1].content for r in one.requests] == ["0.0", "0.1", "1.0", "1.1", "2.0", "2.1"]
    assert one.peak == 1

    model = Sleepy({"0.0": 0.2})  # chain 0 is slow: the other worker runs chains 1, 2, 3 meanwhile
    model.spec = "test:sleepy2"
    done: list[int] = []
    with ModelGateway.open(run_id="r", providers={model.spec: model}, concurrency=2) as gateway:
        got = gateway.texts(model.spec, "generator").chains(4, chain_step, done.append)
    assert got == [[f"{i}.0!", f"{i}.1!"] for i in range(4)]
    assert model.peak == 2 and done == [1, 2, 3, 0]
    assert [r.messages[-1].content for r in model.requests][:3] == ["0.0", "1.0", "1.1"]


def test_a_failed_chain_lets_the_chains_before_it_end_and_stops_those_after() -> None:
    # 2.0 fails first in time; 1.1 fails later, but a one-by-one caller meets 1.1 before 2.0: that is the error
    model = Sleepy({"0.0": 0.05, "1.0": 0.05, "2.0": 0.001}, fail=("2.0", "1.1"))
    with ModelGateway.open(run_id="r", providers={model.spec: model}, concurrency=3) as gateway:
        with pytest.raises(ModelCallFailed, match=r"refused 1\.1$"):
            gateway.texts(model.spec, "generator").chains(5, chain_step)
    # chains 0 and 1 (before the failed chain 2) went on to their second call; chains 3 and 4 never started
    assert sorted(r.messages[-1].content for r in model.requests) == ["0.0", "0.1", "1.0", "1.1", "2.0"]
