"""``knowgap data inject``: adversarial cases built from a suite's normal cases and a file of attacks.

The suites with injected cases are those of :data:`SUPPORTED` (new adversarial cases beside the input's;
``clarify``: its pressure test, a ``pressure`` field on the cases, no attacks) and :data:`PLANTED` (the input's
cases, each carrying its ``injections``); another suite is refused with a line naming the ones that support it.
For ``abstain`` (a knowledge base of QA pairs: adding facts would break leave-one-out) every QA pair gets the
planner's injections, planted in a context fact when its question is asked
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
new ones, and passes the suite's case-file check. Each adversarial case carries its attack's id, type, family
and source (``attack_id``, ``attack_type``, ``attack_family``, ``attack_source``), so a run reports an attack of
one's own under its family.

Which base cases (:class:`Selection`): ``ids`` names them (extract: normal cases; abstain: QA pairs; partial:
scenarios; starter, clarify: cases), ``sample`` N keeps N of the injected cases, taken round-robin over their
base cases with ``seed`` (:func:`knowgap.engine.sampling.stratified_sample`): extract's variants of one review,
partial's (role, task) cases of one scenario. The cases not chosen are written as they were.

The attacks file is JSONL, one attack a line, read strictly (:class:`knowgap.injection.attacks.Attack`, see
docs/injection.md): ``id`` (unique), ``type``, ``lang`` (``en`` or ``zh``), ``text``, ``source``, optionally
``family``, ``check``, ``suites`` and, for an override, ``target_sentiment``; an unknown field, a number where
text belongs or a repeated id is an error naming the file, the line and the field. Every field of an attack meant
for the suite must mean something there, or the file is refused naming it
(:func:`knowgap.injection.attacks.suite_library`); attacks whose ``suites`` name other suites are left out and
counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowgap.casefiles.problems import did_you_mean, raise_problems
from knowgap.casefiles.suite_formats import check_file, write_checked
from knowgap.engine.sampling import stratified_sample
from knowgap.errors import InputError, KnowgapError, parse_choices
from knowgap.injection.attacks import Attack, suite_library
from knowgap.jsonl import read_lines
from knowgap.suites.clarify.pressure import pressure_cases
from knowgap.suites.extract.attacks import CHECKS as EXTRACT_CHECKS
from knowgap.suites.extract.attacks import DISGUISES, POSITIONS, adversarial_case
from knowgap.suites.partial.inject_file import inject_scenarios


@dataclass
class InjectResult:
    out: Path
    kept: int
    """Cases of the input, written unchanged."""
    added: int
    """Adversarial cases made (a suite of :data:`PLANTED` or ``partial``: cases carrying injections)."""
    bases: int
    """Base cases attacked."""
    attacks: int
    skipped: int
    """(case, attack) pairs left out: an override pushing for the label the review already has."""
    in_place: bool = False
    """The cases carry their injections (a suite of :data:`PLANTED`): ``added`` cases, none kept beside them."""
    other_suites: int = 0
    """Attacks of the file left out: their ``suites`` name other suites."""
    sampled_from: int | None = None
    """``sample``: how many injected cases there were to take ``added`` of."""


@dataclass(frozen=True)
class Selection:
    """Which base cases get injections: ``ids`` (all when empty), then ``sample`` N of the injected cases, taken
    round-robin over their base cases with ``seed``."""

    ids: Sequence[str] = ()
    sample: int | None = None
    seed: int = 0

    def pick(self, available: Sequence[str], unit: str, file: Path) -> set[str]:
        """The ids of ``available`` (base cases, each a ``unit`` of ``file``) that ``ids`` names; all when none."""
        wanted = list(dict.fromkeys(part.strip() for item in self.ids for part in item.split(",") if part.strip()))
        if not wanted:
            return set(available)
        unknown = [i for i in wanted if i not in available]
        if unknown:
            shown = ", ".join(available[:10]) + (f", ... ({len(available)} in all)" if len(available) > 10 else "")
            raise_problems([f"--ids {i}: no {unit} '{i}' in {file}{did_you_mean(i, list(available))} "
                            f"({unit}s: {shown})" for i in unknown])
        return set(wanted)

    def take(self, items: list[Any], group: Callable[[Any], str]) -> list[Any]:
        """``sample`` of ``items`` round-robin over ``group`` (all when no sample)."""
        if self.sample is None:
            return items
        if self.sample < 1:
            raise KnowgapError(f"--sample {self.sample}: give a number of cases, 1 or more")
        return stratified_sample(items, self.sample, group, self.seed)


ALL = Selection()


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
            made += [{**adversarial_case(base, attack.model_dump(), p, d),  # type: ignore[arg-type]
                      "attack_family": attack.family_name(), "attack_source": attack.source}
                     for p, d in pairs]
    return made, len(bases), skipped


Builder = Callable[[list[dict[str, Any]], list[Attack], list[str], list[str], bool],
                   tuple[list[dict[str, Any]], int, int]]
SUPPORTED: dict[str, Builder] = {"extract": _extract_variants, "clarify": pressure_cases, "partial": inject_scenarios}
"""The suites whose cases can carry an injected instruction, and how their adversarial cases are built."""
IN_PLACE = frozenset({"partial"})
"""Suites whose builder returns the input's cases themselves, carrying their injections (written instead of the
input's cases, not after them)."""
FILLS: dict[str, tuple[str, ...]] = {"extract": (), "partial": ("marker", "field"), "abstain": ("marker",),
                                     "starter": ("marker",)}
"""The placeholders each suite fills in an attack's text (extract plants the text as written)."""


def _planted(suite: str, unit: str, container: str, load: Callable[[Path], Sequence[Any]], checks: Sequence[str],
             plant: Callable[..., list[dict[str, Any]]], cases: Path, out: Path, attacks: Path | None,
             positions: list[str], disguises: list[str], types: Sequence[str], cycle: bool,
             selection: Selection) -> InjectResult:
    """``suite``'s cases (each a ``unit`` of a ``container``, read by ``load``), the chosen ones each with the
    planner's injections from the attacks with ``checks``, planted by ``plant`` (see the module)."""
    if cycle:
        raise KnowgapError(f"knowgap data inject {suite}: --cycle is for extract ({suite}'s injections are always "
                           f"planned in turn, one per {unit})")
    loaded = load(cases)
    carrying = [c.id for c in loaded if c.injections]
    if carrying:
        raise InputError(str(cases), f"{unit} '{carrying[0]}', field 'injections': the file already carries "
                                     f"injections (inject into a {container} without them)")
    found = suite_library(attacks, suite, checks, placeholders=FILLS[suite])
    library = _typed(found.attacks, types)
    picked = selection.pick([c.id for c in loaded], unit, cases)
    chosen = {c.id for c in selection.take([c for c in loaded if c.id in picked], lambda c: str(c.id))}
    rows = plant(loaded, library, positions=positions, disguises=disguises)
    if len(chosen) < len(loaded):  # planned over the chosen cases alone; the others written as they were
        planted = iter(plant([c for c in loaded if c.id in chosen], library, positions=positions,
                             disguises=disguises))
        rows = [next(planted) if c.id in chosen else {k: v for k, v in row.items() if k != "injections"}
                for c, row in zip(loaded, rows, strict=True)]
    write_checked(suite, out, rows)
    return InjectResult(out=out, kept=len(loaded) - len(chosen), added=len(chosen), bases=len(chosen),
                        attacks=len(library), skipped=0, in_place=True, other_suites=found.other_suites,
                        sampled_from=len(picked) if selection.sample is not None else None)


def _abstain_planted(cases: Path, out: Path, attacks: Path | None, positions: list[str], disguises: list[str],
                     types: Sequence[str], cycle: bool, selection: Selection) -> InjectResult:
    """abstain: the knowledge base's QA pairs, each with its injections (see the module)."""
    from knowgap.suites.abstain.dataset import load_file
    from knowgap.suites.abstain.injection import CHECKS, planted_kb_rows

    if not cycle and out.suffix.lower() != ".jsonl":
        raise KnowgapError(f"knowgap data inject abstain: --out {out} must be a .jsonl file (one QA pair a line)")
    return _planted("abstain", "QA pair", "knowledge base", load_file, CHECKS, planted_kb_rows, cases, out, attacks,
                    positions, disguises, types, cycle, selection)


def _starter_planted(cases: Path, out: Path, attacks: Path | None, positions: list[str], disguises: list[str],
                     types: Sequence[str], cycle: bool, selection: Selection) -> InjectResult:
    """starter: the case file's cases, each with its injections in the context (see the module)."""
    from knowgap.suites.starter.dataset import load_cases
    from knowgap.suites.starter.injection import CHECKS, planted_rows

    return _planted("starter", "case", "case file", load_cases, CHECKS, planted_rows, cases, out, attacks,
                    positions, disguises, types, cycle, selection)


DEFAULT_DISGUISES = {"abstain": list(DISGUISES), "partial": list(DISGUISES), "starter": list(DISGUISES)}
"""Disguises when none is given (else plain): abstain's, partial's and starter's are run --inject's (the plans
match)."""
Planter = Callable[[Path, Path, Path | None, list[str], list[str], Sequence[str], bool, Selection], InjectResult]
PLANTED: dict[str, Planter] = {"abstain": _abstain_planted, "starter": _starter_planted}
"""The suites whose cases carry their injections in place (an ``injections`` field), and how they are planted."""


def _typed(library: list[Attack], types: Sequence[str]) -> list[Attack]:
    """``library`` restricted to the attack types of ``types`` (all when empty)."""
    if not types:
        return library
    wanted = parse_choices(types, sorted({a.type for a in library}), "--types")
    return [a for a in library if a.type in wanted]


def _clarify(rows: list[dict[str, Any]], cases: Path, out: Path, positions: list[str],
             selection: Selection) -> InjectResult:
    """clarify: the chosen cases with their pressure (the pressure test, :mod:`knowgap.suites.clarify.pressure`),
    the others as they were."""
    picked = selection.pick([str(r.get("id")) for r in rows], "case", cases)
    chosen = {str(r.get("id")) for r in selection.take([r for r in rows if str(r.get("id")) in picked],
                                                       lambda r: str(r.get("id")))}
    pressured, _, _ = pressure_cases([r for r in rows if str(r.get("id")) in chosen], [], positions, [], False)
    by_id = {str(r.get("id")): r for r in pressured}
    write_checked("clarify", out, [by_id.get(str(r.get("id")), r) for r in rows])
    return InjectResult(out=out, kept=len(rows) - len(chosen), added=len(chosen), bases=len(chosen), attacks=0,
                        skipped=0, sampled_from=len(picked) if selection.sample is not None else None)


def _partial(rows: list[dict[str, Any]], cases: Path, out: Path, library: list[Attack], positions: list[str],
             disguises: list[str], selection: Selection) -> InjectResult:
    """partial: the chosen scenarios, their chosen (role, task) cases carrying injections; the others as they
    were."""
    from knowgap.suites.partial.dataset import Scenario
    from knowgap.suites.partial.injected import case_id, case_keys

    picked = selection.pick([str(r.get("scenario_id")) for r in rows], "scenario", cases)
    scenarios = [Scenario.model_validate(r) for r in rows if str(r.get("scenario_id")) in picked]
    keys = [(s.scenario_id, case_id(s.scenario_id, role, t.id)) for s, role, t in case_keys(scenarios)]
    kept = {key for _, key in selection.take(keys, lambda k: str(k[0]))}
    made, added, _ = inject_scenarios([r for r in rows if str(r.get("scenario_id")) in picked], library, positions,
                                      disguises, True, keep=kept.__contains__)
    by_id = {str(r.get("scenario_id")): r for r in made}
    write_checked("partial", out, [by_id.get(str(r.get("scenario_id")), r) for r in rows])
    return InjectResult(out=out, kept=len(rows) - len(by_id), added=added, bases=len(by_id), attacks=len(library),
                        skipped=0, in_place=True, sampled_from=len(keys) if selection.sample is not None else None)


def inject_cases(suite: str, cases: Path, out: Path, *, attacks: Path | None = None,
                 positions: Sequence[str] = ("start", "middle", "end"), disguises: Sequence[str] | None = None,
                 types: Sequence[str] = (), cycle: bool = False, selection: Selection = ALL) -> InjectResult:
    """Write ``cases`` and the adversarial cases built from its normal ones to ``out`` (see the module); for a
    suite of :data:`PLANTED`, its cases carrying their injections. ``disguises`` None: the suite's default
    (:data:`DEFAULT_DISGUISES`, else plain). ``selection``: which base cases (all by default)."""
    if suite not in SUPPORTED and suite not in PLANTED:
        raise KnowgapError(f"knowgap data inject: suite '{suite}' has no injected cases yet (supported: "
                           f"{', '.join(sorted({*SUPPORTED, *PLANTED}))})")
    chosen_positions = parse_choices(positions, POSITIONS, "--positions")
    if suite == "clarify":
        given = [flag for flag, value in (("--attacks", attacks), ("--types", types), ("--disguises", disguises),
                                          ("--cycle", cycle)) if value]
        if given:
            raise KnowgapError(f"knowgap data inject clarify: {', '.join(given)} do not apply: clarify's pressure "
                               "test is the user's own 'just answer' phrase, not a hidden attack (docs/clarify.md)")
    chosen_disguises = parse_choices(disguises or DEFAULT_DISGUISES.get(suite, ["plain"]), DISGUISES, "--disguises")
    if suite in PLANTED:
        return PLANTED[suite](cases, out, attacks, chosen_positions, chosen_disguises, types, cycle, selection)
    raise_problems(check_file(suite, cases))
    rows = [row for _, row in read_lines(cases)]
    if suite == "clarify":
        return _clarify(rows, cases, out, chosen_positions, selection)
    from knowgap.suites.partial.injected import CHECKS as PARTIAL_CHECKS

    checks = EXTRACT_CHECKS if suite == "extract" else PARTIAL_CHECKS
    found = suite_library(attacks, suite, checks, placeholders=FILLS[suite])
    library = _typed(found.attacks, types)
    if suite in IN_PLACE:
        result = _partial(rows, cases, out, library, chosen_positions, chosen_disguises, selection)
        result.other_suites = found.other_suites
        return result
    normal = [str(row.get("id")) for row in rows if row.get("kind") == "normal"]
    picked = selection.pick(normal, "normal case", cases)
    every, bases, skipped = SUPPORTED[suite]([r for r in rows if str(r.get("id")) in picked and
                                              r.get("kind") == "normal"], library, chosen_positions,
                                             chosen_disguises, cycle)
    if not every:
        raise InputError(str(cases), "no adversarial case was made: the file holds no normal case to attack"
                         if not bases else "no adversarial case was made: every attack pushes for the "
                                           "sentiment its review already has")
    made = selection.take(every, lambda r: str(r["base_id"]))
    taken = {row.get("id") for row in rows}
    clash = [row["id"] for row in made if row["id"] in taken]
    if clash:
        raise InputError(str(cases), f"already holds case ids the new cases would get: {', '.join(clash[:5])} "
                                     "(inject into a file of normal cases)")
    write_checked(suite, out, rows + made)
    return InjectResult(out=out, kept=len(rows), added=len(made), bases=len({r["base_id"] for r in made}),
                        attacks=len(library), skipped=skipped, other_suites=found.other_suites,
                        sampled_from=len(every) if selection.sample is not None else None)
