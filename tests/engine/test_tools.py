"""The engine's tool-use loop, driven directly: a scripted agent (a real ChatModel replying in order) behind a
trial context that records every request, with native tool calls and with the JSON-text protocol; step
exhaustion, a call to a tool that is not offered, and malformed calls."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from knowgap.engine.records import CallRecord
from knowgap.engine.tools import (
    Tool,
    ToolLoopResult,
    ToolUse,
    json_text_calls,
    resolve_protocol,
    run_tool_loop,
)
from knowgap.models.base import ChatModel
from knowgap.models.types import ChatRequest, ChatResponse, Message, ToolCall, ToolSpec
from tests.fakes.models import Replies

LOOKUP = ToolSpec(name="lookup", description="The value of a key.", parameters={
    "type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]})
TABLE = {"capital": "Paris", "river": "Seine"}

class Context:
    """A trial context over one model: every call is recorded, as the runner does."""

    def __init__(self, model: ChatModel) -> None:
        self.model, self.seed, self.repeat = model, 7, 0
        self.calls: list[CallRecord] = []

    async def generate(self, role: str, request: ChatRequest) -> ChatResponse:
        response = await self.model.chat(request)
        self.calls.append(CallRecord(role=role, model=self.model.spec, request=request, response=response))
        return response

    def supports_tools(self, role: str) -> bool:
        return self.model.supports_tools


async def lookup(use: ToolUse) -> str:
    key = use.arguments.get("key")
    if not isinstance(key, str):
        return f"lookup needs a key (got {use.raw_arguments or use.arguments})"
    return TABLE.get(key, f"no key {key!r}")


START = ChatRequest(messages=[Message(role="system", content="Answer with the tools."),
                              Message(role="user", content="Where does the Seine flow?")], max_tokens=99, seed=7)


def run(agent: Replies, *, max_steps: int = 3, protocol: str = "auto", **kwargs: Any) -> tuple[ToolLoopResult, Context]:
    ctx = Context(agent)
    result = asyncio.run(run_tool_loop(ctx, "target", START, [Tool(LOOKUP, lookup)], max_steps=max_steps,
                                       protocol=resolve_protocol(ctx, "target", protocol), **kwargs))
    return result, ctx


def native(*calls: tuple[str, str, dict[str, Any]], raw: str | None = None) -> ChatResponse:
    return ChatResponse(text="", tool_calls=[ToolCall(id=i, name=n, arguments=a, raw_arguments=raw)
                                             for i, n, a in calls])


def test_native_calls_are_served_and_answered_as_tool_messages() -> None:
    agent = Replies(native(("c1", "lookup", {"key": "river"}), ("c2", "lookup", {"key": "capital"})),
                    ChatResponse(text="It flows through Paris."), tools=True)
    result, ctx = run(agent)
    assert result.protocol == "native" and result.final.text == "It flows through Paris."
    assert [(e.use.call_id, e.use.protocol, e.reply) for e in result.calls] == [("c1", "native", "Seine"),
                                                                               ("c2", "native", "Paris")]
    second = ctx.calls[1].request
    assert second.tools == [LOOKUP] and (second.max_tokens, second.seed) == (99, 7)
    assert [(m.role, m.tool_call_id, m.content) for m in second.messages[3:]] == [("tool", "c1", "Seine"),
                                                                                   ("tool", "c2", "Paris")]
    assert second.messages[2].tool_calls and second.messages[2].tool_calls[0].id == "c1"
    assert [m.role for m in result.transcript] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    # each request carries the dialogue as it was then, not as it grew later
    assert len(ctx.calls[0].request.messages) == 2 and ctx.calls[0].request.tools == [LOOKUP]


def test_json_protocol_reads_calls_from_the_text_and_answers_as_user_messages() -> None:
    agent = Replies(ChatResponse(text='Let me check. {"action": "lookup", "key": "river"}'),
                    ChatResponse(text='{"name": "lookup", "arguments": {"key": "capital"}}'),
                    ChatResponse(text='{"action": "answer", "answer": "Paris"}'), tools=False)
    result, ctx = run(agent)
    assert result.protocol == "json"
    assert [(e.use.name, e.use.arguments, e.use.protocol, e.reply) for e in result.calls] == [
        ("lookup", {"key": "river"}, "json", "Seine"), ("lookup", {"key": "capital"}, "json", "Paris")]
    assert all(call.request.tools is None for call in ctx.calls)
    assert [(m.role, m.content) for m in ctx.calls[2].request.messages[3::2]] == [("user", "Seine"),
                                                                                   ("user", "Paris")]
    assert json.loads(result.final.text) == {"action": "answer", "answer": "Paris"}


def test_a_model_with_tools_can_be_held_to_the_json_protocol() -> None:
    agent = Replies(ChatResponse(text='{"action": "lookup", "key": "river"}'), ChatResponse(text="Seine."),
                    tools=True)
    result, ctx = run(agent, protocol="json")
    assert result.protocol == "json" and [e.reply for e in result.calls] == ["Seine"]
    assert all(call.request.tools is None for call in ctx.calls)


def test_steps_run_out_then_the_final_prompt_asks_for_an_answer() -> None:
    calling = native(("c", "lookup", {"key": "river"}))
    agent = Replies(calling, calling, calling, tools=True)
    result, ctx = run(agent, max_steps=2, final_prompt="Answer now.")
    assert len(ctx.calls) == 3 and len(result.calls) == 2  # the third reply's call is not served
    last = ctx.calls[2].request
    assert last.messages[-1] == Message(role="user", content="Answer now.") and last.tools == [LOOKUP]
    assert result.final.tool_calls and result.transcript[-1].role == "assistant"
    # no steps at all: one request, no call served
    result, ctx = run(Replies(calling, tools=True), max_steps=0)
    assert len(ctx.calls) == 1 and result.calls == [] and ctx.calls[0].request.messages == START.messages


def test_a_call_to_a_tool_not_offered_is_answered_with_the_tools() -> None:
    agent = Replies(native(("c1", "weather", {"city": "Paris"})), ChatResponse(text="done"), tools=True)
    result, _ = run(agent)
    assert [e.reply for e in result.calls] == ["weather: no such tool (tools: lookup)."]
    # a suite may serve such calls itself
    seen: list[str] = []

    async def unknown(use: ToolUse) -> str:
        seen.append(use.name)
        return "not here"

    agent = Replies(native(("c1", "weather", {"city": "Paris"})), ChatResponse(text="done"), tools=True)
    result, _ = run(agent, unknown=unknown)
    assert seen == ["weather"] and [e.reply for e in result.calls] == ["not here"]
    # as JSON text, a name that is no tool is an answer, not a call
    result, ctx = run(Replies(ChatResponse(text='{"action": "weather", "city": "Paris"}'), tools=False))
    assert result.calls == [] and len(ctx.calls) == 1


def test_malformed_calls() -> None:
    # native arguments that were not a JSON object reach the handler empty, with their text
    agent = Replies(native(("c1", "lookup", {}), raw="{key: river"), ChatResponse(text="sorry"), tools=True)
    result, _ = run(agent)
    assert result.calls[0].use.raw_arguments == "{key: river"
    assert result.calls[0].reply == "lookup needs a key (got {key: river)"
    # text that is not JSON, or JSON without an action, is the final answer
    for text in ('{"action": "lookup", "key": "river"', "I'd look up the river.", '{"key": "river"}'):
        result, ctx = run(Replies(ChatResponse(text=text), tools=False))
        assert result.calls == [] and result.final.text == text and len(ctx.calls) == 1


def test_a_suite_reads_text_calls_its_own_way() -> None:
    def bare_key(text: str) -> list[ToolUse]:
        data = json.loads(text)
        return [ToolUse(name="lookup", arguments=data)] if "answer" not in data else []

    agent = Replies(ChatResponse(text='{"key": "river"}'), ChatResponse(text='{"answer": "Seine"}'), tools=False)
    result, _ = run(agent, text_calls=bare_key)
    assert [e.reply for e in result.calls] == ["Seine"] and result.final.text == '{"answer": "Seine"}'


def test_json_text_calls() -> None:
    assert json_text_calls('```json\n{"action": " lookup ", "key": "k"}\n```') == [
        ToolUse(name="lookup", arguments={"key": "k"})]
    assert json_text_calls('{"name": "lookup", "arguments": {"key": "k"}}') == [
        ToolUse(name="lookup", arguments={"key": "k"})]
    assert json_text_calls('{"name": "lookup", "arguments": "k"}') == []
    assert json_text_calls('{"action": "", "key": "k"}') == []
    assert json_text_calls("") == []


def test_resolve_protocol() -> None:
    with_tools, without = Context(Replies(tools=True)), Context(Replies(tools=False))
    assert resolve_protocol(with_tools, "target", "auto") == "native"
    assert resolve_protocol(without, "target", "auto") == "json"
    assert resolve_protocol(with_tools, "target", "json") == "json"
    assert resolve_protocol(without, "target", "native") == "native"
    with pytest.raises(ValueError, match="auto, native or json"):
        resolve_protocol(without, "target", "xml")
