"""``knowgap data inject``: a suite's case file with injected cases, built from its cases and a file of attacks.

The same for every suite with an injection hook (its data part's ``injection``, a
:class:`~knowgap.engine.case_injection.CaseInjection`), built in or a plugin's; another suite is refused with a
line naming the ones that have one. The suite says which records carry injections (its carriers), which injected
cases it makes of them and how it plants them; this module does the rest:

1. the case file is read and checked as the suite checks it (every problem listed, nothing written); a file whose
   records carry injections already is refused;
2. the attacks: the file given (JSONL, one attack a line, read strictly: :class:`knowgap.injection.attacks.Attack`,
   docs/injection.md) or the shipped library, those meant for the suite (``suites`` empty or naming it; the others
   left out and counted). Every field of an attack meant for the suite must mean something there, or the file is
   refused naming it: a check the suite does not make, a placeholder it does not fill
   (:func:`knowgap.injection.attacks.suite_library`); ``types`` keeps some types only;
3. which carriers (:class:`Selection`): ``ids`` names them, ``sample`` N keeps N of the injected cases, taken
   round-robin over their carriers with ``seed`` (:func:`knowgap.engine.sampling.stratified_sample`): extract's
   variants of one review, partial's (role, task) cases of one scenario. The records not chosen are written as
   they were;
4. the result is written only when it passes the suite's case-file check: the input's records, then the new
   injected cases (a suite that adds cases: extract), or the input's records with the chosen ones carrying their
   injections in place (the others).

Which suites plant what, where: docs/data-import.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowgap.casefiles.problems import did_you_mean, raise_problems
from knowgap.casefiles.strict import case_data, suites_with
from knowgap.casefiles.suite_formats import write_checked
from knowgap.engine.case_injection import CaseInjection, Placement
from knowgap.engine.sampling import stratified_sample
from knowgap.errors import InputError, KnowgapError, parse_choices
from knowgap.injection.attacks import Attack, suite_library
from knowgap.injection.placement import DISGUISES, POSITIONS
from knowgap.suites import suite_names


@dataclass
class InjectResult:
    out: Path
    kept: int
    """Records of the input written as they were."""
    added: int
    """Injected cases made (a suite that plants in place: cases carrying injections)."""
    bases: int
    """Carriers injected."""
    attacks: int
    skipped: int
    """(case, attack) pairs left out (extract: an override pushing for the label the review already has)."""
    in_place: bool = False
    """The chosen records carry their injections (``added`` cases), none added beside them."""
    other_suites: int = 0
    """Attacks of the file left out: their ``suites`` name other suites."""
    sampled_from: int | None = None
    """``sample``: how many injected cases there were to take ``added`` of."""
    said: list[str] = field(default_factory=list)
    """What was done, in lines for a person (the command prints them)."""


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


def injection_of(suite: str) -> CaseInjection:
    """The injection hook of ``suite``; KnowgapError naming the suites that have one when it has none."""
    hook = case_data(suite).injection if suite in suite_names() else None
    if hook is None:
        having = suites_with(lambda data: data.injection is not None)
        raise KnowgapError(f"knowgap data inject: suite '{suite}' has no injected cases yet (supported: "
                           f"{', '.join(having)})")
    return hook


def _typed(library: list[Attack], types: Sequence[str]) -> list[Attack]:
    """``library`` restricted to the attack types of ``types`` (all when empty)."""
    if not types:
        return library
    wanted = parse_choices(types, sorted({a.type for a in library}), "--types")
    return [a for a in library if a.type in wanted]


def _placement(suite: str, hook: CaseInjection, out: Path, attacks: Path | None, positions: Sequence[str],
               disguises: Sequence[str] | None, types: Sequence[str], cycle: bool) -> Placement:
    """The options checked against what the suite's hook takes (see :func:`inject_cases`)."""
    chosen_positions = parse_choices(positions, POSITIONS, "--positions")
    if not hook.checks:
        given = [flag for flag, value in (("--attacks", attacks), ("--types", types), ("--disguises", disguises),
                                          ("--cycle", cycle)) if value]
        if given:
            raise KnowgapError(f"knowgap data inject {suite}: {', '.join(given)} do not apply: {hook.no_attacks}")
    if cycle and not hook.cycle:
        cycling = suites_with(lambda data: data.injection is not None and data.injection.cycle)
        raise KnowgapError(f"knowgap data inject {suite}: --cycle is for {', '.join(cycling)} ({suite}'s injections "
                           f"are always planned in turn, one per {hook.unit})")
    if out.suffix.lower() != ".jsonl":
        raise KnowgapError(f"knowgap data inject {suite}: --out {out} must be a .jsonl file (one record a line)")
    chosen = parse_choices(disguises or hook.default_disguises or DISGUISES, DISGUISES, "--disguises")
    return Placement(tuple(chosen_positions), tuple(chosen), cycle)


def inject_cases(suite: str, cases: Path, out: Path, *, attacks: Path | None = None,
                 positions: Sequence[str] = ("start", "middle", "end"), disguises: Sequence[str] | None = None,
                 types: Sequence[str] = (), cycle: bool = False, selection: Selection = ALL) -> InjectResult:
    """Write ``cases`` with injected cases to ``out`` (see the module). ``disguises`` None: the suite's default
    (all five, extract: plain). ``selection``: which base cases (all by default)."""
    hook = injection_of(suite)
    placement = _placement(suite, hook, out, attacks, positions, disguises, types, cycle)
    data = case_data(suite)
    records = data.records(cases)
    carrying = [r.id for r in records if hook.carried_in and r.row.get(hook.carried_in)]
    if carrying:
        raise InputError(str(cases), f"{hook.unit} '{carrying[0]}', field '{hook.carried_in}': the file already "
                                     f"carries {hook.carried_in} (inject into a file without them)")
    library, other_suites = [], 0
    if hook.checks:
        readers = suites_with(lambda data: data.injection is not None and "target_sentiment" in data.injection.reads)
        found = suite_library(attacks, suite, hook.checks, placeholders=hook.placeholders, reads=hook.reads,
                              read_by=readers)
        library, other_suites = _typed(found.attacks, types), found.other_suites
    carriers = [r for r in records if hook.carrier(r)]
    picked = selection.pick([r.id for r in carriers], hook.unit, cases)
    chosen = [r for r in carriers if r.id in picked]
    if not chosen:
        raise InputError(str(cases), f"no injected case was made: the file holds no {hook.unit} to inject into")
    planned = hook.plan(chosen, library, placement)
    if not planned.units:
        raise InputError(str(cases), f"no injected case was made: {planned.skipped} {planned.skipped_why}")
    taken = selection.take(planned.units, lambda unit: unit[0])
    planted = hook.plant(chosen, library, placement, {unit for _, unit in taken})
    bases = len({carrier for carrier, _ in taken})
    if hook.adds_cases:
        ids = {r.id for r in records}
        clash = [str(row.get(data.id_field or "id")) for _, row in planted if row.get(data.id_field or "id") in ids]
        if clash:
            raise InputError(str(cases), f"already holds case ids the new cases would get: {', '.join(clash[:5])} "
                                         "(inject into a file without injected cases)")
        rows = [r.row for r in records] + [row for _, row in planted]
        kept = len(records)
    else:
        by_id = dict(planted)
        rows = [by_id.get(r.id, r.row) for r in records]
        kept = len(records) - len(by_id)
    write_checked(suite, out, rows)
    result = InjectResult(out=out, kept=kept, added=len(taken), bases=bases, attacks=len(library),
                          skipped=planned.skipped, in_place=not hook.adds_cases, other_suites=other_suites,
                          sampled_from=len(planned.units) if selection.sample is not None else None)
    result.said = _said(suite, hook, result, planned.skipped_why)
    return result


def _said(suite: str, hook: CaseInjection, result: InjectResult, skipped_why: str) -> list[str]:
    """What was done, for a person."""
    wrote = f"wrote {result.kept + result.added} {suite} cases to {result.out} (checked)"
    if hook.adds_cases:
        skipped = f"; {result.skipped} {skipped_why}" if result.skipped else ""
        return [f"{result.added} {hook.made} from {result.bases} {hook.unit}s x {result.attacks} attacks{skipped}",
                wrote]
    if not hook.checks:
        return [f"{result.added} cases now carry {hook.carries}", wrote]
    others = f", {result.kept} {hook.unit}s as they were" if result.kept else ""
    return [f"injections planted on {result.added} {suite} cases (planned from {result.attacks} attacks{others}); "
            f"wrote {result.out} (checked)"]

