"""``knowgap data inject``: adversarial cases built from a suite's normal cases and a file of attacks.

The suites with injected cases are those of :data:`SUPPORTED` (new adversarial cases beside the input's;
``clarify``: its pressure test, a ``pressure`` field on every case, the input's cases replaced:
:func:`knowgap.suites.clarify.pressure.pressure_cases`) and :data:`PLANTED` (the input's cases, each carrying
its ``injections``); another suite is refused with a line naming the ones that support it. For ``abstain`` (a
knowledge base of QA pairs: adding facts would break leave-one-out) every QA pair gets the planner's
injections, planted in a context fact when its question is asked
(:func:`knowgap.suites.abstain.injection.planted_kb_rows`).
For ``partial`` the scenarios themselves carry their cases' injections (an ``injections`` field:
:mod:`knowgap.suites.partial.inject_file`), written in place of the input's.
For ``starter`` every case of the case file gets the planner's injections (an ``injections`` field), planted
in its context when it is run (:func:`knowgap.suites.starter.injection.planted_rows`).

For ``extract``, every normal case of the input gets one adversarial case per
attack, position (``start``, ``middle``, ``end``) and disguise (``plain``, ``quoted``, ``code_block``,
``json_field``, ``fake_system``) -- or, with ``cycle``, one per attack, the positions and disguises taken in
turn as the shipped cases are built. A ``sentiment_override`` attack pushing for the sentiment the review is
already labelled with is left out: it cannot flip it. The output holds the input's cases as they were, then the
new ones, and passes the suite's case-file check.

The attacks file is JSONL, one attack a line, read strictly (:class:`knowgap.injection.attacks.Attack`, see
docs/injection.md): ``id`` (unique), ``type``, ``lang`` (``en`` or ``zh``), ``text``, ``source``, optionally
``family``, ``check``, ``suites`` and, for an override, ``target_sentiment``; an unknown field, a number where
text belongs or a repeated id is an error naming the file, the line and the field.
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
from knowgap.suites.clarify.pressure import pressure_cases
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
    """The cases carry their injections (a suite of :data:`PLANTED`): ``added`` cases, none kept beside them."""


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
SUPPORTED: dict[str, Builder] = {"extract": _extract_variants, "clarify": pressure_cases, "partial": inject_scenarios}
"""The suites whose cases can carry an injected instruction, and how their adversarial cases are built."""
IN_PLACE = frozenset({"partial"})
"""Suites whose builder returns the input's cases themselves, carrying their injections (written instead of the
input's cases, not after them)."""


def _planted(suite: str, unit: str, container: str, load: Callable[[Path], Sequence[Any]], checks: Sequence[str],
             plant: Callable[..., list[dict[str, Any]]], cases: Path, out: Path, attacks: Path | None,
             positions: list[str], disguises: list[str], types: Sequence[str], cycle: bool) -> InjectResult:
    """``suite``'s cases (each a ``unit`` of a ``container``, read by ``load``), each with the planner's
    injections from the attacks with ``checks``, planted by ``plant`` (see the module)."""
    if cycle:
        raise KnowgapError(f"knowgap data inject {suite}: --cycle is for extract ({suite}'s injections are always "
                           f"planned in turn, one per {unit})")
    loaded = load(cases)
    carrying = [c.id for c in loaded if c.injections]
    if carrying:
        raise InputError(str(cases), f"{unit} '{carrying[0]}', field 'injections': the file already carries "
                                     f"injections (inject into a {container} without them)")
    library = _typed(for_suite(read_attacks(attacks), suite, checks=checks), types)
    rows = plant(loaded, library, positions=positions, disguises=disguises)
    write_checked(suite, out, rows)
    return InjectResult(out=out, kept=0, added=len(rows), bases=len(rows), attacks=len(library), skipped=0,
                        in_place=True)


def _abstain_planted(cases: Path, out: Path, attacks: Path | None, positions: list[str], disguises: list[str],
                     types: Sequence[str], cycle: bool) -> InjectResult:
    """abstain: the knowledge base's QA pairs, each with its injections (see the module)."""
    from knowgap.suites.abstain.dataset import load_file
    from knowgap.suites.abstain.injection import CHECKS, planted_kb_rows

    if not cycle and out.suffix.lower() != ".jsonl":
        raise KnowgapError(f"knowgap data inject abstain: --out {out} must be a .jsonl file (one QA pair a line)")
    return _planted("abstain", "QA pair", "knowledge base", load_file, CHECKS, planted_kb_rows, cases, out, attacks,
                    positions, disguises, types, cycle)


def _starter_planted(cases: Path, out: Path, attacks: Path | None, positions: list[str], disguises: list[str],
                     types: Sequence[str], cycle: bool) -> InjectResult:
    """starter: the case file's cases, each with its injections in the context (see the module)."""
    from knowgap.suites.starter.dataset import load_cases
    from knowgap.suites.starter.injection import CHECKS, planted_rows

    return _planted("starter", "case", "case file", load_cases, CHECKS, planted_rows, cases, out, attacks,
                    positions, disguises, types, cycle)


DEFAULT_DISGUISES = {"abstain": list(DISGUISES), "partial": list(DISGUISES), "starter": list(DISGUISES)}
"""Disguises when none is given (else plain): abstain's, partial's and starter's are run --inject's (the plans
match)."""
Planter = Callable[[Path, Path, Path | None, list[str], list[str], Sequence[str], bool], InjectResult]
PLANTED: dict[str, Planter] = {"abstain": _abstain_planted, "starter": _starter_planted}
"""The suites whose cases carry their injections in place (an ``injections`` field), and how they are planted."""


def _typed(library: list[Attack], types: Sequence[str]) -> list[Attack]:
    """``library`` restricted to the attack types of ``types`` (all when empty)."""
    if not types:
        return library
    wanted = parse_choices(types, sorted({a.type for a in library}), "--types")
    return [a for a in library if a.type in wanted]


def inject_cases(suite: str, cases: Path, out: Path, *, attacks: Path | None = None,
                 positions: Sequence[str] = ("start", "middle", "end"), disguises: Sequence[str] | None = None,
                 types: Sequence[str] = (), cycle: bool = False) -> InjectResult:
    """Write ``cases`` and the adversarial cases built from its normal ones to ``out`` (see the module); for a
    suite of :data:`PLANTED`, its cases carrying their injections. ``disguises`` None: the suite's default
    (:data:`DEFAULT_DISGUISES`, else plain)."""
    if suite not in SUPPORTED and suite not in PLANTED:
        raise KnowgapError(f"knowgap data inject: suite '{suite}' has no injected cases yet (supported: "
                           f"{', '.join(sorted({*SUPPORTED, *PLANTED}))})")
    chosen_positions = parse_choices(positions, POSITIONS, "--positions")
    chosen_disguises = parse_choices(disguises or DEFAULT_DISGUISES.get(suite, ["plain"]), DISGUISES, "--disguises")
    if suite in PLANTED:
        return PLANTED[suite](cases, out, attacks, chosen_positions, chosen_disguises, types, cycle)
    raise_problems(check_file(suite, cases))
    library = _typed(for_suite(read_attacks(attacks), suite) if attacks or suite != "extract" else extract_attacks(),
                     types)
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
