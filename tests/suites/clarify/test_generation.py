"""clarify's generation settings: the seed's defaults (temperature 0.3, 1500 tokens), both as options, and answers
cut at max_tokens flagged per trial, counted in ``truncation_rate`` and marked in ``knowgap show``."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import knowgap
from knowgap.cli import app
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.report.data import CUT_NOTE, truncated_answers
from knowgap.suites.clarify.dataset import load_cases
from knowgap.suites.clarify.scoring import screen
from tests.suites.clarify.test_suite_engine import FakeLawyer


class CuttingLawyer(FakeLawyer):
    """The fake lawyer, recording each target request; it reports the Chinese answers as cut at max_tokens."""

    spec = "fake:cutting-lawyer"

    def __init__(self, data: Path) -> None:
        super().__init__(load_cases(data))
        self.requests: list[ChatRequest] = []

    async def chat(self, request: ChatRequest) -> ChatResponse:
        response = await super().chat(request)
        users = [m.content for m in request.messages if m.role == "user"]
        case = self.by_query.get(users[0]) if users else None
        if case is None or request.messages[0].role != "system" or "扮演" in request.messages[0].content:
            return response  # a judge or the simulated user
        self.requests.append(request)
        return response.model_copy(update={"finish_reason": "length" if case.lang == "zh" else "stop"})


def _run(data: Path, runs_root: Path, **options: object) -> tuple[knowgap.RunResult, CuttingLawyer]:
    fake = CuttingLawyer(data)
    result = knowgap.run("clarify", models={"target": fake.spec}, providers={fake.spec: fake},
                         options={"data": str(data), "prompts": ["plain"], "no_rubric": True, **options},
                         runs_root=runs_root)
    return result, fake


def test_the_seeds_generation_settings_are_the_defaults(data: Path, runs_root: Path) -> None:
    _, fake = _run(data, runs_root)
    assert {(r.temperature, r.max_tokens) for r in fake.requests} == {(0.3, 1500)}


def test_temperature_and_max_tokens_are_options(data: Path, runs_root: Path) -> None:
    result, fake = _run(data, runs_root, temperature=0.0, max_tokens=64)
    assert {(r.temperature, r.max_tokens) for r in fake.requests} == {(0.0, 64)}
    [record, *_] = knowgap.iter_trials(result.run_id, runs_root)
    assert (record.config["max_tokens"], record.config["temperature"]) == (64, 0.0)


def test_cut_answers_are_flagged_and_counted(data: Path, runs_root: Path) -> None:
    result, _ = _run(data, runs_root)
    records = {r.case_id: r for r in knowgap.iter_trials(result.run_id, runs_root)}
    # IDS: two Chinese cases (cut), one English (not cut)
    assert {c: r.scores["truncated"] for c, r in records.items()} == {
        "zh-labour-001": True, "zh-labour-101": True, "en-labour-001": False}
    assert records["zh-labour-001"].output["truncated_turns"] == [1]
    assert "truncated_turns" not in records["en-labour-001"].output
    assert truncated_answers(records["zh-labour-001"]) == 1 and truncated_answers(records["en-labour-001"]) == 0
    assert any("cut at max_tokens" in r for r in records["zh-labour-001"].output["screen_reasons"])
    [rate] = [m for m in result.metrics if m.name == "truncation_rate" and m.group == "prompt=plain"]
    assert (rate.value, rate.n) == (pytest.approx(2 / 3), 3)
    [zh] = [m for m in result.metrics if m.name == "truncation_rate" and m.group == "prompt=plain · zh"]
    assert (zh.value, zh.n) == (1.0, 2)


def test_a_cut_turn_of_a_conversation_is_recorded_by_its_number(data: Path, runs_root: Path) -> None:
    result, _ = _run(data, runs_root, turns=1)
    records = {r.case_id: r for r in knowgap.iter_trials(result.run_id, runs_root)}
    assert records["zh-labour-001"].output["truncated_turns"] == [1, 2]  # asked, then the final answer
    assert records["zh-labour-101"].output["truncated_turns"] == [1]  # a complete control: answered at once


def test_a_cut_answer_alone_makes_the_screen_uncertain() -> None:
    verdict, reasons = screen({"kind": "complete", "false_flag": False, "truncated": True})
    assert verdict == "uncertain" and reasons == [
        "answer cut at max_tokens: a closing question or condition may be missing"]
    assert screen({"kind": "complete", "false_flag": False, "truncated": False}) == ("pass", [])


def test_show_marks_the_cut_trials(data: Path, runs_root: Path) -> None:
    result, _ = _run(data, runs_root)
    shown = CliRunner().invoke(app, ["show", result.run_id, "--runs-dir", str(runs_root), "--trials", "3"],
                               env={"COLUMNS": "250"})
    assert shown.exit_code == 0, shown.output
    lines = [line for line in shown.output.splitlines() if line.startswith("- ")]
    assert len(lines) == 3
    assert {("zh-" in line, CUT_NOTE in line) for line in lines} == {(True, True), (False, False)}


SEED_SYSTEM_PROMPT = ("你是一个严谨的中国法律AI助手。当用户的法律问题信息不足时，"
                      "你必须首先识别缺失的关键信息，并提出具体、相关的澄清问题。"
                      "在必要时，可以给出基于不同假设的有条件分析，"
                      "但必须明确指出分析的局限性，并避免做出没有事实依据的确定性结论。")
"""The system prompt of seed 000's ``get_llm_response``, copied from the seed text."""


def test_the_seeds_cautious_prompt_is_among_the_defaults(data: Path, runs_root: Path) -> None:
    from knowgap.suites.clarify.prompts import SYSTEM_PROMPTS

    assert SYSTEM_PROMPTS["cautious"]["zh"] == SEED_SYSTEM_PROMPT
    fake = CuttingLawyer(data)
    result = knowgap.run("clarify", models={"target": fake.spec}, providers={fake.spec: fake},
                         options={"data": str(data), "no_rubric": True}, runs_root=runs_root)
    assert {r.config_id for r in knowgap.iter_trials(result.run_id, runs_root)} == {
        "prompt=plain", "prompt=cautious", "prompt=clarify-first"}
    systems = {r.messages[0].content for r in fake.requests}
    assert SEED_SYSTEM_PROMPT in systems and SYSTEM_PROMPTS["cautious"]["en"] in systems
