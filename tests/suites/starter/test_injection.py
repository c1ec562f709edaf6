"""Instructions hidden in starter's contexts (``--inject``, ``--defences``, ``knowgap data inject starter``)
with fake targets: one that obeys what the context tells it, one that ignores it. The clean run stays the
request a run without ``--inject`` makes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import knowgap
from knowgap.casefiles.inject import inject_cases
from knowgap.casefiles.suite_formats import check_file
from knowgap.errors import InputError
from knowgap.injection.defences import MARK
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.suites.starter import DATA
from knowgap.suites.starter.dataset import load_cases
from tests.fakes.models import FakeModel

CODE = re.compile(r"KG[0-9A-F]{6}")
MARKER_FAMILIES = ["instruction_override", "fake_message"]
"""Families whose attacks all have the marker check (en and zh)."""
SUPPRESS = ("never say", "disclaimers", "永远不要说", "免责声明")


class Obeyer(FakeModel):
    """Gives the code a context asks for, answers when told never to say it does not know, else abstains."""

    spec = "test:obeyer"

    def reply(self, request: ChatRequest) -> ChatResponse:
        text = request.messages[-1].content
        code = CODE.search(text)
        if code:
            return ChatResponse(text=f"The answer is {code.group(0)}.")
        if any(s in text for s in SUPPRESS):
            return ChatResponse(text="It opens at 11:00.")
        return ChatResponse(text="I don't know.")


class Ignorer(FakeModel):
    spec = "test:ignorer"

    def reply(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(text="I don't know.")


def run(target: FakeModel, runs_root: Path, repeats: int = 1, **options: Any) -> knowgap.RunResult:
    """A run of ``target`` (uncached: every request reaches it) on the grounded prompt unless ``options`` say."""
    return knowgap.run("starter", models={"target": target.spec}, providers={target.spec: target},
                       options={"prompts": ["grounded"], **options}, repeats=repeats, runs_root=runs_root,
                       use_cache=False)


def values(result: knowgap.RunResult, group: str) -> dict[str, tuple[float | None, int]]:
    return {m.name: (m.value, m.n) for m in result.metrics if m.group == group}


def test_an_obeying_target_gives_the_code(runs_root: Path) -> None:
    result = run(Obeyer(), runs_root, inject=True, attack_families=MARKER_FAMILIES)
    got = values(result, "prompt=grounded")
    assert got["abstention_unanswerable"] == (1.0, 8)  # the clean runs: the code is only in the injected context
    assert got["clean_task_score"] == (0.5, 16)  # the unanswerable half done, the answerable half declined
    assert got["attack_success_rate"] == (1.0, 16)
    assert got["attack_success_rate:family=fake_message"][0] == 1.0
    assert sum(n for name, (_, n) in got.items() if name.startswith("attack_success_rate:position=")) == 16
    assert "attack_noise_floor" not in got  # one repeat: no floor measured
    [record] = [r for r in knowgap.iter_trials(result.run_id, runs_root) if r.case_id == "en-library-sunday"]
    [planted] = record.output["injection"]["runs"]
    assert planted["injection"]["marker"] in planted["injected_context"] and planted["worked"] is True
    assert record.output["injection"]["clean"]["abstained"] is True
    [verdict] = [v for v in record.verdicts if v.metric == "attack_success_rate"]
    assert verdict.verdict == "wrong" and verdict.part and planted["injection"]["attack_id"] in verdict.part


def test_an_ignoring_target_shows_no_success_and_a_zero_floor(runs_root: Path) -> None:
    result = run(Ignorer(), runs_root, repeats=2, inject=True, attack_families=MARKER_FAMILIES)
    got = values(result, "prompt=grounded")
    assert got["attack_success_rate"] == (0.0, 32)
    assert got["attack_noise_floor"] == (0.0, 16)


def test_refusal_suppression_is_checked_on_unanswerable_cases_only(runs_root: Path) -> None:
    result = run(Obeyer(), runs_root, inject=True, attack_families=["refusal_suppression"])
    got = values(result, "prompt=grounded")
    assert got["attack_success_rate"] == (1.0, 8)  # answerable cases: nothing to stop abstaining on
    answerable = [r for r in knowgap.iter_trials(result.run_id, runs_root) if r.scores["answerable"]]
    assert all(run["worked"] is None and "context answers" in run["why"]
               for r in answerable for run in r.output["injection"]["runs"])


def test_the_clean_request_is_the_one_a_run_without_inject_makes(runs_root: Path) -> None:
    plain = Ignorer()
    run(plain, runs_root, prompts=["plain", "grounded"])
    injected = Ignorer()
    run(injected, runs_root, inject=True, prompts=["plain", "grounded"])
    assert len(injected.requests) == 2 * len(plain.requests) == 64
    sent = {r.model_dump_json() for r in injected.requests}
    assert {r.model_dump_json() for r in plain.requests} <= sent and len(sent) == 64  # the rest: injected contexts


def test_defences_are_configurations(runs_root: Path) -> None:
    target = Ignorer()
    result = run(target, runs_root, inject=True, defences=["none", "datamark", "guarded", "sandwich"], sample=4)
    groups = {m.group for m in result.metrics if m.name == "clean_task_score"}
    assert groups == {"prompt=grounded", "prompt=grounded+datamark", "prompt=grounded+guarded",
                      "prompt=grounded+sandwich"}
    marked = [r for r in target.requests if MARK in r.messages[-1].content]
    assert marked and all(MARK in r.messages[0].content for r in marked)  # the system prompt explains the mark
    assert any(r.messages[-1].content.endswith("do not follow any of them.") for r in target.requests)
    assert len({r.messages[0].content for r in target.requests}) == 3  # none = sandwich, datamark, guarded


def test_data_inject_round_trip(tmp_path: Path, runs_root: Path) -> None:
    out = tmp_path / "injected.jsonl"
    result = inject_cases("starter", DATA, out, disguises=["plain"])
    assert result.in_place and result.added == 16
    assert check_file("starter", out) == []
    cases = load_cases(out)
    assert all(len(c.injections) == 1 and c.injections[0].disguise == "plain" for c in cases)
    original = {c.id: c.model_dump() for c in load_cases(DATA)}
    assert {c.id: c.model_dump(exclude={"injections"}) | {"injections": []} for c in cases} == original
    target = Obeyer()
    got = run(target, runs_root, data=str(out))
    records = list(knowgap.iter_trials(got.run_id, runs_root))
    planted = {r.case_id: r.output["injection"]["planted"] for r in records}
    assert planted == {c.id: [i.model_dump() for i in c.injections] for c in cases}
    assert len(target.requests) == 32
    with pytest.raises(InputError, match="field 'injections'"):
        inject_cases("starter", out, tmp_path / "again.jsonl")


def test_a_bad_injection_in_a_case_file_is_one_line(tmp_path: Path) -> None:
    row = json.loads(DATA.read_text(encoding="utf-8").splitlines()[0]) | {"injections": [{"attack_id": 3}]}
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(row) + "\n", encoding="utf-8")
    problems = check_file("starter", bad)
    assert problems[0] == (f"{bad}, line 1, field 'injections.0.attack_id': Input should be a valid string "
                           "(got a number 3)")
