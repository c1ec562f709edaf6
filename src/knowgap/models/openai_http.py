"""OpenAI chat-completions over HTTP: ``openai:MODEL`` and ``openai-compat:MODEL@URL``.

``openai-compat`` serves any OpenAI-compatible server (vLLM, Ollama, llama.cpp server, LM Studio). The API
key comes from OPENAI_API_KEY (optional for compat servers) and never leaves the request headers.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any
from urllib.parse import urlsplit

import httpx

from knowgap.models.base import ChatModel
from knowgap.models.errors import ModelUnavailableError, PermanentModelError, TransientModelError
from knowgap.models.http_errors import status_error, transport_error
from knowgap.models.http_pool import DEFAULT_CONNECTIONS, HttpPool
from knowgap.models.identity import url_without_credentials
from knowgap.models.types import ChatRequest, ChatResponse, Message, TokenLogprob, ToolCall, TopLogprob, Usage
from knowgap.redaction import redact

OPENAI_URL = "https://api.openai.com/v1"


def message_payload(message: Message) -> dict[str, Any]:
    """A message in the chat-completions shape (tool calls carry their arguments as a JSON string)."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [{"id": c.id, "type": "function", "function": {
            "name": c.name, "arguments": c.raw_arguments if c.raw_arguments is not None
            else json.dumps(c.arguments, ensure_ascii=False)}} for c in message.tool_calls]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    return out


def parse_tool_calls(raw: Any) -> list[ToolCall]:
    """The ``tool_calls`` of a chat-completions message; arguments that are not a JSON object keep their text
    in ``raw_arguments``. Raises ValueError/KeyError/TypeError on a malformed list."""
    calls: list[ToolCall] = []
    for number, item in enumerate(raw or []):
        function = item["function"]
        text = function.get("arguments")
        arguments: Any = text if isinstance(text, dict) else None
        if isinstance(text, str):
            try:
                arguments = json.loads(text)
            except ValueError:
                arguments = None
        calls.append(ToolCall(id=str(item.get("id") or f"call_{number}"), name=str(function["name"]),
                              arguments=arguments if isinstance(arguments, dict) else {},
                              raw_arguments=None if isinstance(arguments, dict) else str(text)))
    return calls


def parse_logprobs(raw: Any) -> list[TokenLogprob] | None:
    """The ``logprobs.content`` of a chat-completions choice; None when absent. Raises KeyError/TypeError/
    ValueError on a malformed list."""
    if not raw or raw.get("content") is None:
        return None
    return [TokenLogprob(token=str(item["token"]), logprob=float(item["logprob"]),
                         top=[TopLogprob(token=str(t["token"]), logprob=float(t["logprob"]))
                              for t in item.get("top_logprobs") or []])
            for item in raw["content"]]


class OpenAIChatModel(ChatModel):
    default_concurrency = 16
    """openai-compat: a served model (vLLM, SGLang, llama.cpp server) batches many calls; ``openai:`` gets 32."""
    supports_tools = True
    supports_logprobs = True

    def __init__(self, spec: str, model: str, base_url: str, *, api_key: str | None,
                 compat: bool, timeout_s: float | None = None) -> None:
        self.spec = spec
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.compat = compat
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._client: HttpPool | None = None
        self._connections = DEFAULT_CONNECTIONS

    def identity(self) -> str:
        """Provider kind, model name and resolved endpoint; credentials in the URL are left out."""
        kind = "openai-compat" if self.compat else "openai"
        return f"{kind}:{self.model}@{url_without_credentials(self.base_url)}"

    @classmethod
    def openai(cls, spec: str, model: str) -> OpenAIChatModel:
        key = os.environ.get("OPENAI_API_KEY")
        if not key:
            raise ModelUnavailableError(f"{spec}: set OPENAI_API_KEY (and optionally OPENAI_BASE_URL)")
        made = cls(spec, model, os.environ.get("OPENAI_BASE_URL", OPENAI_URL), api_key=key, compat=False)
        made.default_concurrency = 32
        return made

    @classmethod
    def openai_compat(cls, spec: str, model: str, url: str) -> OpenAIChatModel:
        if not url.startswith(("http://", "https://")):
            raise ModelUnavailableError(f"{spec}: the URL after '@' must start with http:// or https://")
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError on a port that is not a number in 0-65535
        except ValueError as exc:
            raise ModelUnavailableError(f"{redact(spec)}: bad URL after '@' ({exc})") from None
        if not parts.hostname:
            raise ModelUnavailableError(f"{redact(spec)}: the URL after '@' names no host")
        return cls(spec, model, url, api_key=os.environ.get("OPENAI_API_KEY"), compat=True)

    def use_concurrency(self, limit: int) -> None:
        self._connections = limit  # one keep-alive connection per call in flight

    def _http(self) -> HttpPool:
        if self._client is None:
            self._client = HttpPool.json_api(bearer=self._api_key, timeout_s=self._timeout_s,
                                             connections=self._connections)
        return self._client

    def payload(self, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [message_payload(m) for m in request.messages],
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if request.seed is not None:
            body["seed"] = request.seed
        if request.stop:
            body["stop"] = request.stop
        if request.top_logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = request.top_logprobs
        if request.tools:
            body["tools"] = [{"type": "function", "function": t.model_dump()} for t in request.tools]
            if request.tool_choice in ("auto", "none"):
                body["tool_choice"] = request.tool_choice
            elif request.tool_choice:
                body["tool_choice"] = {"type": "function", "function": {"name": request.tool_choice}}
        if request.json_schema is not None:
            if self.compat:
                # llama.cpp's server honours a schema inside json_object; its json_schema type answers 500.
                body["response_format"] = {"type": "json_object", "schema": request.json_schema}
            else:
                body["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": "response", "schema": request.json_schema}}
        return body

    async def chat(self, request: ChatRequest) -> ChatResponse:
        url = f"{self.base_url}/chat/completions"
        start = time.perf_counter()
        try:
            resp = await self._http().post(url, json=self.payload(request))
        except httpx.HTTPError as exc:
            raise transport_error(self.spec, self.base_url, exc) from None
        latency = time.perf_counter() - start
        if resp.status_code != 200:
            raise status_error(self.spec, self.base_url, resp)
        try:
            data = resp.json()
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
            tool_calls = parse_tool_calls(choice["message"].get("tool_calls"))
            logprobs = parse_logprobs(choice.get("logprobs")) if request.top_logprobs else None
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise TransientModelError(
                f"{self.spec}: malformed response body ({type(exc).__name__}): {redact(resp.text)[:200]}") from None
        if request.top_logprobs and logprobs is None:
            raise PermanentModelError(f"{self.spec}: the server returned no token log-probabilities although "
                                      "they were asked for (logprobs, top_logprobs)")
        usage = data.get("usage") or {}
        return ChatResponse(
            text=text, tool_calls=tool_calls, logprobs=logprobs,
            usage=Usage(prompt_tokens=int(usage.get("prompt_tokens") or 0),
                        completion_tokens=int(usage.get("completion_tokens") or 0)),
            latency_s=latency, finish_reason=choice.get("finish_reason"), model=self.spec)

    async def answers(self, timeout_s: float) -> bool:
        """Whether the server answers at all (``GET /models``, any status below 500, within ``timeout_s``):
        the probe of a replica taken out of a pool (:mod:`knowgap.models.replicas`)."""
        try:  # a client of its own: probes are rare, and the pool's connections may be the broken ones
            async with httpx.AsyncClient(timeout=timeout_s) as client:
                resp = await client.get(f"{self.base_url}/models")
        except httpx.HTTPError:
            return False
        return resp.status_code < 500

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def describe(self) -> dict[str, str]:
        return {"spec": redact(self.spec), "backend": "openai-compatible HTTP" if self.compat else "OpenAI",
                "base_url": redact(self.base_url), "model": self.model}


