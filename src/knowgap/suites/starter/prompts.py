"""The two system prompts the starter suite compares (``plain``, ``grounded``) and the target's request."""

from __future__ import annotations

from knowgap.models.types import ChatRequest
from knowgap.suites.starter.dataset import StarterCase

PROMPTS = {
    "plain": "You are a helpful assistant. Answer the user's question briefly.",
    "grounded": ("Answer the question using only the context. If the context does not contain the answer, "
                 "say that you don't know instead of guessing. Reply in the language of the question."),
}


def target_request(case: StarterCase, prompt: str, *, max_tokens: int, seed: int) -> ChatRequest:
    return ChatRequest.simple(f"Context: {case.context}\n\nQuestion: {case.question}", system=PROMPTS[prompt],
                              max_tokens=max_tokens, seed=seed)
