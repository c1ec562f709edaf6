"""Token log-probabilities through the model layer: the request field and its fingerprint, the gateway's refusal
for providers without them, the response cache, the scripted and OpenAI-compatible providers. (The embedded
llama.cpp provider: tests/models/test_local_model.py.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from knowgap.engine.cache import ResponseCache
from knowgap.engine.gateway import ModelGateway
from knowgap.models.openai_http import OpenAIChatModel
from knowgap.models.registry import create_model
from knowgap.models.types import ChatRequest, ChatResponse
from tests.fakes.fake_openai_server import fake_server
from tests.fakes.models import Fixed
from tests.helpers import scripted

LOGPROBS = [{"token": "4", "logprob": -0.5, "top": [{"token": "4", "logprob": -0.5}, {"token": "3", "logprob": -1.2}]}]


def test_asking_for_logprobs_is_part_of_the_request_key() -> None:
    plain = ChatRequest.simple("rate it", max_tokens=2)
    asking = ChatRequest.simple("rate it", max_tokens=2, top_logprobs=5)
    assert "top_logprobs" not in plain.model_dump()  # requests that do not ask keep their old fingerprints
    assert plain.fingerprint() != asking.fingerprint()
    assert ChatRequest.model_validate(asking.model_dump()).fingerprint() == asking.fingerprint()


def test_gateway_refuses_logprobs_to_a_provider_without_them() -> None:
    model = Fixed("4")
    with ModelGateway(run_id="t", providers={model.spec: model}) as gateway:
        record = gateway.call_sync(model.spec, "judge", ChatRequest.simple("rate it", top_logprobs=5))
        plain = gateway.call_sync(model.spec, "judge", ChatRequest.simple("rate it"))
    assert record.response is None and "cannot return token log-probabilities" in (record.error or "")
    assert model.calls == 1 and plain.response is not None and plain.response.logprobs is None


def test_cached_response_keeps_its_logprobs(tmp_path: Path) -> None:
    spec = scripted(tmp_path, {"response": "4", "logprobs": LOGPROBS})
    cache = ResponseCache(tmp_path / "cache.sqlite")
    asking = ChatRequest.simple("rate it", top_logprobs=2)
    with ModelGateway(run_id="a", cache=cache) as gateway:
        first = gateway.call_sync(spec, "judge", asking)
        again = gateway.call_sync(spec, "judge", asking)
        plain = gateway.call_sync(spec, "judge", ChatRequest.simple("rate it"))
    assert first.response is not None and again.response is not None and plain.response is not None
    assert not first.cached and again.cached
    assert again.response.logprobs == first.response.logprobs and first.response.logprobs is not None
    assert first.response.logprobs[0].top[1].token == "3"
    assert not plain.cached and plain.response.logprobs is None  # another request, another key
    cache.close()


def test_scripted_logprobs_must_be_well_formed(tmp_path: Path) -> None:
    from knowgap.errors import InputError

    spec = scripted(tmp_path, {"response": "4", "logprobs": [{"token": "4"}]})
    with pytest.raises(InputError, match="line 1.*logprobs|logprobs.*line 1"):
        create_model(spec)


@pytest.mark.server
def test_openai_compatible_server_logprobs(tmp_path: Path) -> None:
    with fake_server(tmp_path) as server:
        model = OpenAIChatModel.openai_compat(server.spec, "fake", server.base_url)

        async def ask() -> tuple[ChatResponse, ChatResponse]:
            try:
                return (await model.chat(ChatRequest.simple("hello", top_logprobs=2)),
                        await model.chat(ChatRequest.simple("hello")))
            finally:
                await model.aclose()

        asking, plain = asyncio.run(ask())
    assert asking.logprobs is not None and [t.token for t in asking.logprobs] == asking.text.split()
    assert asking.logprobs[0].top[1].logprob == -5.0
    assert plain.logprobs is None
