"""The options every suite with injected runs takes (each becomes a ``knowgap run SUITE`` flag), and the plan
they make for a suite's cases."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

from pydantic import Field

from knowgap.engine.suite import SuiteOptions
from knowgap.errors import KnowgapError, parse_choices
from knowgap.injection.attacks import FAMILIES, PLACEHOLDERS, Attack, for_suite, suite_library
from knowgap.injection.defences import DEFENCES
from knowgap.injection.placement import DISGUISES, POSITIONS, Disguise, Position
from knowgap.injection.plan import Injection, plan_injections


class InjectionOptions(SuiteOptions):
    """Mixed into a suite's options: ``--inject`` and what it plants, ``--defences`` to compare."""

    inject: bool = Field(False, description="Also run every case with an instruction hidden in its untrusted text "
                                            "(one attack per case from the attack library; see docs/injection.md).")
    attacks: str | None = Field(None, description="--inject: a JSONL attack library of your own (default: the "
                                                  "shipped one).")
    attack_families: list[str] = Field(default_factory=list,
                                       description=f"--inject: attack families to plant ({', '.join(FAMILIES)}; "
                                            "default: all the suite can check).")
    positions: list[str] = Field(default_factory=lambda: [str(p) for p in POSITIONS],
                                 description="--inject: where the instruction sits in the carrier: start, middle, end.")
    disguises: list[str] = Field(default_factory=lambda: [str(d) for d in DISGUISES],
                                 description=f"--inject: how it is dressed: {', '.join(DISGUISES)}.")
    injections_per_case: int = Field(1, ge=1, le=20, description="--inject: attacks planted per case (each its own "
                                                                 "injected run).")
    defences: list[str] = Field(default_factory=lambda: ["none"],
                                description=f"Defences to compare, one configuration each: {', '.join(DEFENCES)}.")


def chosen_defences(options: InjectionOptions) -> list[str]:
    return parse_choices(options.defences, DEFENCES, "--defences")


def suite_attacks(options: InjectionOptions, suite: str, checks: Sequence[str],
                  placeholders: Sequence[str] = PLACEHOLDERS) -> list[Attack]:
    """The attacks ``suite`` plants under ``options``: of the library (``--attacks`` or the shipped one), those
    for the suite, with a check it makes (an ``--attacks`` file with an attack for the suite that it cannot use,
    or whose text holds a placeholder not in ``placeholders``, is refused: :func:`suite_library`), of the
    ``--attack-families`` asked for."""
    library = suite_library(Path(options.attacks) if options.attacks else None, suite, checks,
                            placeholders=placeholders).attacks
    families = (parse_choices(options.attack_families, [*FAMILIES, "unclassified"], "--attack-families")
                if options.attack_families else None)
    chosen = for_suite(library, suite, checks=checks, families=families)
    if not chosen:
        raise KnowgapError(f"{suite}: no attack of the library{' ' + options.attacks if options.attacks else ''} "
                           f"fits (suite {suite}, checks {', '.join(checks)}"
                           f"{', families ' + ', '.join(families) if families else ''})")
    return chosen


def plan_for(options: InjectionOptions, suite: str, cases: Sequence[tuple[str, str]], checks: Sequence[str],
             field_for: Callable[[str], str | None] | None = None) -> dict[str, list[Injection]]:
    """The injections of each of ``cases`` ((id, language), the suite's stable order) under ``options``."""
    positions = cast(list[Position], parse_choices(options.positions, POSITIONS, "--positions"))
    disguises = cast(list[Disguise], parse_choices(options.disguises, DISGUISES, "--disguises"))
    fills = PLACEHOLDERS if field_for else ("marker",)  # a {field} is filled only where the suite names fields
    return plan_injections(cases, suite_attacks(options, suite, checks, fills), positions=positions,
                           disguises=disguises, per_case=options.injections_per_case, field_for=field_for)
