"""A tool-use loop any suite can run inside a trial: the agent calls tools, the suite's handlers answer.

:func:`run_tool_loop` sends the messages to the model of a role, serves the tool calls in each reply with the
tools' async handlers, sends the answers back, and repeats until a reply makes no call or ``max_steps`` rounds
of calls were served; then it asks once more (with ``final_prompt``, if given) and that reply is final. Every
model call goes through ``ctx.generate`` (cached, retried, recorded in the trial's calls).

Two protocols carry the calls:

- ``native``: the provider's tool calling. Each request carries the tools' specs (``ChatRequest.tools``), the
  reply's ``tool_calls`` are served, and each answer goes back as a ``tool`` message with its call id.
- ``json``: for models without tool calling (every model can write JSON). A reply ``{"action": NAME, ...
  arguments}`` or ``{"name": NAME, "arguments": {...}}`` is a call to tool ``NAME``; its answer goes back as a
  ``user`` message. A suite may read calls from the text its own way (``text_calls``).

A native reply's calls are served even under ``json``, and a reply without native calls is read as text under
either protocol. Text that names no offered tool is an answer. A native call to a tool that is not offered goes
to ``unknown`` (default: an answer naming the tools); a native call whose arguments were not a JSON object reaches
its handler with ``arguments == {}`` and the text in ``raw_arguments``: the handler decides what to answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from knowgap.models.structured import ParseFailure, extract_json
from knowgap.models.types import ChatRequest, ChatResponse, Message, ToolSpec

if TYPE_CHECKING:
    from knowgap.engine.suite import TrialContext

Protocol = Literal["native", "json"]
"""How calls travel: the provider's native tool calling, or JSON written in the reply's text."""


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One call the agent made: the tool's name and arguments; ``call_id`` for a native call (None for a call
    written as JSON text)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None
    raw_arguments: str | None = None
    """A native call whose arguments were not a JSON object: their text (``arguments`` is then ``{}``)."""

    @property
    def protocol(self) -> Protocol:
        """``native`` when the call has a native call id (its answer is a ``tool`` message), else ``json``."""
        return "native" if self.call_id else "json"


ToolHandler = Callable[[ToolUse], Awaitable[str]]
"""Answers one call with the text the agent gets back."""


@dataclass(frozen=True, slots=True)
class Tool:
    spec: ToolSpec
    handler: ToolHandler


@dataclass(frozen=True, slots=True)
class ToolExchange:
    """A served call and the answer the agent got."""

    use: ToolUse
    reply: str


@dataclass(slots=True)
class ToolLoopResult:
    transcript: list[Message]
    """Every message of the dialogue, the initial ones first, the final reply last."""
    responses: list[ChatResponse]
    """The model's replies, in order; the last one is :attr:`final`."""
    calls: list[ToolExchange]
    """Every call served, in order."""
    protocol: Protocol

    @property
    def final(self) -> ChatResponse:
        return self.responses[-1]


def resolve_protocol(ctx: TrialContext, role: str, choice: str) -> Protocol:
    """The protocol ``choice`` (``native``, ``json`` or ``auto``) means for the model of ``role``: ``auto`` is
    native when that model has native tool calling, else json."""
    if choice == "auto":
        return "native" if ctx.supports_tools(role) else "json"
    if choice in ("native", "json"):
        return "native" if choice == "native" else "json"
    raise ValueError(f"tool protocol must be auto, native or json, not {choice!r}")


def native_calls(response: ChatResponse) -> list[ToolUse]:
    """The calls of a reply's native ``tool_calls``."""
    return [ToolUse(name=c.name, arguments=dict(c.arguments), call_id=c.id, raw_arguments=c.raw_arguments)
            for c in response.tool_calls]


def json_text_calls(text: str) -> list[ToolUse]:
    """The call a reply writes as JSON text: ``{"name": NAME, "arguments": {...}}`` or ``{"action": NAME, ...}``
    (the other keys are the arguments); none when the text holds no JSON object or names no action."""
    data = extract_json(text)
    if isinstance(data, ParseFailure):
        return []
    name, arguments = data.get("name"), data.get("arguments")
    if isinstance(name, str) and isinstance(arguments, dict):
        return [ToolUse(name=name.strip(), arguments=arguments)]
    action = data.get("action")
    if isinstance(action, str) and action.strip():
        return [ToolUse(name=action.strip(), arguments={k: v for k, v in data.items() if k != "action"})]
    return []


async def run_tool_loop(ctx: TrialContext, role: str, request: ChatRequest, tools: Sequence[Tool], *,
                        max_steps: int, protocol: Protocol, final_prompt: str | None = None,
                        text_calls: Callable[[str], list[ToolUse]] = json_text_calls,
                        unknown: ToolHandler | None = None) -> ToolLoopResult:
    """Run the agent of ``role`` with ``tools``, starting from ``request`` (its messages and settings; each turn
    sends the same settings with the dialogue so far, and the tools' specs under ``native``).

    At most ``max_steps`` replies get their calls served; the reply after them is final whatever it holds (with
    ``final_prompt`` appended as a user message before it). Under ``json``, a call names a tool offered in
    ``tools``; other JSON (``{"action": "answer", ...}``) is an answer. ``text_calls`` reads the calls a reply
    writes as text (default :func:`json_text_calls`)."""
    by_name = {tool.spec.name: tool.handler for tool in tools}
    specs = [tool.spec for tool in tools] if protocol == "native" else None
    transcript = list(request.messages)
    responses: list[ChatResponse] = []
    calls: list[ToolExchange] = []
    for step in range(max_steps + 1):
        last = step == max_steps
        if last and final_prompt is not None:
            transcript.append(Message(role="user", content=final_prompt))
        response = await ctx.generate(role, request.model_copy(update={"messages": list(transcript),
                                                                       "tools": specs}))
        responses.append(response)
        transcript.append(Message(role="assistant", content=response.text, tool_calls=response.tool_calls or None))
        uses = native_calls(response) or [u for u in text_calls(response.text) if u.name in by_name]
        if not uses or last:
            break
        for use in uses:
            handler = by_name.get(use.name) or unknown or _unknown_tool(sorted(by_name))
            reply = await handler(use)
            calls.append(ToolExchange(use=use, reply=reply))
            transcript.append(Message(role="tool", content=reply, tool_call_id=use.call_id) if use.call_id
                              else Message(role="user", content=reply))
    return ToolLoopResult(transcript=transcript, responses=responses, calls=calls, protocol=protocol)


def _unknown_tool(names: list[str]) -> ToolHandler:
    async def answer(use: ToolUse) -> str:
        return f"{use.name}: no such tool (tools: {', '.join(names) or 'none'})."
    return answer
