"""The model layer: one async chat interface, providers by spec string, embedded model packs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowgap.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "knowgap.models.base": ("ChatModel",),
    "knowgap.models.errors": ("ModelError", "ModelUnavailableError", "PermanentModelError", "TransientModelError"),
    "knowgap.models.registry": ("DEFAULT_MODEL", "create_model", "register_provider"),
    "knowgap.models.structured": ("ParseFailure", "extract_json", "parse_as"),
    "knowgap.models.types": ("ChatRequest", "ChatResponse", "Message", "Usage"),
})
__all__ = [
    "DEFAULT_MODEL", "ChatModel", "ChatRequest", "ChatResponse", "Message", "ModelError", "ModelUnavailableError",
    "ParseFailure", "PermanentModelError", "TransientModelError", "Usage", "create_model", "extract_json",
    "parse_as", "register_provider",
]

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use
    from knowgap.models.base import ChatModel
    from knowgap.models.errors import ModelError, ModelUnavailableError, PermanentModelError, TransientModelError
    from knowgap.models.registry import DEFAULT_MODEL, create_model, register_provider
    from knowgap.models.structured import ParseFailure, extract_json, parse_as
    from knowgap.models.types import ChatRequest, ChatResponse, Message, Usage
