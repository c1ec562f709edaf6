"""Records of the model layer: requests, responses and usage. They cross file boundaries (run store, cache)."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant", "tool"]


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Role
    content: str


class ChatRequest(BaseModel):
    """One chat call. Everything that can change the answer is in here, so its fingerprint keys the cache."""

    messages: list[Message]
    temperature: float = 0.0
    max_tokens: int = 512
    seed: int | None = None
    stop: list[str] = Field(default_factory=list)
    json_schema: dict[str, Any] | None = None
    """When set, the backend is asked for JSON matching this schema (grammar or JSON mode where it has one)."""

    def fingerprint(self) -> str:
        """A stable sha256 of the whole request (canonical JSON)."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False,
                               separators=(",", ":"))
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


class ChatResponse(BaseModel):
    text: str
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    finish_reason: str | None = None
    model: str = ""
    """The model spec that produced this response."""
    cached: bool = False
