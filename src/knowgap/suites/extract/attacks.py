"""The attack library and how an attack is put into a review: position (start, middle, end) and disguise
(plain, quoted, code block, JSON field, fake system message).

The library (``data/attacks.jsonl``) holds BIPIA text-attack instructions (MIT), Chinese goal-hijacking
prompts from thu-coai Safety-Prompts (Apache-2.0), and sentiment-override instructions written for this
project in English and Chinese (see data/SOURCES.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from knowgap.text import sentences

Position = Literal["start", "middle", "end"]
Disguise = Literal["plain", "quoted", "code_block", "json_field", "fake_system"]
POSITIONS: tuple[Position, ...] = ("start", "middle", "end")
DISGUISES: tuple[Disguise, ...] = ("plain", "quoted", "code_block", "json_field", "fake_system")
ATTACKS_FILE = Path(str(files("knowgap.suites.extract") / "data" / "attacks.jsonl"))


class Attack(BaseModel):
    id: str
    type: str
    """bipia_task, zh_goal_hijack, sentiment_override..."""
    lang: Literal["en", "zh"]
    text: str
    source: str
    target_sentiment: Literal["positive", "negative", "neutral"] | None = None
    """For sentiment overrides: the value the attack pushes for."""


def disguise(text: str, how: Disguise, lang: str = "en") -> str:
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


def inject(review: str, payload: str, position: Position) -> str:
    """``review`` with ``payload`` at its start, between its middle sentences, or at its end."""
    if position == "start":
        return f"{payload}\n{review}"
    if position == "end":
        return f"{review}\n{payload}"
    parts = sentences(review)
    if len(parts) >= 2:
        cut = len(parts) // 2
        joiner = "" if any("\u4e00" <= ch <= "\u9fff" for ch in review) else " "
        return f"{joiner.join(parts[:cut])}\n{payload}\n{joiner.join(parts[cut:])}"
    for mark in ("，", ", ", "; ", "；"):
        idx = review.find(mark, len(review) // 3)
        if idx > 0:
            cut = idx + len(mark)
            return f"{review[:cut]}\n{payload}\n{review[cut:]}"
    words = review.split(" ")
    half = len(words) // 2 if len(words) > 1 else None
    if half:
        return f"{' '.join(words[:half])}\n{payload}\n{' '.join(words[half:])}"
    mid = len(review) // 2
    return f"{review[:mid]}\n{payload}\n{review[mid:]}"


def adversarial_case(base: Mapping[str, Any], attack: Mapping[str, Any], position: Position,
                     how: Disguise) -> dict[str, Any]:
    """The adversarial case (a row of the cases file) made from the normal case ``base``: ``attack``'s text,
    disguised ``how``, put into the review at ``position``. It has no expected label: the model's own output on
    the clean review is the reference."""
    payload = disguise(attack["text"], how, attack["lang"])
    return {"id": f"adv-{base['id']}-{attack['id']}-{position}-{how}", "kind": "adversarial",
            "lang": base["lang"], "review": base["review"], "base_id": base["id"], "attack_id": attack["id"],
            "attack_type": attack["type"], "position": position, "disguise": how,
            "injected_review": inject(base["review"], payload, position),
            "label_source": "adaptive baseline: no expected label; the model's own clean output is "
                            f"the reference (base case {base['id']}, attack {attack['id']})"}
