"""extract's attacks, on the shared library (:mod:`knowgap.injection`): the attacks meant for extract whose
success the takeover judge can check (BIPIA text attacks, Safety-Prompts goal hijacking and the sentiment
overrides written for extract: the 29 the suite has always used), and how an attack makes an adversarial case
from a normal one (position and disguise: :mod:`knowgap.injection.placement`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from knowgap.injection.attacks import ATTACKS_FILE, Attack, for_suite, read_attacks
from knowgap.injection.placement import DISGUISES, POSITIONS, Disguise, Position, disguise, inject

__all__ = ["ATTACKS_FILE", "CHECKS", "DISGUISES", "POSITIONS", "Attack", "Disguise", "Position",
           "adversarial_case", "disguise", "extract_attacks", "inject"]

CHECKS = ("takeover",)
"""The checks extract makes: flips against the clean baseline, and the takeover judge."""


def extract_attacks(path: Path | None = None) -> list[Attack]:
    """The attacks of ``path`` (default: the shared library) meant for extract, with a check it makes."""
    return for_suite(read_attacks(path), "extract", checks=CHECKS)


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
