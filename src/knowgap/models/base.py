"""The one chat interface every provider implements."""

from __future__ import annotations

from abc import ABC, abstractmethod

from knowgap.models.errors import PermanentModelError
from knowgap.models.types import ChatRequest, ChatResponse


class ChatModel(ABC):
    """An async chat model. Providers raise :class:`~knowgap.models.errors.ModelError` on failure."""

    spec: str
    """The model spec string this provider was made from (``local:qwen2.5-0.5b``, ``openai:gpt-4o``...)."""

    default_concurrency: int = 4
    """How many calls the executor sends at once unless the run says otherwise."""

    supports_tools: bool = False
    """Whether ``chat`` accepts ``ChatRequest.tools`` (native tool calling); providers without it refuse them."""

    supports_logprobs: bool = False
    """Whether ``chat`` returns token log-probabilities when ``ChatRequest.top_logprobs`` asks; the gateway refuses
    such a request to providers without it (a clear permanent error, never a response without them)."""

    context_window: int | None = None
    """Tokens the model reads and writes per call (prompt + answer), when the provider knows it (the embedded
    llama.cpp packs: their ``n_ctx``); None for HTTP providers, whose window the caller must assume."""

    interruptible: bool = True
    """Whether a call can be abandoned at a time-out. An in-process llama.cpp call cannot: it runs to the end in its
    thread whatever the caller does, so a time-out would only queue the retry behind it (measured: 2 x 300 s lost
    on one 175 s call); the per-call time-out is not applied to such providers (``max_tokens`` bounds them)."""

    @abstractmethod
    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Answer one request."""

    def refuse_unsupported_tools(self, request: ChatRequest) -> None:
        """Providers without native tool calling call this first: a request with tools is a permanent error."""
        if request.tools and not self.supports_tools:
            raise PermanentModelError(f"{self.spec}: this provider has no native tool calling; send the tool "
                                      "protocol as text (suites do so automatically)")

    def prepare(self) -> None:  # noqa: B027 - optional hook
        """Load or check the model now, before the first call, so a missing file or pack fails before any
        trial starts (the embedded llama.cpp provider assembles and loads its GGUF); a no-op by default."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections or handles."""

    def use_concurrency(self, limit: int) -> None:  # noqa: B027 - optional hook
        """How many calls the gateway sends at once (its per-model limit), told before the first call: an HTTP
        provider sizes its connection pool to it; a no-op by default."""

    def timeout_note(self) -> str:
        """What a call abandoned at its time-out leaves behind, added to the time-out's trial error (a ``python:``
        function's thread that could not be stopped); empty by default."""
        return ""

    def identity(self) -> str:
        """What the model is, for the response cache and ``--resume`` (never credentials): the sha256 of a
        GGUF or scripted file, the resolved endpoint and model name of an HTTP provider. Providers that know
        no better return their spec; see :mod:`knowgap.models.identity`."""
        return self.spec

    def describe(self) -> dict[str, str]:
        """Facts about the model for the run manifest (no secrets)."""
        return {"spec": self.spec}
