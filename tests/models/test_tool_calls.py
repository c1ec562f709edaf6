"""Native tool calling: the request and response records, the chat-completions wire shape, providers that refuse
tools, and a real llama.cpp server (``--chat_format chatml-function-calling``) with the 0.5B pack, alone and under
the partial suite's budget mode."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

import knowgap
from knowgap.models import ChatRequest, PermanentModelError, create_model
from knowgap.models.openai_http import message_payload, parse_tool_calls
from knowgap.models.types import Message, ToolCall, ToolSpec
from tests.helpers import llama_server

WEATHER = ToolSpec(name="get_weather", description="The weather in a city.", parameters={
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})


def test_requests_without_tools_keep_their_fingerprints() -> None:
    # computed before tool fields existed: cached responses made then must still be found
    request = ChatRequest(messages=[Message(role="system", content="s"), Message(role="user", content="问 q")],
                          seed=3, max_tokens=9)
    assert request.fingerprint() == "ead3b5b497cde485c879e3e8e2f3c0e5c965aa964f6078392d0bf848e700ca3d"
    with_tools = request.model_copy(update={"tools": [WEATHER]})
    forced = with_tools.model_copy(update={"tool_choice": "get_weather"})
    assert len({request.fingerprint(), with_tools.fingerprint(), forced.fingerprint()}) == 3


def test_wire_shape_of_tool_calls_and_results() -> None:
    call = ToolCall(id="c1", name="get_weather", arguments={"city": "北京"})
    assistant = message_payload(Message(role="assistant", content="", tool_calls=[call]))
    assert assistant["tool_calls"] == [{"id": "c1", "type": "function",
                                        "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}}]
    assert message_payload(Message(role="tool", content="晴", tool_call_id="c1")) == {
        "role": "tool", "content": "晴", "tool_call_id": "c1"}
    assert message_payload(Message(role="user", content="hi")) == {"role": "user", "content": "hi"}
    parsed = parse_tool_calls([
        {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
        {"type": "function", "function": {"name": "get_weather", "arguments": "{city: Paris"}}])
    assert parsed[0] == ToolCall(id="a", name="get_weather", arguments={"city": "Paris"})
    assert parsed[1].id == "call_1" and parsed[1].arguments == {} and parsed[1].raw_arguments == "{city: Paris"
    # a call whose arguments were not JSON goes back to the server exactly as it came
    assert message_payload(Message(role="assistant", content="", tool_calls=[parsed[1]])
                           )["tool_calls"][0]["function"]["arguments"] == "{city: Paris"
    assert parse_tool_calls(None) == []
    with pytest.raises(KeyError):
        parse_tool_calls([{"id": "x"}])


def test_payload_sends_tools_and_the_choice() -> None:
    model = create_model("openai-compat:m@http://127.0.0.1:9/v1")
    assert model.supports_tools
    request = ChatRequest.simple("weather?", tools=[WEATHER], tool_choice="get_weather")
    body = model.payload(request)  # type: ignore[attr-defined]
    assert body["tools"] == [{"type": "function", "function": WEATHER.model_dump()}]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert "tools" not in model.payload(ChatRequest.simple("hi"))  # type: ignore[attr-defined]


def test_embedded_model_refuses_tools_without_loading_weights() -> None:
    model = create_model("local:qwen2.5-0.5b")
    assert not model.supports_tools
    with pytest.raises(PermanentModelError, match="no native tool calling"):
        asyncio.run(model.chat(ChatRequest.simple("weather?", tools=[WEATHER])))


@pytest.fixture(scope="module")
def tool_server(small_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server] (dev extras)")
    with llama_server(small_gguf, tmp_path_factory.mktemp("tool_server"),
                      "--chat_format", "chatml-function-calling") as url:
        yield url


@pytest.mark.server
@pytest.mark.local_model
@pytest.mark.slow
def test_real_server_tool_call_round_trip(tool_server: str) -> None:
    model = create_model(f"openai-compat:qwen-0.5b@{tool_server}")
    ask = [Message(role="system", content="You help with the weather."),
           Message(role="user", content="What is the weather in Paris?")]

    async def go() -> tuple[list[ToolCall], str]:
        try:
            first = await model.chat(ChatRequest(messages=ask, tools=[WEATHER], tool_choice="get_weather",
                                                 max_tokens=64))
            follow = [*ask, Message(role="assistant", content=first.text, tool_calls=first.tool_calls),
                      Message(role="tool", content="Sunny, 21 °C", tool_call_id=first.tool_calls[0].id)]
            second = await model.chat(ChatRequest(messages=follow, tools=[WEATHER], tool_choice="none",
                                                  max_tokens=48))
            return first.tool_calls, second.text
        finally:
            await model.aclose()

    calls, answer = asyncio.run(go())
    assert [c.name for c in calls] == ["get_weather"]
    assert "paris" in str(calls[0].arguments.get("city", "")).lower()
    assert answer.strip() and not answer.lstrip().startswith("functions.")


@pytest.mark.server
@pytest.mark.local_model
@pytest.mark.slow
def test_partial_budget_mode_speaks_native_tools_to_a_real_server(tool_server: str, runs_root: Path) -> None:
    result = knowgap.run("partial", models={"target": f"openai-compat:qwen-0.5b@{tool_server}"},
                         options={"budget": 3, "sample": 2, "no_rubric": True, "families": ["customer_support"]},
                         runs_root=runs_root)
    records = list(knowgap.iter_trials(result.run_id, runs_root))
    assert result.manifest.trials_ok == 2, [r.error for r in records]
    for record in records:
        assert record.output["protocol"] == "native"
        assert all(call.request.tools and call.request.tools[0].name == "request_evidence" for call in record.calls)
        for request in record.output["requests"]:  # every call the model made was served and logged
            assert request["protocol"] in ("native", "json") and request["status"] in (
                "granted", "denied", "unknown", "exhausted")
