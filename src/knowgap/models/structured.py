"""Structured output: tolerant JSON extraction, with a parse failure as a first-class outcome.

A response that cannot be parsed is reported as :class:`ParseFailure` with the reason; it is never dropped
and never replaced by a default.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from knowgap.errors import first_validation_error

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_CLOSER = re.compile(r"\s*[}\]]")


class ParseFailure(BaseModel):
    reason: str
    text: str


def _string_end(text: str, start: int) -> int:
    """The index just past the JSON string literal whose opening quote is at ``start`` (escapes respected;
    ``len(text)`` when it is never closed)."""
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == '"':
            return i + 1
        else:
            i += 1
    return len(text)


def _strip_trailing_commas(text: str) -> str:
    """``text`` without the commas that directly precede a closing } or ] (outside strings)."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            end = _string_end(text, i)
            out.append(text[i:end])
            i = end
            continue
        if not (ch == "," and _CLOSER.match(text, i + 1)):
            out.append(ch)
        i += 1
    return "".join(out)


def _balanced_objects(text: str) -> list[str]:
    """Every top-level {...} span in ``text``; quotes count as strings only inside an object, so prose
    quotes and apostrophes around it do not matter."""
    spans, depth, start, i = [], 0, -1, 0
    while i < len(text):
        ch = text[i]
        if ch == '"' and depth > 0:
            i = _string_end(text, i)
            continue
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start:i + 1])
        i += 1
    return spans


def _candidates(text: str) -> list[str]:
    stripped = text.strip()
    candidates = [stripped]
    candidates += [m.strip() for m in _FENCE.findall(text)]
    candidates += _balanced_objects(text)
    return candidates


def extract_json(text: str) -> dict[str, Any] | ParseFailure:
    """The first JSON object found in ``text`` (whole text, fenced block, or embedded object)."""
    if not text or not text.strip():
        return ParseFailure(reason="empty response", text=text)
    for candidate in _candidates(text):
        for variant in (candidate, _strip_trailing_commas(candidate)):
            try:
                value = json.loads(variant)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return ParseFailure(reason="no JSON object found", text=text)


def parse_as(text: str, model: type[T]) -> T | ParseFailure:
    """Extract a JSON object and validate it as ``model``; a failure says which field was wrong."""
    data = extract_json(text)
    if isinstance(data, ParseFailure):
        return data
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        field, message = first_validation_error(exc)
        return ParseFailure(reason=f"field '{field or '(root)'}': {message}", text=text)
