"""Small fake models for tests that need a model in-process: a fixed text, an echo, replies in order, and
failures. Each records the requests it was sent (``requests``; ``calls`` counts them)."""

from __future__ import annotations

from collections.abc import Callable

from knowgap.models.base import ChatModel
from knowgap.models.types import ChatRequest, ChatResponse

Reply = str | ChatResponse | Callable[[ChatRequest], ChatResponse]
"""What a :class:`Replies` model answers: a text, a whole response, or a function of the request."""


class FakeModel(ChatModel):
    """A model that records every request and answers with :meth:`reply`."""

    spec = "test:fake"

    def __init__(self, spec: str | None = None) -> None:
        if spec is not None:
            self.spec = spec
        self.requests: list[ChatRequest] = []

    @property
    def calls(self) -> int:
        return len(self.requests)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return self.reply(request)

    def reply(self, request: ChatRequest) -> ChatResponse:
        raise NotImplementedError


class Fixed(FakeModel):
    """Answers every request with the same text."""

    spec = "test:fixed"

    def __init__(self, text: str, spec: str | None = None) -> None:
        super().__init__(spec)
        self.text = text

    def reply(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(text=self.text)


class Echo(FakeModel):
    """Says back the last message after ``prefix``. Also a provider factory: ``register_provider("echo", Echo)``
    makes ``Echo(spec, rest)`` for a spec ``echo:REST``."""

    spec = "test:echo"

    def __init__(self, spec: str | None = None, rest: str = "", prefix: str = "echo: ") -> None:
        super().__init__(spec)
        self.rest, self.prefix = rest, prefix

    def reply(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(text=self.prefix + request.messages[-1].content, model=self.spec)


class Replies(FakeModel):
    """Replies in order from a script; a call after the script ran out is an IndexError (a test bug)."""

    spec = "test:replies"

    def __init__(self, *script: Reply, spec: str | None = None, tools: bool = False) -> None:
        super().__init__(spec)
        self.script = list(script)
        self.supports_tools = tools

    def reply(self, request: ChatRequest) -> ChatResponse:
        reply = self.script.pop(0)
        if isinstance(reply, str):
            return ChatResponse(text=reply)
        return reply if isinstance(reply, ChatResponse) else reply(request)


class Failing(FakeModel):
    """Raises ``error`` on its first ``times`` calls (on every call when ``times`` is None), then answers
    ``text``: a server that is down, throttles, or a Ctrl-C (``KeyboardInterrupt()``) during a call."""

    spec = "test:failing"

    def __init__(self, error: BaseException, times: int | None = None, text: str = "ok",
                 spec: str | None = None) -> None:
        super().__init__(spec)
        self.error, self.times, self.text = error, times, text

    def reply(self, request: ChatRequest) -> ChatResponse:
        if self.times is None or self.calls <= self.times:
            raise self.error
        return ChatResponse(text=self.text)
