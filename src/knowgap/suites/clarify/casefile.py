"""The clarify suite's data part (``knowgap data schema / check / import / inject clarify``): one
:class:`~.dataset.ClarifyCase` a line.

``data inject clarify`` gives each chosen case its pressure test (:mod:`.pressure`): a ``pressure`` field, the
user's own "just answer" phrase at the start or the end of the message (of ``--positions``), fixed by the case's
id; a case that has one keeps it. No attack is planted: the user says it, it is not hidden in untrusted text.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from typing import Any

from knowgap.engine.case_injection import CaseInjection, CaseRecord, Placement
from knowgap.engine.suite_data import SuiteData, record_ids
from knowgap.suites.clarify.dataset import ClarifyCase, check_cases
from knowgap.suites.clarify.pressure import pressure_for


class PressureTest(CaseInjection):
    """clarify's injection hook: the pressure on each chosen case (see the module)."""

    carried_in = None
    no_attacks = ("clarify's pressure test is the user's own 'just answer' phrase, not a hidden attack "
                  "(docs/clarify.md)")
    carries = "the pressure ('just answer' phrase in the query)"

    def plant(self, carriers: Sequence[CaseRecord], attacks: Sequence[Any], placement: Placement,
              keep: Set[str]) -> list[tuple[str, dict[str, Any]]]:
        return [(r.id, {**r.row, "pressure": r.row.get("pressure")
                        or pressure_for(r.id, str(r.row.get("lang")), placement.positions).model_dump()})
                for r in carriers if r.id in keep]


CASE_FILE = SuiteData(ClarifyCase, checker=check_cases, injection=PressureTest(),
                      units=record_ids("cases.jsonl"))  # the dataset card's unit: a case
