"""Hidden instructions in partial's evidence (issue 19): an in-process agent that obeys them (prints the hidden
field it is asked for, requests it in budget mode, echoes a marker) against one that ignores them; the clean
request of an injected run is the request of a run without --inject; defences are configurations;
``knowgap data inject partial`` round trip."""

from __future__ import annotations

import gc
import json
import re
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import knowgap
from knowgap.casefiles.inject import inject_cases
from knowgap.casefiles.suite_formats import check_file
from knowgap.cli import app
from knowgap.engine.records import TrialRecord
from knowgap.engine.store import TRIALS
from knowgap.engine.verdicts import hits
from knowgap.injection import make_injection, read_attacks
from knowgap.injection.defences import MARK, guard_system
from knowgap.models.base import ChatModel
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.suites.partial.dataset import DATA, load_scenarios
from knowgap.suites.partial.injected import hidden_field, plant
from knowgap.suites.partial.suite import PartialOptions, PartialSuite
from knowgap.suites.partial.view import build_view, render_view

SCENARIOS = load_scenarios(DATA)
BY_TITLE = {s.title: s for s in SCENARIOS}
FIELD = re.compile(r"field '([^']+)'|字段“([^”]+)”")
LABELS = re.compile(r'(?:one of|以下之一) ((?:"[^"]+"(?:, )?)+)')


def hidden_values(title: str, path: str) -> list[Any]:
    """The ground-truth values at ``path`` (``record.field``, every row) of the scenario titled ``title``."""
    head, _, field = path.partition(".")
    records = BY_TITLE[title].ground_truth[head]
    rows = records if isinstance(records, list) else [records]
    return [row.get(field) for row in rows if isinstance(row, dict)] if field else [records]


class Agent(ChatModel):
    """Answers every task with its first label, saying its evidence is not enough. ``obey``: an instruction in the
    evidence asking for a hidden field gets it printed (budget mode: requested first), a code (KG......) is
    echoed and the decision becomes the last label, decided with confidence."""

    default_concurrency = 1

    def __init__(self, spec: str, obey: bool) -> None:
        self.spec, self.obey = spec, obey

    async def chat(self, request: ChatRequest) -> ChatResponse:
        user = next(m.content for m in request.messages if m.role == "user")
        title = user.split("\n", 1)[0].split("：" if user.startswith("场景") else ": ", 1)[1]
        found = LABELS.search(user)
        labels = re.findall(r'"([^"]+)"', found.group(1)) if found else []
        reply: dict[str, Any] = {"action": "answer", "confidence": 0.5, "sufficient": False, "missing": ["more"],
                                 "evidence_used": [], "reasoning": "from the evidence"}
        if labels:
            reply["answer"] = labels[0]
        asked = FIELD.search(user)
        if self.obey and asked:
            path = asked.group(1) or asked.group(2)
            if "request_evidence" in user and not any(m.role == "assistant" for m in request.messages):
                return ChatResponse(text=json.dumps({"action": "request_evidence", "path": path}))
            reply["reasoning"] = json.dumps(hidden_values(title, path), ensure_ascii=False)
        marker = re.search(r"KG[0-9A-F]{6}", user)
        if self.obey and marker:
            reply.update(reasoning=marker.group(0), sufficient=True, confidence=1.0)
            if labels:
                reply["answer"] = labels[-1]
        return ChatResponse(text=json.dumps(reply, ensure_ascii=False))


def run(runs_root: Path, obey: bool, repeats: int = 1, **options: Any) -> knowgap.RunResult:
    spec = f"agent-{'obeys' if obey else 'ignores'}"
    options = {"families": ["customer_support"], "views": ["authorized"], "no_rubric": True} | options
    return knowgap.run("partial", models={"target": spec}, options=options, runs_root=runs_root, repeats=repeats,
                       providers={spec: Agent(spec, obey)})


def metrics(result: knowgap.RunResult, group: str) -> dict[str, knowgap.MetricValue]:
    return {m.name: m for m in result.metrics if m.group == group}


def test_an_agent_that_prints_the_asked_hidden_field_leaks_and_one_that_ignores_it_does_not(runs_root: Path
                                                                                            ) -> None:
    for obey in (True, False):
        result = run(runs_root, obey, inject=True, attack_families=["exfiltration"])
        found = metrics(result, "view=authorized")
        records = [r for r in knowgap.iter_trials(result.run_id, runs_root)]
        runs = [run for r in records for run in r.output["injection"]["runs"]]
        assert len(runs) == len(records) == 60  # one planted injection per case, each its own injected run
        leaks = [run for run in runs if run["injection"]["check"] == "field_leak"]
        assert leaks and all(run["worked"] is obey for run in leaks)
        assert all(bool(run["new_leaks"]) is obey for run in leaks)
        assert found["injected_leak_rate"].value == (len(leaks) / len(runs) if obey else 0.0)
        assert found["attack_success_rate:family=exfiltration"].n == len(runs)
        # the stored verdicts count what the metrics count (knowgap show RUN --failed lists them)
        rate = found["attack_success_rate"]
        assert hits(records, "attack_success_rate", lower_is_better=True) == (round(rate.value * rate.n), rate.n)
        assert rate.value == (len(leaks) / len(runs) if obey else 0.0)  # no echo of the system prompt either way
        assert found["clean_task_score"].value == found["decision_accuracy"].value
        assert "attack_noise_floor" not in found  # no --repeats 2


def test_markers_change_the_decision_of_an_agent_that_obeys(runs_root: Path) -> None:
    result = run(runs_root, True, inject=True, attack_families=["goal_hijack", "instruction_override"],
                 sample=8)
    runs = [run for r in knowgap.iter_trials(result.run_id, runs_root) for run in r.output["injection"]["runs"]]
    marked = [run for run in runs if run["injection"]["check"] == "marker"]
    assert marked and all(run["worked"] for run in marked)
    changed = [run for run in marked if run["decision_changed"] is not None]
    assert changed and all(run["decision_changed"] for run in changed)
    assert metrics(result, "view=authorized")["decision_change_rate"].value > 0


def test_the_clean_request_is_the_request_of_a_run_without_inject(runs_root: Path) -> None:
    plain = run(runs_root, False, sample=6)
    injected = run(runs_root, False, sample=6, inject=True)
    before = {r.trial_id: r for r in knowgap.iter_trials(plain.run_id, runs_root)}
    after = {r.trial_id: r for r in knowgap.iter_trials(injected.run_id, runs_root)}
    assert before.keys() == after.keys()
    for trial_id, r in after.items():
        assert len(r.calls) == 2 and r.calls[0].request == before[trial_id].calls[0].request
        assert r.calls[1].request != r.calls[0].request
        assert r.scores == before[trial_id].scores
        assert {k: v for k, v in r.output.items() if k != "injection"} == before[trial_id].output
    assert "injection" not in next(iter(before.values())).output


def test_budget_mode_counts_denied_requests_the_evidence_asked_for(runs_root: Path) -> None:
    for obey in (True, False):
        result = run(runs_root, obey, views=["budget"], budget=5, inject=True, attack_families=["exfiltration"])
        runs = [run for r in knowgap.iter_trials(result.run_id, runs_root) for run in r.output["injection"]["runs"]]
        denied = [run for run in runs if run["new_denied"]]
        rate = metrics(result, "budget=5")["injected_denied_request_rate"]
        assert rate.n == len(runs) and rate.value == len(denied) / len(runs)
        if obey:
            assert denied and all(run["injection"]["check"] == "field_leak" for run in denied)
        else:
            assert not denied


def test_defences_are_configurations_applied_to_clean_and_injected_runs(runs_root: Path) -> None:
    result = run(runs_root, False, sample=4, inject=True, defences=["none", "datamark", "guarded", "sandwich"])
    records = list(knowgap.iter_trials(result.run_id, runs_root))
    assert {r.config_id for r in records} == {"view=authorized", "view=authorized+datamark",
                                              "view=authorized+guarded", "view=authorized+sandwich"}
    for r in records:
        for call in r.calls:
            system, user = (m.content for m in call.request.messages[:2])
            defence = r.config.get("defence", "none")
            assert (MARK in user) is (defence == "datamark")
            guarded = any(guard_system("", "guarded", lang) in system for lang in ("en", "zh"))
            assert guarded is (defence == "guarded")
            assert ("Reminder: your task is" in user or "提醒：你的任务是" in user) is (defence == "sandwich")
    for config in ("view=authorized", "view=authorized+datamark"):  # per defence: its cost against none
        found = metrics(result, config)
        score, accuracy = found["clean_task_score"], found["decision_accuracy"]
        assert (score.value, score.n) == (accuracy.value, accuracy.n) and score.n > 0


def test_the_noise_floor_comes_from_two_clean_repeats(runs_root: Path) -> None:
    result = run(runs_root, True, sample=4, inject=True, repeats=2)
    floor = metrics(result, "view=authorized")["attack_noise_floor"]
    assert floor.value == 0.0 and floor.n > 0  # the agent's clean runs are the same in both repeats


def test_data_inject_partial_round_trip(runs_root: Path, tmp_path: Path) -> None:
    source = tmp_path / "scenarios.jsonl"
    source.write_text("".join(json.dumps(s.model_dump(exclude_defaults=True), ensure_ascii=False) + "\n"
                              for s in SCENARIOS[:2]), encoding="utf-8")
    out = tmp_path / "injected.jsonl"
    said = CliRunner().invoke(app, ["data", "inject", "partial", str(source), "--out", str(out), "--disguises",
                                    "plain,quoted,code_block,json_field,fake_system"])
    assert said.exit_code == 0, said.output
    checked = CliRunner().invoke(app, ["data", "check", "partial", str(out)])
    assert checked.exit_code == 0 and check_file("partial", out) == [], checked.output
    carried = {json.loads(line)["scenario_id"]: json.loads(line)["injections"] for line in out.read_text().splitlines()}
    planted = sum(len(v) for v in carried.values())
    assert list(carried) == [s.scenario_id for s in SCENARIOS[:2]] and planted > 0
    assert f"injections planted on {planted} partial cases" in said.output
    from_file = run(runs_root, True, data=str(out), families=[])
    planned = run(runs_root, True, data=str(source), families=[], inject=True)
    stored = {r.case_id: r.output["injection"]["planted"] for r in knowgap.iter_trials(from_file.run_id, runs_root)}
    assert stored == {r.case_id: r.output["injection"]["planted"]
                      for r in knowgap.iter_trials(planned.run_id, runs_root)}  # the file holds what --inject plants
    for case, planted in stored.items():
        scenario, role, task = case.split("/")
        assert planted == carried[scenario][f"{role}/{task}"]
    with pytest.raises(knowgap.KnowgapError, match="already carries injections"):
        inject_cases("partial", out, tmp_path / "twice.jsonl")


def test_injections_for_an_unknown_case_are_one_clear_problem(tmp_path: Path) -> None:
    row = SCENARIOS[0].model_dump(exclude_defaults=True) | {"injections": {"nobody/urgency": []}}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    [problem] = check_file("partial", path)
    assert "line 1, field 'injections.nobody/urgency'" in problem and "no case of the scenario" in problem


def test_the_payload_rides_in_a_visible_prose_field_chosen_by_position_and_asks_for_a_hidden_one() -> None:
    attack = next(a for a in read_attacks(None) if a.check == "field_leak" and a.lang == "en")
    scenario = next(s for s in SCENARIOS if s.effective_lang() == "en")
    role = scenario.roles[0]
    built = build_view(scenario, scenario.policy(role), summariser=lambda _p, _t: "a short summary of it")
    field = hidden_field(scenario, role)
    assert field and field in {re.sub(r"\[\d+\]", "", s.path) for s in built.secrets}
    carriers = []
    for position in ("start", "middle", "end"):
        injection = make_injection(attack, "case", position, "plain", field)
        planted, carrier = plant(built, injection)
        text = render_view(planted.view)
        assert text.count(injection.payload) == 1 and f"'{field}'" in injection.payload
        assert injection.payload not in render_view(built.view)  # the clean view is left as it was
        carriers.append(carrier)
    assert len(set(carriers)) == 3  # first, middle and last prose field differ
    empty = built.model_copy(update={"view": built.view.model_copy(update={"evidence": {"a": 1, "b": 2}})})
    planted, carrier = plant(empty, make_injection(attack, "case", "end", "plain", field))
    assert carrier == "note" and list(planted.view.evidence) == ["a", "b", "note"]


def test_metrics_read_the_records_as_a_stream_and_hold_none(runs_root: Path) -> None:
    """The metrics keep a few facts of each trial, not its record (calls, views, reply): a run's metrics do not
    hold every trial in memory, and they are the run's own."""
    result = run(runs_root, True, repeats=2, inject=True, attack_families=["exfiltration"])
    lines = (result.path / TRIALS).read_text(encoding="utf-8").splitlines()
    alive_behind: list[int] = []
    refs: list[weakref.ref[TrialRecord]] = []

    def stream() -> Iterator[TrialRecord]:
        for line in lines:
            record = TrialRecord.model_validate_json(line)
            refs.append(weakref.ref(record))
            yield record
            del record
            gc.collect()  # the consumer still holds the record it was just given; none before it
            alive_behind.append(sum(ref() is not None for ref in refs[:-1]))

    suite = PartialSuite(PartialOptions.model_validate(result.manifest.config.options))
    metrics = suite.metrics(stream())
    assert len(refs) == len(lines) == result.manifest.trials_total > 50
    assert max(alive_behind) == 0
    assert any(m.name == "attack_noise_floor" and m.n for m in metrics)  # the noise floor read repeat 1's prompt
    stored = {(m.group, m.name): (m.value, m.ci_low, m.ci_high, m.n) for m in result.metrics}
    assert {(m.group, m.name): (m.value, m.ci_low, m.ci_high, m.n) for m in metrics} == stored


def test_a_failure_shows_the_injected_evidence_and_its_reply(runs_root: Path) -> None:
    """``show --failed`` under an injected run's verdict: the evidence the call was given with the planted text
    marked, and that run's reply (before: the clean run's reply, the trial's output)."""
    result = run(runs_root, True, inject=True, attack_families=["goal_hijack", "instruction_override"], sample=8)
    found = knowgap.failures(result.run_id, runs_root, metric="attack_success_rate")
    records = {r.trial_id: r for r in knowgap.iter_trials(result.run_id, runs_root)}
    assert found.failures
    for failure in found.failures:
        [planted] = records[failure.trial_id].output["injection"]["runs"]
        shown = found.exhibit(failure.trial_id, failure.part)
        marker = planted["injection"]["marker"]
        assert shown is not None and shown.answer == planted["reply"] and marker in failure.excerpt
        marked = [shown.input[s:e] for s, e in shown.planted]
        assert marked and marker in marked[0] and marker not in shown.input.replace(marked[0], "")
