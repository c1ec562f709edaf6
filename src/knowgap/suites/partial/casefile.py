"""The partial suite's data part (``knowgap data schema / check / import / inject partial``): one
:class:`~.dataset.Scenario` a line (``scenario_id`` its id), checked with the suite's own rules.

``data inject partial``: each (role, task) case of each chosen scenario gets one injection, planned exactly as
``knowgap run partial --inject`` plans it (:func:`knowgap.injection.plan_injections` over the file's cases in the
suite's stable order, positions and disguises taken in turn, the exfiltration attacks asking for the case's
:func:`~.injected.hidden_field`), and stored in its scenario's ``injections`` field under ``ROLE/TASK_ID``. The
scenarios are written in place of the input's (no new scenario is made); ``knowgap run partial --data OUT`` runs
each case clean and with its injection. ``--sample`` takes the (role, task) cases round-robin over scenarios.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from pathlib import Path
from typing import Any, cast

from knowgap.engine.case_injection import CaseInjection, CaseRecord, Placement, Planned
from knowgap.engine.suite_data import SuiteData
from knowgap.injection import Attack, Injection, plan_injections
from knowgap.injection.placement import Disguise, Position
from knowgap.jsonl import read_lines
from knowgap.suites.partial.dataset import Scenario, check_scenarios
from knowgap.suites.partial.injected import CHECKS, case_id, case_keys, file_key, hidden_field


class ScenarioInjections(CaseInjection):
    """partial's injection hook: the chosen scenarios' cases carry their injections (see the module)."""

    unit = "scenario"
    checks = CHECKS
    placeholders = ("marker", "field")

    def plan(self, carriers: Sequence[CaseRecord], attacks: Sequence[Any], placement: Placement) -> Planned:
        scenarios = [cast(Scenario, r.case) for r in carriers]
        return Planned([(s.scenario_id, case_id(s.scenario_id, role, task.id))
                        for s, role, task in case_keys(scenarios)])

    def plant(self, carriers: Sequence[CaseRecord], attacks: Sequence[Any], placement: Placement,
              keep: Set[str]) -> list[tuple[str, dict[str, Any]]]:
        scenarios = [cast(Scenario, r.case) for r in carriers]
        keys = [(s, role, t) for s, role, t in case_keys(scenarios) if case_id(s.scenario_id, role, t.id) in keep]
        fields = {case_id(s.scenario_id, role, t.id): hidden_field(s, role) for s, role, t in keys}
        plan = plan_injections([(case_id(s.scenario_id, role, t.id), s.effective_lang()) for s, role, t in keys],
                               cast(Sequence[Attack], attacks),
                               positions=cast(Sequence[Position], placement.positions),
                               disguises=cast(Sequence[Disguise], placement.disguises), field_for=fields.get)
        carried: dict[str, dict[str, list[Injection]]] = {}
        for s, role, task in keys:
            planted = plan[case_id(s.scenario_id, role, task.id)]
            carried.setdefault(s.scenario_id, {})[file_key(role, task.id)] = planted
        return [(r.id, {**r.row, "injections": {key: [i.model_dump() for i in planted]
                                                for key, planted in carried[r.id].items()}})
                for r in carriers if r.id in carried]


def role_task_ids(folder: Path) -> list[str]:
    """The units of the shipped scenarios (their dataset card's re-read samples them): ``scenario/role/task``, one
    role's view of one task (the roles of each task's oracle)."""
    return [case_id(str(scenario["scenario_id"]), role, str(task["id"]))
            for _, scenario in read_lines(folder / "scenarios.jsonl") for task in scenario["tasks"]
            for role in task["oracle"]]


CASE_FILE = SuiteData(Scenario, id_field="scenario_id", checker=check_scenarios, injection=ScenarioInjections(),
                      units=role_task_ids)
