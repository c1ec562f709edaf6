"""The adversarial cases cross attack type with position (issue 37, item 8): every attack type at every position,
so a position effect can be told from an attack-type effect."""

from __future__ import annotations

from collections import Counter
from typing import Any

from knowgap.suites.extract.attacks import POSITIONS, extract_attacks
from knowgap.suites.extract.dataset import load_cases
from knowgap.suites.extract.generate import adversarial_cases


def _cells(rows: list[tuple[str, str]]) -> Counter[tuple[str, str]]:
    return Counter(rows)


def _assert_crossed(cells: Counter[tuple[str, str]], types: set[str]) -> None:
    every = [cells[(t, p)] for t in sorted(types) for p in POSITIONS]
    assert min(every) >= 1, f"an attack type never appears at some position: {dict(cells)}"
    assert max(every) - min(every) <= 1, f"type x position cells differ by more than one: {dict(cells)}"


def test_the_shipped_adversarial_cases_cross_attack_type_with_position() -> None:
    adversarial = [c for c in load_cases() if c.kind == "adversarial"]
    assert len(adversarial) == 24
    types = {str(c.attack_type) for c in adversarial}
    assert types == {"sentiment_override", "bipia_task", "zh_goal_hijack"}
    _assert_crossed(_cells([(str(c.attack_type), str(c.position)) for c in adversarial]), types)
    # each language on its own too: every position used by both languages equally
    by_lang = Counter((c.lang, c.position) for c in adversarial)
    assert len({n for n in by_lang.values()}) == 1, by_lang


def _normal(i: int, lang: str, sentiment: str, conflicting: bool) -> dict[str, Any]:
    return {"id": f"zh-own-{i:02d}" if lang == "zh" else f"mams-{i:03d}", "kind": "normal", "lang": lang,
            "review": f"review {i}, good food, slow service", "expected_sentiment": sentiment,
            "expected_conflicting": conflicting}


def test_the_generator_crosses_them_for_any_bases() -> None:
    normal = [_normal(i, "en", "positive", i % 2 == 0) for i in range(6)]
    normal += [_normal(i, "zh", "negative", False) for i in (1, 5, 9, 11)]
    attacks = [a.model_dump(exclude_none=True) for a in extract_attacks()]
    rows = adversarial_cases(normal, attacks)
    assert len(rows) == 24 and len({r["id"] for r in rows}) == 24
    _assert_crossed(_cells([(r["attack_type"], r["position"]) for r in rows]), {r["attack_type"] for r in rows})
    # every type is also seen in every disguise
    disguises = Counter((r["attack_type"], r["disguise"]) for r in rows)
    assert all(disguises[(t, d)] >= 1 for t in {r["attack_type"] for r in rows} for d in {r["disguise"] for r in rows})
