"""Seeded samples that spread over groups: ``run --sample`` on cases built from base cases (extract's adversarial
variants of one review) and ``knowgap data inject --sample``.

A plain sample of 24 of 8 reviews x 6 variants reached 7 of the 8 reviews; taken round-robin over the reviews it
reaches all 8 (3 each), so a small sample measures as many independent units (clusters) as it can.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def stratified_sample(items: Sequence[T], n: int, group: Callable[[T], str], seed: int = 0) -> list[T]:
    """``n`` of ``items`` taken round-robin over their groups (``group(item)``), in ``items``' order.

    With ``random.Random(seed)``: the groups are put in a random order and each group's items shuffled; then the
    first item of every group is taken, then the second of every group that has one, and so on until ``n``. So
    every group is reached before any gives two (when ``n`` is at least the number of groups), and groups give
    at most one item more than each other while they last. ``n`` at least ``len(items)``: all of them."""
    if n >= len(items):
        return list(items)
    rng = random.Random(seed)
    groups: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        groups.setdefault(group(item), []).append(index)
    order = list(groups)
    rng.shuffle(order)
    for key in order:
        rng.shuffle(groups[key])
    chosen: list[int] = []
    depth = 0
    while len(chosen) < n:
        for key in order:
            if depth < len(groups[key]):
                chosen.append(groups[key][depth])
                if len(chosen) == n:
                    break
        depth += 1
    return [items[i] for i in sorted(chosen)]


def base_case(case: object) -> str | None:
    """The base case a case was built on: its ``base_id`` field (extract's adversarial variants of a review), or
    None."""
    base = getattr(case, "base_id", None)
    return base if isinstance(base, str) and base else None


def sample_cases(cases: Sequence[T], n: int, seed: int) -> list[T]:
    """``run --sample N``: when some cases carry a base case (:func:`base_case`), ``n`` taken round-robin over
    base cases (:func:`stratified_sample`; a case without one, such as the base case itself, is grouped under
    its own id, so a review and its variants are one group); otherwise ``random.Random(seed).sample`` as before.
    In the cases' order."""
    if not any(base_case(c) for c in cases):
        keep = set(random.Random(seed).sample(range(len(cases)), n))
        return [c for i, c in enumerate(cases) if i in keep]
    return stratified_sample(cases, n, lambda c: base_case(c) or str(getattr(c, "id", "")), seed)
