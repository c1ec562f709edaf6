"""``http:URL``: your own system behind a JSON endpoint (a RAG service, an agent, a product API) as the model
under test.

The spec is the endpoint's URL, with or without the ``http:`` prefix (``http://127.0.0.1:9000/answer``,
``https://qa.example/v1/ask``, ``http:https://qa.example/v1/ask``). knowgap POSTs one JSON object per call::

    {"messages": [{"role": "system", "content": "..."}, {"role": "user", "content": "..."}],
     "temperature": 0.0, "max_tokens": 512, "seed": 7, "stop": [], "tools": [...]}

(``tools`` only when the suite sends them) and reads the reply text from ``{"text": "..."}``; optional
``"usage": {"prompt_tokens": N, "completion_tokens": N}`` and ``"tool_calls"`` (OpenAI shape) are read too.

A service with another shape is described in the URL's fragment (never sent to the server), options joined
by ``&``:

- ``response=PATH``: where the reply text is, a dotted path with list indexes (``data.answer``,
  ``choices.0.message.content``, ``$.result.text``);
- ``request=FIELD``: send ``{"FIELD": "<the last user message>"}`` instead of the whole chat (a service that
  takes a question and does its own prompting and retrieval);
- ``bearer=NAME``: send ``Authorization: Bearer`` with the value of the environment variable ``NAME``.

Example: ``http://127.0.0.1:9000/ask#request=question&response=data.answer``.

Retries, time-outs, redaction and cache identity follow the OpenAI provider: 429 / 5xx / lost connections
are retried (Retry-After honoured), other 4xx are trial errors; the identity is the endpoint without
credentials plus the shape options.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any
from urllib.parse import parse_qsl

import httpx

from knowgap.models.base import ChatModel
from knowgap.models.errors import ModelUnavailableError, PermanentModelError, TransientModelError
from knowgap.models.http_errors import status_error, transport_error
from knowgap.models.http_pool import DEFAULT_CONNECTIONS, HttpPool
from knowgap.models.identity import url_without_credentials
from knowgap.models.openai_http import message_payload, parse_tool_calls
from knowgap.models.types import ChatRequest, ChatResponse, Usage
from knowgap.redaction import redact

_OPTIONS = ("response", "request", "bearer")
_STEP = re.compile(r"[^.\[\]]+")


def json_path(data: Any, path: str) -> Any:
    """The value at a dotted path (``a.b.0.c``, ``$.a.b[0].c``); KeyError naming the step that is missing."""
    node = data
    for step in _STEP.findall(path.removeprefix("$").lstrip(".")):
        if isinstance(node, list) and step.isdigit() and int(step) < len(node):
            node = node[int(step)]
        elif isinstance(node, dict) and step in node:
            node = node[step]
        else:
            raise KeyError(step)
    return node


def parse_options(spec: str, fragment: str) -> dict[str, str]:
    options = dict(parse_qsl(fragment, keep_blank_values=True))
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise ModelUnavailableError(f"{spec}: unknown option '{unknown[0]}' after '#' (options: {', '.join(_OPTIONS)})")
    empty = [k for k, v in options.items() if not v]
    if empty:
        raise ModelUnavailableError(f"{spec}: option '{empty[0]}' after '#' has no value")
    return options


class HttpJsonModel(ChatModel):
    default_concurrency = 16

    def __init__(self, spec: str, url: str, timeout_s: float | None = None) -> None:
        url, _, fragment = url.partition("#")
        if not url.startswith(("http://", "https://")):
            raise ModelUnavailableError(f"bad model spec '{spec}': expected http:URL with an http:// or https:// URL, "
                                        "e.g. http://127.0.0.1:9000/answer")
        self.spec = spec
        self.url = url
        self.options = parse_options(spec, fragment)
        self.response_path = self.options.get("response", "text")
        self.request_field = self.options.get("request")
        self.supports_tools = self.request_field is None
        token = None
        if "bearer" in self.options:
            token = os.environ.get(self.options["bearer"])
            if not token:
                raise ModelUnavailableError(f"{spec}: bearer={self.options['bearer']}, but that environment "
                                            "variable is not set")
        self._token = token
        self._timeout_s = timeout_s
        self._client: HttpPool | None = None
        self._connections = DEFAULT_CONNECTIONS

    def identity(self) -> str:
        shape = "&".join(f"{k}={self.options[k]}" for k in ("request", "response") if k in self.options)
        return f"http:{url_without_credentials(self.url)}" + (f"#{shape}" if shape else "")

    def use_concurrency(self, limit: int) -> None:
        self._connections = limit  # one keep-alive connection per call in flight

    def _http(self) -> HttpPool:
        if self._client is None:
            self._client = HttpPool.json_api(bearer=self._token, timeout_s=self._timeout_s,
                                             connections=self._connections)
        return self._client

    def payload(self, request: ChatRequest) -> dict[str, Any]:
        if self.request_field is not None:
            users = [m.content for m in request.messages if m.role == "user"]
            return {self.request_field: users[-1] if users else ""}
        body: dict[str, Any] = {"messages": [message_payload(m) for m in request.messages],
                                "temperature": request.temperature, "max_tokens": request.max_tokens}
        if request.seed is not None:
            body["seed"] = request.seed
        if request.stop:
            body["stop"] = request.stop
        if request.tools:
            body["tools"] = [t.model_dump() for t in request.tools]
            if request.tool_choice:
                body["tool_choice"] = request.tool_choice
        return body

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.refuse_unsupported_tools(request)
        start = time.perf_counter()
        try:
            resp = await self._http().post(self.url, json=self.payload(request))
        except httpx.HTTPError as exc:
            raise transport_error(self.spec, self.url, exc) from None
        latency = time.perf_counter() - start
        if resp.status_code != 200:
            raise status_error(self.spec, self.url, resp)
        try:
            data = resp.json()
        except ValueError:
            raise TransientModelError(redact(f"{self.spec}: the answer is not JSON: {resp.text[:200]}")) from None
        try:
            text = json_path(data, self.response_path)
        except KeyError as exc:
            raise PermanentModelError(redact(
                f"{self.spec}: the answer has no '{self.response_path}' (missing: {exc.args[0]}); it holds "
                f"{str(data)[:200]} — set the path with #response=PATH")) from None
        if not isinstance(text, str):
            raise PermanentModelError(f"{self.spec}: '{self.response_path}' is {type(text).__name__}, not text")
        usage = data.get("usage") if isinstance(data, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        try:
            tool_calls = parse_tool_calls(data.get("tool_calls")) if isinstance(data, dict) else []
        except (KeyError, TypeError, ValueError):
            raise PermanentModelError(f"{self.spec}: malformed 'tool_calls' in the answer") from None
        return ChatResponse(text=text, tool_calls=tool_calls, latency_s=latency, model=self.spec,
                            usage=Usage(prompt_tokens=int(usage.get("prompt_tokens") or 0),
                                        completion_tokens=int(usage.get("completion_tokens") or 0)))

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def describe(self) -> dict[str, str]:
        return {"spec": redact(self.spec), "backend": "JSON over HTTP", "url": redact(self.url),
                **{k: v for k, v in self.options.items() if k != "bearer"}}
