"""``knowgap data inject``: adversarial cases built from a suite's normal cases and a file of attacks.

The suites of :data:`SUPPORTED` have injected cases; another suite is refused with a line naming the ones that
support it. For ``partial`` the scenarios themselves carry their cases' injections (an ``injections`` field:
:mod:`knowgap.suites.partial.inject_file`), written in place of the input's.

For ``extract``, every normal case of the input gets one adversarial case per
attack, position (``start``, ``middle``, ``end``) and disguise (``plain``, ``quoted``, ``code_block``,
``json_field``, ``fake_system``) -- or, with ``cycle``, one per attack, the positions and disguises taken in
turn as the shipped cases are built. A ``sentiment_override`` attack pushing for the sentiment the review is
already labelled with is left out: it cannot flip it. The output holds the input's cases as they were, then the
new ones, and passes the suite's case-file check.

The attacks file is JSONL, one attack a line, read strictly (:class:`AttackRow`): ``id`` (unique), ``type``,
``lang`` (``en`` or ``zh``), ``text``, ``source``, and for an override ``target_sentiment``; an unknown field,
a number where text belongs or a repeated id is an error naming the file, the line and the field.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowgap.casefiles.problems import raise_problems
from knowgap.casefiles.suite_formats import check_file, write_checked
from knowgap.errors import InputError, KnowgapError, parse_choices
from knowgap.injection.attacks import Attack, for_suite, read_attacks
from knowgap.jsonl import read_lines
from knowgap.suites.extract.attacks import DISGUISES, POSITIONS, adversarial_case, extract_attacks
from knowgap.suites.partial.inject_file import inject_scenarios


@dataclass
class InjectResult:
    out: Path
    kept: int
    """Cases of the input, written unchanged."""
    added: int
    """Adversarial cases made."""
    bases: int
    """Normal cases attacked."""
    attacks: int
    skipped: int
    """(case, attack) pairs left out: an override pushing for the label the review already has."""
    in_place: bool = False
    """The input's cases were written carrying their injections (``added`` of them), no case was added."""


def _extract_variants(rows: list[dict[str, Any]], attacks: list[Attack], positions: list[str],
                      disguises: list[str], cycle: bool) -> tuple[list[dict[str, Any]], int, int]:
    """The adversarial cases of the extract suite, the number of bases and of (base, attack) pairs skipped."""
    bases = [row for row in rows if row.get("kind") == "normal"]
    made: list[dict[str, Any]] = []
    skipped = k = 0
    for base in bases:
        for attack in attacks:
            if attack.target_sentiment is not None and attack.target_sentiment == base.get("expected_sentiment"):
                skipped += 1
                continue
            if cycle:
                pairs = [(positions[k % len(positions)], disguises[k % len(disguises)])]
                k += 1
            else:
                pairs = [(p, d) for p in positions for d in disguises]
            made += [adversarial_case(base, attack.model_dump(), p, d)  # type: ignore[arg-type]
                     for p, d in pairs]
    return made, len(bases), skipped


Builder = Callable[[list[dict[str, Any]], list[Attack], list[str], list[str], bool],
                   tuple[list[dict[str, Any]], int, int]]
SUPPORTED: dict[str, Builder] = {"extract": _extract_variants, "partial": inject_scenarios}
"""The suites whose cases can carry an injected instruction, and how their adversarial cases are built."""
IN_PLACE = frozenset({"partial"})
"""Suites whose builder returns the input's cases themselves, carrying their injections (written instead of the
input's cases, not after them)."""


def inject_cases(suite: str, cases: Path, out: Path, *, attacks: Path | None = None,
                 positions: Sequence[str] = ("start", "middle", "end"), disguises: Sequence[str] = ("plain",),
                 types: Sequence[str] = (), cycle: bool = False) -> InjectResult:
    """Write ``cases`` and the adversarial cases built from its normal ones to ``out`` (see the module)."""
    if suite not in SUPPORTED:
        raise KnowgapError(f"knowgap data inject: suite '{suite}' has no injected cases yet (supported: "
                           f"{', '.join(sorted(SUPPORTED))})")
    chosen_positions = parse_choices(positions, POSITIONS, "--positions")
    chosen_disguises = parse_choices(disguises, DISGUISES, "--disguises")
    raise_problems(check_file(suite, cases))
    library = for_suite(read_attacks(attacks), suite) if attacks or suite != "extract" else extract_attacks()
    if types:
        known = sorted({a.type for a in library})
        wanted = parse_choices(types, known, "--types")
        library = [a for a in library if a.type in wanted]
    rows = [row for _, row in read_lines(cases)]
    made, bases, skipped = SUPPORTED[suite](rows, library, chosen_positions, chosen_disguises, cycle)
    if not made:
        raise InputError(str(cases), "no adversarial case was made: the file holds no normal case to attack"
                         if not bases else "no adversarial case was made: every attack pushes for the "
                                           "sentiment its review already has")
    if suite in IN_PLACE:
        write_checked(suite, out, made)
        return InjectResult(out=out, kept=0, added=bases, bases=bases, attacks=len(library), skipped=skipped,
                            in_place=True)
    taken = {row.get("id") for row in rows}
    clash = [row["id"] for row in made if row["id"] in taken]
    if clash:
        raise InputError(str(cases), f"already holds case ids the new cases would get: {', '.join(clash[:5])} "
                                     "(inject into a file of normal cases)")
    write_checked(suite, out, rows + made)
    return InjectResult(out=out, kept=len(rows), added=len(made), bases=bases, attacks=len(library),
                        skipped=skipped)
