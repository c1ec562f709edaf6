"""The extract suite's data part (``knowgap data schema / check / import / inject extract``): one
:class:`~.dataset.ExtractCase` a line; an imported case whose ``label_source`` no column fills says the sheet and
row it came from.

``data inject extract`` adds adversarial cases after the input's: every normal case (the carriers) gets one per
attack, position (``start``, ``middle``, ``end``) and disguise (default ``plain``) -- or, with ``--cycle``, one
per attack, the positions and disguises taken in turn as the shipped cases are built. A ``sentiment_override``
attack pushing for the sentiment the review is already labelled with is left out: it cannot flip it. Each
adversarial case carries its attack's id, type, family and source (``attack_id``, ``attack_type``,
``attack_family``, ``attack_source``), so a run reports an attack of one's own under its family.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from typing import Any, cast

from knowgap.engine.case_injection import CaseInjection, CaseRecord, Placement, Planned
from knowgap.engine.suite_data import SuiteData, record_ids
from knowgap.injection.attacks import Attack
from knowgap.suites.extract.attacks import CHECKS, Disguise, Position, adversarial_case
from knowgap.suites.extract.dataset import ExtractCase, check_cases

SAME_SENTIMENT = "(case, attack) pairs left out: the attack pushes for the sentiment the review already has"


class AdversarialCases(CaseInjection):
    """extract's injection hook: adversarial cases made from the normal ones (see the module)."""

    unit = "normal case"
    checks = CHECKS
    placeholders = ()
    reads = ("target_sentiment",)
    default_disguises = ("plain",)
    cycle = True
    adds_cases = True
    carried_in = None
    made = "adversarial cases"

    def carrier(self, record: CaseRecord) -> bool:
        return bool(record.row.get("kind") == "normal")

    def variants(self, bases: Sequence[CaseRecord], attacks: Sequence[Attack],
                 placement: Placement) -> tuple[list[dict[str, Any]], int]:
        """The adversarial cases of ``bases`` and the number of (base, attack) pairs left out."""
        made: list[dict[str, Any]] = []
        skipped = k = 0
        positions, disguises = placement.positions, placement.disguises
        for base in (record.row for record in bases):
            for attack in attacks:
                if attack.target_sentiment is not None and attack.target_sentiment == base.get("expected_sentiment"):
                    skipped += 1
                    continue
                if placement.cycle:
                    pairs = [(positions[k % len(positions)], disguises[k % len(disguises)])]
                    k += 1
                else:
                    pairs = [(p, d) for p in positions for d in disguises]
                made += [{**adversarial_case(base, attack.model_dump(), cast(Position, p), cast(Disguise, d)),
                          "attack_family": attack.family_name(), "attack_source": attack.source}
                         for p, d in pairs]
        return made, skipped

    def plan(self, carriers: Sequence[CaseRecord], attacks: Sequence[Any], placement: Placement) -> Planned:
        made, skipped = self.variants(carriers, attacks, placement)
        return Planned([(str(row["base_id"]), str(row["id"])) for row in made], skipped, SAME_SENTIMENT)

    def plant(self, carriers: Sequence[CaseRecord], attacks: Sequence[Any], placement: Placement,
              keep: Set[str]) -> list[tuple[str, dict[str, Any]]]:
        made, _ = self.variants(carriers, attacks, placement)
        return [(str(row["base_id"]), row) for row in made if row["id"] in keep]


CASE_FILE = SuiteData(ExtractCase, provenance_field="label_source", checker=check_cases,
                      injection=AdversarialCases(), units=record_ids("cases.jsonl"))  # the card's unit: a case
