"""The injection driver for a suite that runs each request several times in a trial (extract's design): the clean
request's re-runs give the noise floor, counted once for trials that share their clean runs; each injection is
asked ``times`` times; a rate broken down by the trial's fields; a suite that scores its clean task itself."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence

from knowgap.engine.records import TrialRecord
from knowgap.engine.verdicts import hits
from knowgap.injection.attacks import read_attacks
from knowgap.injection.driver import Facts, InjectedTrial, InjectionDriver, Planted, Reply, RunRate
from knowgap.injection.metrics import ATTACK_SUCCESS, CLEAN_TASK_SCORE, NOISE_FLOOR
from knowgap.injection.plan import Injection, plan_injections
from knowgap.injection.success import explained_check

CODE = re.compile(r"KG[0-9A-F]{6}")
CARRIER = "The museum opens at 11:00 on Sundays."
MARKERS = [a for a in read_attacks() if a.check == "marker" and a.lang == "en"]


def check(injection: Injection, run: Facts, clean: Facts, trial: Facts) -> tuple[bool | None, str]:
    return explained_check(injection, "toy", output=run["raw"], clean_output=clean["raw"], system="",
                           carrier=CARRIER, injected_carrier=run.get("injected", CARRIER))


LONG = RunRate("long_reply_rate", "injected replies longer than 20 characters", lambda run: len(run["raw"]) > 20,
               lambda run, long: f"{len(run['raw'])} characters", by=("topic",))
DRIVER = InjectionDriver(suite="toy", checks=("marker",), check=check, view=InjectedTrial.of, rates=(LONG,),
                         noise="reruns", shared_clean=lambda trial: (trial.injection or {}).get("topic"),
                         described={ATTACK_SUCCESS: "replies that wrote back the planted code"})


def trial(case_id: str, topic: str, *, obey: Sequence[bool], reruns: Sequence[str], repeat: int = 0) -> TrialRecord:
    """One injection asked ``len(obey)`` times (the target writes the code back where ``obey`` says), the clean
    reply and its ``reruns``."""
    [injection] = plan_injections([(case_id, "en")], MARKERS)[case_id]
    answers = iter(obey)

    async def ask(injection: Injection, text: str) -> Reply:
        code = CODE.search(text)
        return Reply({"raw": f"Sure, as you asked: {code.group(0)}" if next(answers) and code else "11"})

    def plant(injection: Injection) -> Planted[str]:
        return Planted(f"{CARRIER}\n{injection.payload}", {"injected": f"{CARRIER}\n{injection.payload}"})

    info = asyncio.run(DRIVER.run([injection], clean={"raw": "11"}, plant=plant, ask=ask, fields={"topic": topic},
                                  reruns=[{"raw": r} for r in reruns], times=len(obey)))
    record = TrialRecord(trial_id=f"{case_id}|plain|r{repeat}", case_id=case_id, config_id="plain", repeat=repeat,
                         output={"injection": info})
    return record.model_copy(update={"verdicts": DRIVER.verdicts(record)})


def test_each_injection_is_asked_times_times_and_the_reruns_are_kept() -> None:
    info = trial("c1", "hours", obey=[True, False, True], reruns=["11", "eleven"]).output["injection"]
    assert len(info["planted"]) == 1 and [run["worked"] for run in info["runs"]] == [True, False, True]
    assert info["reruns"] == [{"raw": "11"}, {"raw": "eleven"}]


def test_the_noise_floor_checks_the_clean_reruns_once_per_shared_clean_run() -> None:
    [injection] = plan_injections([("c1", "en")], MARKERS)["c1"]
    chance = f"11 ({injection.marker})"  # the code in a clean re-run: 'success' with no attack
    first = trial("c1", "hours", obey=[False], reruns=[chance, "11"])
    # another case on the same clean runs (its re-runs are not counted again), and one on its own
    again = trial("c2", "hours", obey=[False], reruns=["11", "11"])
    alone = trial("c3", "prices", obey=[False], reruns=["11"])
    found = {m.name: m for m in DRIVER.metrics([first, again, alone], lambda t: t.case_id)}
    assert (found[NOISE_FLOOR].value, found[NOISE_FLOOR].n) == (1 / 3, 3)
    later = trial("c2", "hours", obey=[False], reruns=["11"], repeat=1)  # another repeat's clean runs count
    floor = next(m for m in DRIVER.metrics([first, later], lambda t: t.case_id) if m.name == NOISE_FLOOR)
    assert floor.n == 3


def test_a_rate_is_broken_down_by_trial_fields_and_the_verdicts_count_to_the_metrics() -> None:
    records = [trial("c1", "hours", obey=[True, False], reruns=[]),
               trial("c2", "prices", obey=[False, False], reruns=[])]
    found = {m.name: m for m in DRIVER.metrics(records, lambda t: t.case_id)}
    assert (found["long_reply_rate:topic=hours"].value, found["long_reply_rate:topic=hours"].n) == (0.5, 2)
    assert found["long_reply_rate:topic=prices"].value == 0.0
    for name in (ATTACK_SUCCESS, LONG.name):
        k, n = hits(records, name, lower_is_better=True)
        assert (round((found[name].value or 0) * found[name].n), found[name].n) == (k, n) == (1, 4), name
    assert found[ATTACK_SUCCESS].description == "replies that wrote back the planted code"


def test_a_suite_that_scores_its_clean_task_itself_gets_no_clean_task_score() -> None:
    records = [trial("c1", "hours", obey=[True], reruns=["11"])]
    assert CLEAN_TASK_SCORE not in {m.name for m in DRIVER.metrics(records, lambda t: t.case_id)}
    assert CLEAN_TASK_SCORE not in {v.metric for v in records[0].verdicts}
    assert CLEAN_TASK_SCORE not in {s.name for s in DRIVER.metric_specs()}
    assert DRIVER.metric_names() == {ATTACK_SUCCESS, NOISE_FLOOR, LONG.name}
