"""Cases that carry their injections: the injection hook of a suite whose case records hold an ``injections`` list
(``knowgap data inject SUITE``), planned exactly as ``run --inject`` plans them (:func:`plan_injections` over the
chosen records in file order, one each), each record written back with its list. The suite plants them when it
runs the case (starter: in the context; abstain: in a context fact; a plugin: wherever its untrusted text is).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set
from typing import Any, cast

from knowgap.engine.case_injection import CaseInjection, CaseRecord, Placement
from knowgap.injection.attacks import Attack
from knowgap.injection.placement import Disguise, Position
from knowgap.injection.plan import plan_injections


class CarriedInjections(CaseInjection):
    """Each chosen record gets an ``injections`` list of one injection (see the module)."""

    def __init__(self, checks: Sequence[str], *, unit: str = "case",
                 lang: Callable[[CaseRecord], str] | None = None) -> None:
        self.checks = tuple(checks)
        self.unit = unit
        self.lang = lang or (lambda record: str(getattr(record.case, "lang", "") or ""))
        """A record's language: it gets attacks of that language (all of them when none is)."""

    def plant(self, carriers: Sequence[CaseRecord], attacks: Sequence[Any], placement: Placement,
              keep: Set[str]) -> list[tuple[str, dict[str, Any]]]:
        chosen = [record for record in carriers if record.id in keep]
        plan = plan_injections([(record.id, self.lang(record)) for record in chosen], cast(Sequence[Attack], attacks),
                               positions=cast(Sequence[Position], placement.positions),
                               disguises=cast(Sequence[Disguise], placement.disguises))
        return [(record.id, {**{k: v for k, v in record.row.items() if k != "injections"},
                             "injections": [i.model_dump() for i in plan[record.id]]}) for record in chosen]
