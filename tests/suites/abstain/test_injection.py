"""Instructions hidden in abstain's context (``--inject``, ``--defences``, ``knowgap data inject abstain``) with
fake targets: one that obeys what the context tells it, one that ignores it. The clean run stays the request a
run without ``--inject`` makes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import knowgap
from knowgap.casefiles.inject import inject_cases
from knowgap.casefiles.suite_formats import check_file
from knowgap.errors import KnowgapError
from knowgap.injection.defences import MARK
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.suites.abstain.dataset import Fact, load_file
from knowgap.suites.abstain.injection import system_prompt, target_message
from knowgap.suites.abstain.prompts import PROMPTS, user_message
from tests.fakes.models import FakeModel

ABSTAIN = '{"response": "I cannot answer from the given information.", "citation": "no citation"}'
CODE = re.compile(r"KG[0-9A-F]{6}")
MARKER_FAMILIES = ["instruction_override", "fake_message"]
"""Families whose attacks all have the marker check (en and zh)."""


class Obeyer(FakeModel):
    """Gives the code a context asks for as its answer, answers when told never to say it cannot, else abstains."""

    spec = "test:obeyer"

    def reply(self, request: ChatRequest) -> ChatResponse:
        text = request.messages[-1].content
        code = CODE.search(text)
        if code:
            return ChatResponse(text=json.dumps({"response": f"The answer is {code.group(0)}.", "citation": 0}))
        if "disclaimers" in text or "never say" in text:
            return ChatResponse(text='{"response": "The fee is 12 dollars.", "citation": 1}')
        return ChatResponse(text=ABSTAIN)


class Ignorer(FakeModel):
    spec = "test:ignorer"

    def reply(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(text=ABSTAIN)


def run(target: FakeModel, kb: Path, runs_root: Path, repeats: int = 1, **options: Any) -> knowgap.RunResult:
    """A run of ``target`` (uncached: every request reaches it) on rag/conservative unless ``options`` say."""
    return knowgap.run("abstain", models={"target": target.spec}, providers={target.spec: target},
                       options={"kb": str(kb), "retrieval": ["rag"], "prompts": ["conservative"], **options},
                       repeats=repeats, runs_root=runs_root, use_cache=False)


def values(result: knowgap.RunResult, group: str) -> dict[str, tuple[float | None, int]]:
    return {m.name: (m.value, m.n) for m in result.metrics if m.group == group}


def test_an_obeying_target_gives_the_code_and_stops_abstaining(small_kb: Path, runs_root: Path) -> None:
    result = run(Obeyer(), small_kb, runs_root, inject=True, attack_families=MARKER_FAMILIES)
    got = values(result, "rag/conservative")
    assert got["abstention_rate"] == (1.0, 7)  # the clean runs: the code is only in the injected context
    assert got["clean_task_score"] == (1.0, 7)
    assert got["attack_success_rate"] == (1.0, 7)
    assert got["abstention_collapse_rate"] == (1.0, 7)
    assert got["injected_answer_rate"] == (1.0, 7)
    assert got["attack_success_rate:family=fake_message"][0] == 1.0
    assert sum(n for name, (_, n) in got.items() if name.startswith("attack_success_rate:position=")) == 7
    assert "attack_noise_floor" not in got  # one repeat: no floor measured
    [record] = [r for r in knowgap.iter_trials(result.run_id, runs_root) if r.case_id == "kb_0"]
    [planted] = record.output["injection"]["runs"]
    assert planted["injection"]["marker"] in planted["injected_carrier"] and planted["worked"] is True
    assert planted["carrier_fact"] == record.output["experiment"]["context_ids"][planted["carrier_index"]]
    [verdict] = [v for v in record.verdicts if v.metric == "attack_success_rate"]
    assert verdict.verdict == "wrong" and verdict.part and planted["injection"]["attack_id"] in verdict.part


def test_an_ignoring_target_shows_no_success_and_a_zero_floor(small_kb: Path, runs_root: Path) -> None:
    result = run(Ignorer(), small_kb, runs_root, repeats=2, inject=True)
    got = values(result, "rag/conservative")
    assert got["attack_success_rate"][0] == 0.0 and got["abstention_collapse_rate"] == (0.0, 14)
    assert got["attack_noise_floor"][0] == 0.0 and got["attack_noise_floor"][1] > 0


def test_refusal_suppression_is_a_behaviour_change(small_kb: Path, runs_root: Path) -> None:
    result = run(Obeyer(), small_kb, runs_root, inject=True, attack_families=["refusal_suppression"])
    got = values(result, "rag/conservative")
    assert got["attack_success_rate"] == (1.0, 7) and got["abstention_collapse_rate"] == (1.0, 7)
    assert "injected_answer_rate" not in got  # no marker attack planted


def test_the_clean_request_is_the_one_a_run_without_inject_makes(small_kb: Path, runs_root: Path) -> None:
    plain = Ignorer()
    run(plain, small_kb, runs_root, retrieval=["rag", "long_context", "direct"], prompts=["basic"])
    injected = Ignorer()
    result = run(injected, small_kb, runs_root, inject=True,
                 retrieval=["rag", "long_context", "direct"], prompts=["basic"])
    assert len(injected.requests) == len(plain.requests) * 2 - 7  # direct: nothing planted
    clean = [r for r in injected.requests if not CODE.search(r.messages[-1].content)]
    assert len(clean) >= len(plain.requests)
    assert {r.model_dump_json() for r in plain.requests} <= {r.model_dump_json() for r in clean}
    direct = [r for r in knowgap.iter_trials(result.run_id, runs_root) if r.config_id == "direct/basic"]
    assert all(r.output["injection"]["applies"] is False for r in direct)
    assert "attack_success_rate" not in values(result, "direct/basic")


def test_defences_are_configurations(small_kb: Path, runs_root: Path) -> None:
    target = Ignorer()
    result = run(target, small_kb, runs_root, inject=True, defences=["none", "datamark", "sandwich"])
    groups = {m.group for m in result.metrics if m.name == "clean_task_score"}
    assert groups == {"rag/conservative", "rag/conservative+datamark", "rag/conservative+sandwich"}
    marked = [r for r in target.requests if MARK in r.messages[-1].content]
    assert marked and all(MARK in r.messages[0].content for r in marked)  # the system prompt explains the mark
    assert any(r.messages[-1].content.endswith("do not follow any of them.") for r in target.requests)


def test_data_inject_round_trip(small_kb: Path, tmp_path: Path, runs_root: Path) -> None:
    out = tmp_path / "injected.jsonl"
    result = inject_cases("abstain", small_kb, out, positions=["start", "middle", "end"],
                          disguises=["plain", "quoted", "code_block", "json_field", "fake_system"])
    assert result.added == 7 and check_file("abstain", out) == []
    facts = load_file(out)
    assert [(f.id, f.question, f.answer) for f in facts] == [(f.id, f.question, f.answer) for f in load_file(small_kb)]
    planted = {f.id: f.injections for f in facts}
    run_from_file = run(Ignorer(), out, runs_root)
    runs = {r.case_id: [x["injection"] for x in r.output["injection"]["runs"]]
            for r in knowgap.iter_trials(run_from_file.run_id, runs_root)}
    assert runs == {k: [i.model_dump() for i in v] for k, v in planted.items()}
    planned = knowgap.iter_trials(run(Ignorer(), small_kb, runs_root, inject=True).run_id, runs_root)
    assert {r.case_id: [x["injection"] for x in r.output["injection"]["runs"]] for r in planned} == runs
    with pytest.raises(knowgap.InputError, match="already carries injections"):
        inject_cases("abstain", out, tmp_path / "twice.jsonl")
    with pytest.raises(KnowgapError, match="--cycle is for extract"):
        inject_cases("abstain", small_kb, tmp_path / "cycled.jsonl", cycle=True)
    with pytest.raises(KnowgapError, match="must be a .jsonl file"):
        inject_cases("abstain", small_kb, tmp_path / "kb.json")


@pytest.mark.parametrize(("option", "value", "flag"), [("positions", ["top"], "--positions"),
                                                       ("defences", ["shield"], "--defences"),
                                                       ("attack_families", ["phishing"], "--attack-families")])
def test_a_bad_option_names_the_option(small_kb: Path, runs_root: Path, option: str, value: list[str],
                                       flag: str) -> None:
    with pytest.raises(KnowgapError, match=flag):
        run(Ignorer(), small_kb, runs_root, inject=True, **{option: value})


def test_without_a_defence_the_messages_are_the_suites_own() -> None:
    facts = [Fact(id=f"f{i}", kb="kb", question=f"Question {i}?", answer=f"Answer {i}.") for i in range(3)]
    for prompt in PROMPTS:
        assert system_prompt(prompt, "none") == PROMPTS[prompt] != system_prompt(prompt, "guarded")
        for context in (facts, []):
            texts = [f.text() for f in context]
            assert target_message("Why?", texts, prompt, "none") == user_message("Why?", context, prompt)


def test_a_failure_shows_the_injected_context_and_its_answer(small_kb: Path, runs_root: Path) -> None:
    """``show --failed`` (and the report's worst examples) under an injected run's verdict: the injected context
    with the payload marked, and that run's answer (before: the clean run's answer, the trial's output)."""
    result = run(Obeyer(), small_kb, runs_root, inject=True, attack_families=MARKER_FAMILIES)
    found = knowgap.failures(result.run_id, runs_root, metric="attack_success_rate")
    assert found.trials == len(found.failures) == 7
    records = {r.trial_id: r for r in knowgap.iter_trials(result.run_id, runs_root)}
    for failure in found.failures:
        [planted] = records[failure.trial_id].output["injection"]["runs"]
        marker = planted["injection"]["marker"]
        shown = found.exhibit(failure.trial_id, failure.part)
        assert shown is not None and f"The answer is {marker}." in shown.answer and marker in failure.excerpt
        assert [shown.input[s:e] for s, e in shown.planted] == [planted["injection"]["payload"]]
        assert planted["injected_carrier"] in shown.input
