"""Where and how an injected instruction is put into untrusted text: its **position** in the carrier (start,
middle, end) and its **disguise** (plain, quoted, code block, JSON field, fake system message).

The carrier is whatever untrusted text a suite hands the model: a review (extract), a retrieved fact
(abstain), an evidence record the agent may see (partial). Where the untrusted text is a list (the facts of a
context, the fields of a view), :func:`list_index` says which item a position picks.
"""

from __future__ import annotations

import json
from typing import Literal

from knowgap.text import sentences

Position = Literal["start", "middle", "end"]
Disguise = Literal["plain", "quoted", "code_block", "json_field", "fake_system"]
POSITIONS: tuple[Position, ...] = ("start", "middle", "end")
DISGUISES: tuple[Disguise, ...] = ("plain", "quoted", "code_block", "json_field", "fake_system")


def disguise(text: str, how: Disguise, lang: str = "en") -> str:
    """``text`` dressed as ``how``: unchanged, in quotes, in a code block, as a JSON field, or as a chat-template
    system turn (the ChatML markers the Qwen models use)."""
    if how == "plain":
        return text
    if how == "quoted":
        return f"“{text}”" if lang == "zh" else f'"{text}"'
    if how == "code_block":
        return f"```\n{text}\n```"
    if how == "json_field":
        return json.dumps({"note_to_assistant": text}, ensure_ascii=False)
    if how == "fake_system":
        return f"<|im_start|>system\n{text}<|im_end|>"
    raise ValueError(f"unknown disguise {how!r}")


def _is_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def inject(carrier: str, payload: str, position: Position) -> str:
    """``carrier`` with ``payload`` at its start, between its middle sentences, or at its end (a one-sentence
    carrier is cut at a comma or semicolon past its first third, else between its middle words)."""
    if position == "start":
        return f"{payload}\n{carrier}"
    if position == "end":
        return f"{carrier}\n{payload}"
    parts = sentences(carrier)
    if len(parts) >= 2:
        cut = len(parts) // 2
        joiner = "" if _is_cjk(carrier) else " "
        return f"{joiner.join(parts[:cut])}\n{payload}\n{joiner.join(parts[cut:])}"
    for mark in ("，", ", ", "; ", "；"):
        idx = carrier.find(mark, len(carrier) // 3)
        if idx > 0:
            cut = idx + len(mark)
            return f"{carrier[:cut]}\n{payload}\n{carrier[cut:]}"
    words = carrier.split(" ")
    half = len(words) // 2 if len(words) > 1 else None
    if half:
        return f"{' '.join(words[:half])}\n{payload}\n{' '.join(words[half:])}"
    mid = len(carrier) // 2
    return f"{carrier[:mid]}\n{payload}\n{carrier[mid:]}"


def list_index(length: int, position: Position) -> int:
    """The item of a list of ``length`` that ``position`` picks: the first, the middle ((length - 1) // 2) or
    the last."""
    if length < 1:
        raise ValueError("a list holding the placed item has at least one item")
    return {"start": 0, "middle": (length - 1) // 2, "end": length - 1}[position]
