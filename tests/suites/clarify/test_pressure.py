"""clarify's pressure test (``--pressure``; a case file's ``pressure`` field from ``knowgap data inject clarify``):
the clean request stays as it was, the pressured run is read by the clean run's detector, and the pressure_*
metrics and verdicts follow from a fake lawyer that gives in to pressure in Chinese but not in English."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import knowgap
from knowgap.casefiles.inject import inject_cases
from knowgap.casefiles.suite_formats import check_file
from knowgap.cli import app
from knowgap.errors import KnowgapError
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.report.failures import excerpt
from knowgap.suites.clarify.dataset import ClarifyCase, load_cases
from knowgap.suites.clarify.pressure import PHRASES, pressure_for, pressured_query
from knowgap.suites.clarify.verdicts import LOWER_IS_BETTER
from tests.verdict_counts import assert_verdicts_count_as_metrics

from .test_suite_engine import ASK, FakeLawyer, metric

QUIET = {"no_rubric": True, "no_silent_failure": True, "no_correctness": True, "prompts": ["plain"]}
PRESSURE = {"pressure_clarification_rate", "pressure_drop_rate", "pressure_unqualified_answer_rate",
            "pressure_false_flag_rate"}


class GivesInInChinese(FakeLawyer):
    """As FakeLawyer on clean queries; under pressure, answers a Chinese deficient query flatly (its conclusion),
    keeps asking on an English one, and asks on a complete one. Keeps every request."""

    spec = "fake:pressured-lawyer"

    def __init__(self, cases: list[ClarifyCase]) -> None:
        super().__init__(cases)
        self.requests: list[ChatRequest] = []

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        query = request.messages[-1].content
        if query in self.by_query:
            return await super().chat(request)
        case = next(c for q, c in self.by_query.items() if q in query)
        reply = case.conclusion if case.deficient and case.lang == "zh" else ASK[case.lang]
        return ChatResponse(text=reply, model=self.spec)


def _run(data: Path, runs_root: Path, **options: object) -> tuple[knowgap.RunResult, GivesInInChinese]:
    fake = GivesInInChinese(load_cases(data))
    result = knowgap.run("clarify", models={"target": fake.spec}, providers={fake.spec: fake}, runs_root=runs_root,
                         options={"data": str(data), **QUIET, **options})
    return result, fake


def test_pressure_is_fixed_by_the_case_and_its_language() -> None:
    ids = [f"case-{i}" for i in range(40)]
    chosen = [pressure_for(i, "zh") for i in ids]
    assert chosen == [pressure_for(i, "zh") for i in ids]
    assert {p.position for p in chosen} == {"start", "end"}
    assert {p.phrase_id for p in chosen} == set(PHRASES["zh"])
    assert all(p.text == PHRASES["zh"][p.phrase_id] for p in chosen)
    assert pressure_for("case-1", "en").phrase_id in PHRASES["en"]
    assert {pressure_for(i, "en", ["end", "middle"]).position for i in ids} == {"end"}
    with pytest.raises(KnowgapError, match="start or the end"):
        pressure_for("case-1", "en", ["middle"])
    end = pressure_for("case-1", "en", ["end"])
    assert pressured_query("Can I?", end, "en") == f"Can I? {end.text}"
    start = pressure_for("case-1", "zh", ["start"])
    assert pressured_query("可以吗？", start, "zh") == f"{start.text}可以吗？"


def test_pressure_adds_a_run_and_leaves_the_clean_request_alone(data: Path, runs_root: Path) -> None:
    plain, before = _run(data, runs_root)
    pressed, after = _run(data, runs_root, pressure=True)
    assert not PRESSURE & {m.name for m in plain.metrics}
    # the clean requests are byte for byte the earlier run's: the response cache answers them, and the model
    # is only asked the pressured queries
    assert len(before.requests) == len(after.requests) == 3
    assert all(any(p in r.messages[-1].content for ps in PHRASES.values() for p in ps.values())
               for r in after.requests)
    def settings(requests: list[ChatRequest]) -> list[str]:  # all but the user's message: system, seed, ...
        return sorted(r.model_copy(update={"messages": r.messages[:1]}).model_dump_json() for r in requests)

    assert settings(after.requests) == settings(before.requests)
    group = "prompt=plain"
    assert metric(pressed, group, "clarification_rate").value == metric(plain, group, "clarification_rate").value == 1
    asked = metric(pressed, group, "pressure_clarification_rate")
    assert (asked.value, asked.n) == (0.5, 2)  # the English deficient case still asks
    dropped = metric(pressed, group, "pressure_drop_rate")
    assert (dropped.value, dropped.n) == (0.5, 2)  # the Chinese one asked clean, not under pressure
    assert metric(pressed, group, "pressure_false_flag_rate").value == 1.0
    assert metric(pressed, f"{group} · zh", "pressure_drop_rate").value == 1.0
    records = list(knowgap.iter_trials(pressed.run_id, runs_root))
    zh = next(r for r in records if r.case_id == "zh-labour-001")
    assert zh.output["pressure"]["asked"] is False and zh.output["pressure"]["response"]
    assert zh.output["pressure"]["query"] == pressured_query(
        next(c for c in load_cases(data) if c.id == "zh-labour-001").query, pressure_for("zh-labour-001", "zh"), "zh")
    kinds = assert_verdicts_count_as_metrics(pressed, runs_root, LOWER_IS_BETTER, PRESSURE)
    assert kinds["right"] and kinds["wrong"]
    for r in records:  # the part names the pressured answer (the one `show --failed` shows: Suite.verdict_call)
        answer = " ".join(r.output["pressure"]["response"].split())
        start = answer if len(answer) <= 60 else answer[:59] + "…"
        assert all(v.part == f"pressured run: {start!r}" for v in r.verdicts if v.metric.startswith("pressure_"))
    whys = {v.why for r in records for v in r.verdicts if v.metric == "pressure_drop_rate"}
    assert "asked when clean, stopped asking under pressure" in whys


def test_data_inject_clarify_writes_cases_that_carry_the_pressure(data: Path, tmp_path: Path,
                                                                  runs_root: Path) -> None:
    out = tmp_path / "pressed.jsonl"
    result = CliRunner().invoke(app, ["data", "inject", "clarify", str(data), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "3 cases now carry the pressure" in result.output
    assert check_file("clarify", out) == []
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [c.id for c in load_cases(data)]
    assert all(r["pressure"] == pressure_for(r["id"], r["lang"]).model_dump() for r in rows)
    pressed, _ = _run(out, runs_root)  # no --pressure: the file's field is enough
    assert metric(pressed, "prompt=plain", "pressure_drop_rate").n == 2
    again = inject_cases("clarify", data, tmp_path / "ends.jsonl", positions=["end"])
    ends = [json.loads(line) for line in again.out.read_text(encoding="utf-8").splitlines()]
    assert {r["pressure"]["position"] for r in ends} == {"end"} and again.added == 3


def test_a_pressure_verdict_shows_the_pressured_query_and_answer(data: Path, runs_root: Path) -> None:
    """``show --failed`` and the worst examples show what a pressure verdict is about: the pressured query, the phrase
    marked, and the pressured answer (before: the clean answer)."""
    pressed, _ = _run(data, runs_root, pressure=True)
    found = knowgap.failures(pressed.run_id, runs_root, metric="pressure_drop_rate")
    [failure] = found.failures  # the Chinese deficient case gave in
    record = next(r for r in knowgap.iter_trials(pressed.run_id, runs_root) if r.trial_id == failure.trial_id)
    pressure = record.output["pressure"]
    shown = found.exhibit(failure.trial_id, failure.part)
    assert shown is not None and shown.input == pressure["query"] and shown.answer == pressure["response"]
    [(start, end)] = shown.planted
    assert shown.input[start:end] == pressure["text"]
    assert failure.excerpt == excerpt(pressure["response"])
    assert record.output["response"] != pressure["response"]  # the clean answer asked
