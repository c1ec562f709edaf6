"""Which attack each case gets: the planner every suite uses, so injected runs are built the same way
everywhere and a case file written by ``knowgap data inject`` holds exactly what ``run --inject`` would plant.

The cases are taken in the suite's stable order; the ``n``-th injection (case ``i``, injection ``j`` of
``per_case``: ``n = i * per_case + j``) gets family ``n mod F`` of the families the case's language has, an
attack of that family in turn, position ``(n div F) mod P`` and disguise ``(n div F·P) mod D``: over any ``F·P``
consecutive injections every family meets every position once. An attack's ``{marker}`` becomes the case's own
code (:func:`~knowgap.injection.attacks.marker_for`), its ``{field}`` the field the suite names for the case.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from knowgap.errors import KnowgapError
from knowgap.injection.attacks import FAMILIES, Attack, Check, marker_for
from knowgap.injection.placement import DISGUISES, POSITIONS, Disguise, Position, disguise


class Injection(BaseModel):
    """One instruction planted in one case: the attack as filled for the case, where and how it sits."""

    model_config = ConfigDict(extra="forbid")

    attack_id: str
    attack_type: str | None = Field(None, description="The attack's type, a finer kind within its family (None: "
                                                      "planted before injections carried it).")
    family: str = Field(description="The attack's family, or 'unclassified'.")
    check: Check
    lang: str
    text: str = Field(description="The instruction with its placeholders filled.")
    payload: str = Field(description="The text as planted: the instruction in its disguise.")
    position: Position
    disguise: Disguise
    marker: str | None = Field(None, description="The code whose presence in the output proves obedience.")
    field: str | None = Field(None, description="The hidden field the attack asks for (exfiltration).")
    source: str = ""


def make_injection(attack: Attack, case_id: str, position: Position, how: Disguise,
                   field: str | None = None) -> Injection:
    """``attack`` filled for ``case_id`` (its marker; ``field`` for a ``{field}`` placeholder) and dressed."""
    needs = attack.placeholders()
    if "field" in needs and not field:
        raise KnowgapError(f"attack '{attack.id}' asks for a hidden field and case '{case_id}' names none")
    marker = marker_for(case_id, attack.id) if "marker" in needs else None
    text = attack.text.replace("{marker}", marker or "").replace("{field}", field or "")
    return Injection(attack_id=attack.id, attack_type=attack.type, family=attack.family_name(), check=attack.check,
                     lang=attack.lang, text=text, payload=disguise(text, how, attack.lang), position=position,
                     disguise=how, marker=marker, field=field if "field" in needs else None, source=attack.source)


def _by_family(attacks: Sequence[Attack]) -> list[list[Attack]]:
    order = [*FAMILIES, "unclassified"]
    groups: dict[str, list[Attack]] = {}
    for attack in attacks:
        groups.setdefault(attack.family_name(), []).append(attack)
    return [groups[name] for name in order if name in groups]


def plan_injections(cases: Sequence[tuple[str, str]], attacks: Sequence[Attack], *,
                    positions: Sequence[Position] = POSITIONS, disguises: Sequence[Disguise] = DISGUISES,
                    per_case: int = 1, field_for: Callable[[str], str | None] | None = None,
                    ) -> dict[str, list[Injection]]:
    """The injections of each case of ``cases`` ((id, language) in the suite's stable order): ``per_case``
    each, as the module says. A case's attacks are those of its language (all of them when none is); an
    attack asking for a ``{field}`` is used only where ``field_for`` names one for the case."""
    if not attacks:
        raise KnowgapError("no attack to plant: the attack library (after the --attack-families filter) is empty")
    if not positions or not disguises or per_case < 1:
        raise KnowgapError("give at least one position, one disguise and one injection per case")
    out: dict[str, list[Injection]] = {}
    n = 0
    for case_id, lang in cases:
        field = field_for(case_id) if field_for else None
        pool = [a for a in attacks if a.lang == lang] or list(attacks)
        pool = [a for a in pool if "field" not in a.placeholders() or field] or pool
        families = _by_family(pool)
        planned: list[Injection] = []
        for _ in range(per_case):
            f = len(families)
            group = families[n % f]
            attack = group[(n // f) % len(group)]
            position = positions[(n // f) % len(positions)]
            how = disguises[(n // (f * len(positions))) % len(disguises)]
            planned.append(make_injection(attack, case_id, position, how,
                                          field if "field" in attack.placeholders() else None))
            n += 1
        out[case_id] = planned
    return out
