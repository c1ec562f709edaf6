"""Seeded samples that spread over groups (``run --sample`` on cases built from base cases, ``data inject
--sample``): every group is reached before any gives two, groups differ by at most one while they last."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from knowgap.engine.sampling import sample_cases, stratified_sample
from knowgap.engine.suite import Case


class Variant(Case):
    base_id: str | None = None


def _variants(bases: int, per_base: int) -> list[Variant]:
    return [Variant(id=f"adv-r{b}-{k}", base_id=f"r{b}") for b in range(bases) for k in range(per_base)]


@pytest.mark.parametrize("seed", range(20))
def test_24_of_8_reviews_x_6_variants_reach_every_review_three_times(seed: int) -> None:
    chosen = sample_cases(_variants(8, 6), 24, seed)
    assert Counter(c.base_id for c in chosen) == {f"r{b}": 3 for b in range(8)}
    assert chosen == sorted(chosen, key=lambda c: c.id)  # in the cases' order


@pytest.mark.parametrize("seed", range(20))
def test_uneven_groups_are_reached_first_then_filled_evenly(seed: int) -> None:
    rng = random.Random(seed)
    sizes = [rng.randint(1, 9) for _ in range(7)]
    items = [(g, k) for g, size in enumerate(sizes) for k in range(size)]
    n = rng.randint(7, len(items) - 1)
    counts = Counter(g for g, _ in stratified_sample(items, n, lambda item: str(item[0]), seed))
    assert sum(counts.values()) == n and set(counts) == set(range(7))
    open_groups = [g for g in range(7) if counts[g] < sizes[g]]  # groups not used up give within one of each other
    assert max(counts.values()) - min(counts[g] for g in open_groups or range(7)) <= 1


def test_the_sample_is_fixed_by_the_seed() -> None:
    cases = _variants(8, 6)
    assert sample_cases(cases, 10, 3) == sample_cases(cases, 10, 3)
    assert len({tuple(c.id for c in sample_cases(cases, 10, seed)) for seed in range(10)}) > 1


def test_a_base_case_groups_with_its_variants_and_cases_without_bases_sample_as_before() -> None:
    normals = [Variant(id=f"r{b}") for b in range(4)]
    chosen = sample_cases(normals + _variants(4, 3), 8, 0)
    assert Counter(c.base_id or c.id for c in chosen) == {f"r{b}": 2 for b in range(4)}
    plain = [Case(id=f"c{i}") for i in range(30)]
    keep = set(random.Random(5).sample(range(30), 7))
    assert sample_cases(plain, 7, 5) == [c for i, c in enumerate(plain) if i in keep]  # runs resume as they were
