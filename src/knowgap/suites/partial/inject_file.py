"""``knowgap data inject partial``: a scenario file whose cases carry planted injections.

Each (role, task) case of each scenario gets one injection, planned exactly as ``knowgap run partial --inject``
plans it (:func:`knowgap.injection.plan_injections` over the file's cases in the suite's stable order, the
exfiltration attacks asking for the case's :func:`~.injected.hidden_field`), and stored in its scenario's
``injections`` field under ``ROLE/TASK_ID``. The scenarios are written back in place of the input's (no new
scenario is made); ``knowgap run partial --data OUT`` runs each case clean and with its injection.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from knowgap.errors import InputError
from knowgap.injection import Attack, Injection, for_suite, plan_injections
from knowgap.injection.placement import Disguise, Position
from knowgap.suites.partial.dataset import Scenario
from knowgap.suites.partial.injected import CHECKS, case_id, case_keys, file_key, hidden_field


def inject_scenarios(rows: list[dict[str, Any]], attacks: list[Attack], positions: Sequence[str],
                     disguises: Sequence[str], cycle: bool = True,
                     keep: Callable[[str], bool] | None = None) -> tuple[list[dict[str, Any]], int, int]:
    """The scenarios of ``rows`` (already checked) with an ``injections`` field, the number of cases that carry
    one, and 0 (nothing is skipped). ``cycle`` is ignored: the planner always takes positions and disguises in
    turn. ``keep``: only the cases whose id (``SCENARIO/ROLE/TASK``) it keeps get one (``data inject --sample``);
    a scenario none of whose cases is kept is left out."""
    del cycle
    scenarios = [Scenario.model_validate(row) for row in rows]
    carrying = [s.scenario_id for s in scenarios if s.injections]
    if carrying:
        raise InputError("partial", f"scenario '{carrying[0]}' already carries injections (inject into scenarios "
                                    "without an injections field)", field="injections")
    keys = [(s, role, t) for s, role, t in case_keys(scenarios)
            if keep is None or keep(case_id(s.scenario_id, role, t.id))]
    fields = {case_id(s.scenario_id, role, t.id): hidden_field(s, role) for s, role, t in keys}
    plan = plan_injections([(case_id(s.scenario_id, role, t.id), s.effective_lang()) for s, role, t in keys],
                           for_suite(attacks, "partial", checks=CHECKS),
                           positions=cast(list[Position], list(positions)),
                           disguises=cast(list[Disguise], list(disguises)), field_for=fields.get)
    carried: dict[str, dict[str, list[Injection]]] = {}
    for s, role, task in keys:
        carried.setdefault(s.scenario_id, {})[file_key(role, task.id)] = plan[case_id(s.scenario_id, role, task.id)]
    out = [{**row, "injections": {key: [i.model_dump() for i in planted]
                                  for key, planted in carried.get(s.scenario_id, {}).items()}}
           for row, s in zip(rows, scenarios, strict=True) if s.scenario_id in carried]
    return out, len(keys), 0
