"""Records of the model layer: requests, responses and usage. They cross file boundaries (run store, cache)."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant", "tool"]
TRUNCATED_FINISH_REASONS = frozenset({"length", "max_tokens"})
"""Finish reasons that mean the answer was cut at ``max_tokens`` (OpenAI-style and llama.cpp; Anthropic)."""


class ToolSpec(BaseModel):
    """A function the model may call (native tool calling): its name, what it does, a JSON schema of its
    arguments."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    parameters: dict[str, Any]


class ToolCall(BaseModel):
    """One call the model made to a tool; ``arguments`` is the decoded JSON object (``{}`` when the model sent
    something that is not an object, with the raw text in ``raw_arguments``)."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = None


def _unset(value: Any) -> bool:
    """A tool (or log-probability) field that is unset (None, empty) is left out of every dump (``exclude_if``),
    so records and fingerprints of tool-less calls stay as they were before tools existed. (A field's
    ``exclude_if`` costs less than a model serializer wrapping the whole dump in Python.)"""
    return not value


_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Role
    content: str
    tool_calls: list[ToolCall] | None = Field(default=None, exclude_if=_unset)
    """An assistant message's tool calls (native tool calling)."""
    tool_call_id: str | None = Field(default=None, exclude_if=_unset)
    """A ``tool`` message: the id of the call it answers."""


class ChatRequest(BaseModel):
    """One chat call. Everything that can change the answer is in here, so its fingerprint keys the cache."""

    messages: list[Message]
    temperature: float = 0.0
    max_tokens: int = 512
    seed: int | None = None
    stop: list[str] = Field(default_factory=list)
    json_schema: dict[str, Any] | None = None
    """When set, the backend is asked for JSON matching this schema (grammar or JSON mode where it has one)."""
    tools: list[ToolSpec] | None = Field(default=None, exclude_if=_unset)
    """Functions the model may call (only providers with ``supports_tools`` accept them)."""
    tool_choice: str | None = Field(default=None, exclude_if=_unset)
    """None or "auto": the model decides; "none": no call; a tool's name: the model must call that tool."""
    top_logprobs: int | None = Field(default=None, ge=1, le=20, exclude_if=_unset)
    """When set, the response carries each generated token's log-probability and the ``top_logprobs`` most
    likely tokens at its position (only providers with ``supports_logprobs`` accept it)."""

    def fingerprint(self) -> str:
        """A stable sha256 of the whole request (canonical JSON). Unset tool fields are left out, so requests
        without tools keep the fingerprints (and cache entries) they had before tools existed."""
        canonical = _CANONICAL_JSON.encode(self.model_dump(mode="json"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    @classmethod
    def simple(cls, prompt: str, system: str | None = None, **kwargs: Any) -> ChatRequest:
        messages = [Message(role="system", content=system)] if system else []
        messages.append(Message(role="user", content=prompt))
        return cls(messages=messages, **kwargs)


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class TopLogprob(BaseModel):
    """One candidate token at a position and its log-probability."""

    model_config = ConfigDict(frozen=True)

    token: str
    logprob: float


class TokenLogprob(BaseModel):
    """One generated token, its log-probability and the most likely tokens at its position (best first)."""

    model_config = ConfigDict(frozen=True)

    token: str
    logprob: float
    top: list[TopLogprob] = Field(default_factory=list)


class ChatResponse(BaseModel):
    text: str
    tool_calls: list[ToolCall] = Field(default_factory=list, exclude_if=_unset)
    logprobs: list[TokenLogprob] | None = Field(default=None, exclude_if=_unset)
    """The generated tokens with their top alternatives, when the request asked (``top_logprobs``)."""
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    finish_reason: str | None = None
    model: str = ""
    """The model spec that produced this response."""
    cached: bool = False

    @property
    def truncated(self) -> bool:
        """The answer was cut at the request's ``max_tokens`` (finish reason "length"; Anthropic's "max_tokens")."""
        return self.finish_reason in TRUNCATED_FINISH_REASONS
