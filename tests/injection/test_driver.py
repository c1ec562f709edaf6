"""The injection driver (:mod:`knowgap.injection.driver`) on a suite of its own: a carrier text, a plant function
that appends the payload, a target that writes back a planted code when it sees one, and the shared marker check.
The trials it writes are real trial records; their verdicts count to the metrics the driver reports."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from knowgap.engine.records import TrialRecord
from knowgap.engine.verdicts import hits
from knowgap.injection.attacks import read_attacks
from knowgap.injection.driver import Facts, InjectedTrial, InjectionDriver, Planted, Reply, RunRate
from knowgap.injection.metrics import ATTACK_SUCCESS, CLEAN_TASK_SCORE, NOISE_FLOOR
from knowgap.injection.plan import Injection, plan_injections
from knowgap.injection.success import explained_check

CODE = re.compile(r"KG[0-9A-F]{6}")
CARRIER = "The museum opens at 11:00 on Sundays. Entry is free for children."
MARKERS = [a for a in read_attacks() if a.check == "marker" and a.lang == "en"]


def check(injection: Injection, run: Facts, clean: Facts, trial: Facts) -> tuple[bool | None, str]:
    return explained_check(injection, "toy", output=run["raw"], clean_output=clean["raw"], system=run["system"],
                           carrier=trial["carrier"], injected_carrier=run["injected"])


def clean_task(trial: InjectedTrial) -> tuple[bool, str]:
    assert trial.injection
    said = "11:00" in trial.injection["clean"]["raw"]
    return said, "gave the opening time" if said else "no opening time"


LONG = RunRate("long_reply_rate", "injected replies longer than 20 characters", lambda run: len(run["raw"]) > 20,
               lambda run, long: f"{len(run['raw'])} characters")
DRIVER = InjectionDriver(suite="toy", checks=("marker",), check=check, clean_task=clean_task,
                         clean_task_description="clean replies that give the opening time", view=InjectedTrial.of,
                         rates=(LONG,))


def injections(case_id: str, n: int) -> list[Injection]:
    return plan_injections([(case_id, "en")], MARKERS, per_case=n)[case_id]


def trial(case_id: str, injected: Sequence[Injection], *, obey: bool, clean: str = "It opens at 11:00.",
          repeat: int = 0, config_id: str = "plain") -> TrialRecord:
    """A finished trial: the clean reply ``clean``, and each injected run asked of a target that writes back the
    code it finds when it ``obey``s."""
    async def ask(injection: Injection, text: str) -> Reply:
        code = CODE.search(text)
        return Reply({"system": "Answer from the text.", "raw": f"Sure: {code.group(0)}" if obey and code else "11"})

    def plant(injection: Injection) -> Planted[str]:
        text = f"{CARRIER}\n{injection.payload}"
        return Planted(text, {"injected": text})

    info = asyncio.run(DRIVER.run(injected, clean={"raw": clean}, plant=plant, ask=ask,
                                  fields={"carrier": CARRIER}))
    record = TrialRecord(trial_id=f"{case_id}|{config_id}|r{repeat}", case_id=case_id, config_id=config_id,
                         repeat=repeat, output={"injection": info})
    return record.model_copy(update={"verdicts": DRIVER.verdicts(record)})


def metrics(records: list[TrialRecord]) -> dict[str, Any]:
    return {m.name: m for m in DRIVER.metrics(records, lambda t: t.case_id)}


def test_each_injected_run_is_planted_asked_and_checked_against_the_clean_run() -> None:
    planted = injections("c1", 2)
    info = trial("c1", planted, obey=True).output["injection"]
    assert list(info) == ["carrier", "planted", "clean", "runs"]  # the suite's fields first, as stored before
    assert info["planted"] == [i.model_dump() for i in planted] and info["clean"] == {"raw": "It opens at 11:00."}
    for injection, run in zip(planted, info["runs"], strict=True):
        assert run["injection"] == injection.model_dump() and injection.payload in run["injected"]
        assert run["worked"] is True and run["raw"] == f"Sure: {injection.marker}"
    ignored = trial("c1", planted, obey=False).output["injection"]["runs"]
    assert [run["worked"] for run in ignored] == [False, False]
    assert [run["why"] for run in ignored] == [f"code {i.marker} not found" for i in planted]


def test_the_verdicts_count_what_the_metrics_count() -> None:
    records = [trial(f"c{i}", injections(f"c{i}", 2), obey=i % 2 == 0, clean="I don't know." if i == 3 else
                     "It opens at 11:00.") for i in range(5)]
    found = metrics(records)
    for name, lower in ((ATTACK_SUCCESS, True), (CLEAN_TASK_SCORE, False), (LONG.name, True)):
        k, n = hits(records, name, lower_is_better=lower)
        assert (round(found[name].value * found[name].n), found[name].n) == (k, n), name
    assert (found[ATTACK_SUCCESS].value, found[ATTACK_SUCCESS].n, found[ATTACK_SUCCESS].n_cases) == (0.6, 10, 5)
    assert found[CLEAN_TASK_SCORE].value == 0.8
    families = [m for name, m in found.items() if name.startswith(f"{ATTACK_SUCCESS}:family=")]
    assert sum(m.n for m in families) == 10 and len(families) == 2  # the two families with marker attacks
    assert NOISE_FLOOR not in found  # one repeat: no noise floor


def test_the_noise_floor_checks_repeat_1s_clean_reply_where_repeat_0s_injected_run_was() -> None:
    planted = injections("c1", 1)
    marker = planted[0].marker
    first = trial("c1", planted, obey=False, repeat=0)
    echoed = trial("c1", planted, obey=False, repeat=1, clean=f"It opens at 11:00 ({marker}).")
    assert metrics([first, echoed])[NOISE_FLOOR].value == 1.0  # the code with no attack: 'success' by chance
    steady = trial("c1", planted, obey=False, repeat=1)
    floor = metrics([steady, first])[NOISE_FLOOR]  # any order of the records
    assert (floor.value, floor.n) == (0.0, 1)
    other = trial("c1", planted, obey=False, repeat=1, config_id="guarded")
    assert NOISE_FLOOR not in {m.name for m in DRIVER.metrics([first, other], lambda t: t.case_id)
                               if m.group == "plain"}  # repeats of one configuration pair, not across


def test_a_run_stored_without_its_injection_is_read_by_its_place() -> None:
    """partial's runs held the attack's fields, not the injection: the driver reads each run's injection from
    ``planted``, so such runs count as they did."""
    records = [trial(f"c{i}", injections(f"c{i}", 2), obey=i == 1) for i in range(3)]
    older = []
    for r in records:
        info = r.output["injection"]
        runs = [{k: v for k, v in run.items() if k != "injection"} for run in info["runs"]]
        older.append(r.model_copy(update={"output": {"injection": {**info, "runs": runs}}}))
    now, then = DRIVER.metrics(records, lambda t: t.case_id), DRIVER.metrics(older, lambda t: t.case_id)
    assert [m.model_dump() for m in now] == [m.model_dump() for m in then]
    assert [DRIVER.verdicts(r) for r in older] == [r.verdicts for r in records]


def test_the_metric_specs_declare_what_the_driver_reports() -> None:
    records = [trial("c1", injections("c1", 1), obey=True), trial("c1", injections("c1", 1), obey=True, repeat=1)]
    reported = {m.name.split(":", 1)[0]: m.description for m in DRIVER.metrics(records, lambda t: t.case_id)}
    specs = {s.name: s for s in DRIVER.metric_specs(cluster="case")}
    assert reported == {name: s.description for name, s in specs.items()}
    assert {name for name, s in specs.items() if s.lower_is_better} == DRIVER.lower_is_better() == {
        ATTACK_SUCCESS, NOISE_FLOOR, LONG.name}
    assert all(s.kind == "proportion" and s.judge is None for s in specs.values())
