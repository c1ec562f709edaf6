"""``constant:TEXT``: a model that always replies TEXT. A baseline for any suite (``constant:[HANDOVER]`` is a
desk that hands every question over), and the smallest complete example of a knowgap provider plugin."""

from __future__ import annotations

import knowgap


class ConstantModel(knowgap.ChatModel):
    default_concurrency = 8

    def __init__(self, spec: str, text: str) -> None:
        self.spec = spec
        self.text = text

    async def chat(self, request: knowgap.ChatRequest) -> knowgap.ChatResponse:
        self.refuse_unsupported_tools(request)
        return knowgap.ChatResponse(text=self.text, model=self.spec)


def make_constant_model(spec: str, rest: str) -> knowgap.ChatModel:
    """The factory knowgap calls for a spec ``constant:REST`` (see ``knowgap.register_provider``)."""
    return ConstantModel(spec, rest)
