"""``anthropic:MODEL`` through the official SDK (optional extra: pip install 'knowgap[anthropic]').

The SDK's own retries are off: the model client retries, so every attempt is counted once. ANTHROPIC_API_KEY
is read by the SDK; ANTHROPIC_BASE_URL points it elsewhere (a proxy, or a local test server).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from knowgap.models.base import ChatModel
from knowgap.models.errors import ModelUnavailableError, PermanentModelError, TransientModelError
from knowgap.models.http_errors import retry_after_seconds
from knowgap.models.identity import url_without_credentials
from knowgap.models.types import ChatRequest, ChatResponse, Usage
from knowgap.redaction import redact


class AnthropicChatModel(ChatModel):
    default_concurrency = 16

    def __init__(self, spec: str, model: str, timeout_s: float = 600.0) -> None:
        try:
            import anthropic
        except ImportError:
            raise ModelUnavailableError(
                f"{spec}: the anthropic SDK is not installed: run pip install 'knowgap[anthropic]'") from None
        if not os.environ.get("ANTHROPIC_API_KEY"):
            raise ModelUnavailableError(f"{spec}: set ANTHROPIC_API_KEY")
        self.spec = spec
        self.model = model
        self._sdk = anthropic
        self._client = anthropic.AsyncAnthropic(max_retries=0, timeout=timeout_s)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        sdk = self._sdk
        self.refuse_unsupported_tools(request)
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        messages = [{"role": m.role, "content": m.content} for m in request.messages if m.role != "system"]
        if request.json_schema is not None:
            schema = json.dumps(request.json_schema, ensure_ascii=False)
            system = (system + "\n\n" if system else "") + (
                f"Reply with one JSON object only, matching this JSON Schema: {schema}")
        # The 2.x SDK takes no sampling temperature (current models fix it), so none is sent.
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": request.max_tokens}
        if system:
            kwargs["system"] = system
        if request.stop:
            kwargs["stop_sequences"] = request.stop
        start = time.perf_counter()
        try:
            msg = await self._client.messages.create(**kwargs)
        except (sdk.APITimeoutError, sdk.APIConnectionError) as exc:
            raise TransientModelError(redact(f"{self.spec}: {type(exc).__name__}: {exc}")) from None
        except sdk.APIStatusError as exc:
            message = redact(f"{self.spec}: HTTP {exc.status_code}: {exc.message}")
            if exc.status_code == 429 or exc.status_code >= 500:
                retry_after = retry_after_seconds(exc.response.headers.get("retry-after"))
                raise TransientModelError(message, status=exc.status_code, retry_after=retry_after) from None
            raise PermanentModelError(message, status=exc.status_code) from None
        text = "".join(getattr(block, "text", "") for block in msg.content)
        return ChatResponse(
            text=text, usage=Usage(prompt_tokens=msg.usage.input_tokens, completion_tokens=msg.usage.output_tokens),
            latency_s=time.perf_counter() - start, finish_reason=msg.stop_reason, model=self.spec)

    async def aclose(self) -> None:
        await self._client.close()

    def identity(self) -> str:
        """Model name and resolved endpoint (ANTHROPIC_BASE_URL or the SDK's default), no credentials."""
        return f"anthropic:{self.model}@{url_without_credentials(str(self._client.base_url))}"

    def describe(self) -> dict[str, str]:
        return {"spec": self.spec, "backend": "Anthropic", "model": self.model,
                "temperature": "not sent (the SDK takes none)"}
