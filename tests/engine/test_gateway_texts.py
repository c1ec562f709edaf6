"""``ModelGateway.texts``: several requests of one role at once, up to the model's concurrency limit, the texts in
the requests' order; a failure is the one a one-by-one caller would have met first, and nothing is started after
it. The model is a real ChatModel whose calls sleep (so they overlap and end out of order)."""

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
