"""The model layer: one async chat interface, providers by spec string, embedded model packs."""

from knowgap.models.base import ChatModel
from knowgap.models.errors import ModelError, ModelUnavailableError, PermanentModelError, TransientModelError
from knowgap.models.registry import DEFAULT_MODEL, create_model, register_provider
from knowgap.models.structured import ParseFailure, extract_json, parse_as
from knowgap.models.types import ChatRequest, ChatResponse, Message, Usage

__all__ = [
    "DEFAULT_MODEL", "ChatModel", "ChatRequest", "ChatResponse", "Message", "ModelError", "ModelUnavailableError",
    "ParseFailure", "PermanentModelError", "TransientModelError", "Usage", "create_model", "extract_json",
    "parse_as", "register_provider",
]
