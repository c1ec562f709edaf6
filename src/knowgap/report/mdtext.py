"""Text from models and datasets made inert for markdown (a pull-request comment, a job summary)."""

from __future__ import annotations

from knowgap.redaction import redact

_SPECIAL = str.maketrans({"|": "\\|", "<": "&lt;", ">": "&gt;", "`": "'", "\n": " ", "\r": " ", "*": "\\*",
                          "_": "\\_", "[": "\\[", "]": "\\]", "#": "\\#", "&": "&amp;"})


def md_text(text: str, limit: int = 160) -> str:
    """Inert one-line markdown text: shortened, stripped of markdown/HTML specials and redacted."""
    text = redact(text)
    text = text if len(text) <= limit else text[:limit] + "…"
    return text.translate(_SPECIAL)
