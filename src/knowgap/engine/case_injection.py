"""The injection hook of a suite's data part: how ``knowgap data inject SUITE`` plants attacks in its case file.

The suite says which records carry an injection (its carriers: ``--ids`` names them), which injected cases it
would make from them (:meth:`CaseInjection.plan`: ``--sample`` takes them round-robin over their carriers), how
it plants them and what a planted record holds (:meth:`CaseInjection.plant`). knowgap does the rest, the same for
every suite (:func:`knowgap.casefiles.inject.inject_cases`): it reads and checks the file, refuses one whose
records carry injections already, reads the attacks (strictly: a field the suite cannot honour is refused, see
:attr:`CaseInjection.checks` and :attr:`CaseInjection.placeholders`), chooses the carriers, and writes the result
only when it passes the suite's own check.

A suite whose cases carry an ``injections`` list planned as ``run --inject`` plans them needs no class of its
own: :class:`knowgap.injection.carried.CarriedInjections`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence, Set
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CaseRecord:
    """One record of a checked case file, as ``knowgap data inject`` hands it to a suite."""

    id: str
    """The record's id (its ``id_field``, or what the suite names it by)."""
    row: dict[str, Any]
    """The record as the file writes it (what is written back when it is left as it was)."""
    case: Any
    """The record validated (an instance of the suite's ``model``, or of what its ``checker`` reads)."""


@dataclass(frozen=True)
class Placement:
    """Where and how the attacks go, as the command was given them (checked against the known names)."""

    positions: tuple[str, ...]
    """Of ``start``, ``middle``, ``end``."""
    disguises: tuple[str, ...]
    """Of ``plain``, ``quoted``, ``code_block``, ``json_field``, ``fake_system``."""
    cycle: bool = False
    """One injected case per (carrier, attack), positions and disguises taken in turn (``--cycle``)."""


@dataclass(frozen=True)
class Planned:
    """The injected cases :meth:`CaseInjection.plant` would make, before any is chosen."""

    units: list[tuple[str, str]]
    """(carrier id, injected case id) of each, in order: ``--sample`` takes them round-robin over carriers."""
    skipped: int = 0
    """(carrier, attack) pairs left out."""
    skipped_why: str = ""
    """What the left-out pairs are, after their number ("(case, attack) pairs left out: ...")."""


class CaseInjection(ABC):
    """How a suite's case file takes injections (see the module). Attributes are class defaults a subclass (or an
    instance) sets."""

    unit: str = "case"
    """What a carrier is called (``--ids`` names carriers; messages say it)."""
    checks: tuple[str, ...] = ()
    """The attack checks the suite makes (of :data:`knowgap.injection.CHECKS`): an attack of a file of one's own
    with another check is refused. Empty: the suite plants no attacks (then ``--attacks``, ``--types``,
    ``--disguises`` and ``--cycle`` are refused, saying :attr:`no_attacks`)."""
    placeholders: tuple[str, ...] = ("marker",)
    """The placeholders the suite fills in an attack's text (``marker``, ``field``); an attack holding another is
    refused."""
    reads: tuple[str, ...] = ()
    """The optional fields of an attack the suite honours (``target_sentiment``: extract's sentiment overrides); an
    attack with another is refused."""
    default_disguises: tuple[str, ...] | None = None
    """The disguises when none is given; None: all five (as ``run --inject`` plants them)."""
    cycle: bool = False
    """Whether ``--cycle`` means something (else it is refused)."""
    adds_cases: bool = False
    """True: the injected cases are new records written after the input's (which are kept as they were); False:
    the chosen carriers are written in their place, carrying their injections."""
    carried_in: str | None = "injections"
    """The field of a record that holds its injections: a file whose records have it already is refused
    (None: no such field)."""
    no_attacks: str = ""
    """Why attacks do not apply (a suite whose :attr:`checks` are empty)."""
    made: str = "injected cases"
    """What the new records are called (a suite that :attr:`adds_cases`)."""
    carries: str = "injections"
    """What a planted record now carries (a suite that plants no attacks says so)."""

    def carrier(self, record: CaseRecord) -> bool:
        """Whether ``record`` can carry an injection (default: every record)."""
        return True

    def plan(self, carriers: Sequence[CaseRecord], attacks: Sequence[Any], placement: Placement) -> Planned:
        """The injected cases :meth:`plant` would make from ``carriers`` (default: one per carrier, named by its
        id). ``attacks`` are :class:`knowgap.injection.Attack` s. Raise InputError when none can be made."""
        return Planned([(record.id, record.id) for record in carriers])

    @abstractmethod
    def plant(self, carriers: Sequence[CaseRecord], attacks: Sequence[Any], placement: Placement,
              keep: Set[str]) -> list[tuple[str, dict[str, Any]]]:
        """The injected cases of :meth:`plan` whose id is in ``keep``, planted: (carrier id, row) each. A suite
        that :attr:`adds_cases` gives the new rows; another gives each carrier that keeps a case its row, carrying
        them (one row per carrier)."""
