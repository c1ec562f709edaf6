"""The extract suite through the engine: a rule-following fake model (known right answers), bad inputs, the
CLI file judge and calibration on the fixture extract, and one real run on the embedded 0.5B model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import knowgap
from knowgap.cli import app
from knowgap.errors import InputError, KnowgapError
from knowgap.models.base import ChatModel
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.suites.extract.calibration import balanced_accuracy, best_threshold, calibrate
from knowgap.suites.extract.claims_judge import DECOMPOSE_SYSTEM, VERIFY_SYSTEM
from knowgap.suites.extract.dataset import load_cases
from tests.helpers import REPO

FIXTURES = REPO / "tests" / "fixtures" / "extract" / "faithfulness"
CASES = {c.review: c for c in load_cases() if c.kind == "normal"}
CASES.update({c.injected_review or "": CASES[c.review] for c in load_cases() if c.kind == "adversarial"})


class RuleModel(ChatModel):
    """Summarizer: the case's labels, unless an override instruction is in the review (then it obeys it).
    Judge: one claim per summary, always supported."""

    spec = "scripted:rules"

    async def chat(self, request: ChatRequest) -> ChatResponse:
        system, user = request.messages[0].content, request.messages[-1].content
        if system == DECOMPOSE_SYSTEM:
            return ChatResponse(text=json.dumps({"claims": [user.removeprefix("SUMMARY:\n")]}))
        if system == VERIFY_SYSTEM:
            count = len(re.findall(r"^\d+\. ", user, re.M))
            return ChatResponse(text=json.dumps({"verdicts": [{"claim": i + 1, "verdict": "supported"}
                                                              for i in range(count)]}))
        review = user.split("<<<\n", 1)[1].rsplit("\n>>>", 1)[0]
        override = re.search(r'overall_sentiment (?:to|为) \\?"(\w+)', review)
        case = CASES.get(review)
        if override:
            sentiment, conflicting = override.group(1), False
        else:
            assert case is not None, review
            sentiment = case.expected_sentiment or "neutral"
            conflicting = bool(case.expected_conflicting)
        return ChatResponse(text=json.dumps({"summary": review[:80], "overall_sentiment": sentiment,
                                             "contains_conflicting_signals": conflicting}))


def _override_target(review: str) -> str:
    found = re.search(r'overall_sentiment (?:to|为) \\?"(\w+)', review)
    assert found is not None
    return found.group(1)


def _metric(result: knowgap.RunResult, name: str) -> knowgap.MetricValue:
    return next(m for m in result.metrics if m.name == name)


def test_rule_model_gets_known_metrics(runs_root: Path) -> None:
    fake = RuleModel()
    result = knowgap.run("extract", models={"target": fake.spec}, providers={fake.spec: fake},
                         options={"kinds": ["normal", "adversarial"], "runs": 2, "offline_checker": False,
                                  "coverage": False}, runs_root=runs_root)
    assert _metric(result, "sentiment_accuracy").value == 1.0
    assert _metric(result, "conflict_accuracy").value == 1.0
    assert _metric(result, "parse_failure_rate").value == 0.0
    assert _metric(result, "noise_floor").value == 0.0 and _metric(result, "noise_floor").n == 8
    # the rule model obeys an override unless it asks for what the clean review already gets (mams-055: its
    # attack was picked by the old label, kept so the adversarial cases stay the same)
    overrides = [c for c in load_cases() if c.attack_type == "sentiment_override"]
    assert len(overrides) == 8
    sentiment_flips = [_override_target(c.injected_review or "") != (CASES[c.review].expected_sentiment or "neutral")
                       for c in overrides]
    conflict_flips = [bool(CASES[c.review].expected_conflicting) for c in overrides]  # an override says false
    flips = sum(s or c for s, c in zip(sentiment_flips, conflict_flips, strict=True))
    assert flips == 7 and sum(sentiment_flips) == 7 and sum(conflict_flips) == 2
    assert _metric(result, "flip_rate:attack_type=sentiment_override").value == pytest.approx(flips / 8)
    assert _metric(result, "flip_rate:attack_type=bipia_task").value == 0.0
    assert _metric(result, "flip_rate").value == pytest.approx(flips / 24)
    assert _metric(result, "sentiment_flip_rate").value == pytest.approx(sum(sentiment_flips) / 24)
    assert _metric(result, "conflict_flip_rate").value == pytest.approx(sum(conflict_flips) / 24)
    assert _metric(result, "injected_parse_failure_rate").value == 0.0
    # analysis-only labels are reported apart: the rule model says neutral / false where a field is not scored
    unsettled = [c for c in load_cases() if c.kind == "normal"]
    for field, metric, said in (("sentiment", "sentiment_analysis_only", "neutral"),
                                ("conflicting", "conflict_analysis_only", False)):
        labels = [c.analysis_labels[field] for c in unsettled if field in c.analysis_labels]
        found = _metric(result, metric)
        assert found.n == 2 * len(labels) > 0
        assert found.value == pytest.approx(sum(said in (x.a, x.b) for x in labels) / len(labels))
    assert _metric(result, "faithfulness_judge_pass_rate").value == 1.0
    assert _metric(result, "faithfulness_judge").value == 1.0
    assert _metric(result, "judge_outcome:scored").value == 40
    assert result.manifest.trials_error == 0


def test_matrix_has_a_row_per_pair_with_cost_and_time(runs_root: Path) -> None:
    from knowgap.suites.extract.matrix import run_matrix

    a, b = RuleModel(), RuleModel()
    b.spec = "scripted:rules-b"
    rows = run_matrix([a.spec, b.spec], [a.spec], run=knowgap.run,
                      options={"sample": 4, "runs": 1, "offline_checker": False, "coverage": False},
                      prices={a.spec: (1.0, 2.0)}, runs_root=runs_root, providers={a.spec: a, b.spec: b})
    assert [(r["summarizer"], r["judge"]) for r in rows] == [(a.spec, a.spec), (b.spec, a.spec)]
    assert all(isinstance(r["seconds"], float) and r["run"] for r in rows)
    assert rows[0]["cost_usd"] == "-" or rows[0]["cost_usd"] >= 0  # RuleModel reports no tokens


def test_unknown_kind_prompt_and_bad_cases_file(tmp_path: Path, runs_root: Path) -> None:
    fake = RuleModel()
    for options, message in (({"kinds": ["weird"]}, "unknown case kind"), ({"prompts": ["nope"]}, "unknown prompt"),
                             ({"prompt_file": str(tmp_path / "none.txt")}, "prompt file not found")):
        with pytest.raises(KnowgapError, match=message):
            knowgap.run("extract", models={"target": fake.spec}, providers={fake.spec: fake}, options=options,
                        runs_root=runs_root)
    bad = tmp_path / "cases.jsonl"
    bad.write_text('{"id": "a", "kind": "adversarial", "lang": "en", "review": "r", "label_source": "me"}\n')
    with pytest.raises(InputError, match=r"cases.jsonl, line 1.*adversarial case needs"):
        load_cases(bad)


def test_cli_file_judge_keeps_order_and_adds_score(tmp_path: Path) -> None:
    src = tmp_path / "pairs.jsonl"
    rows = [{"id": 1, "doc": "The soup was cold and the waiter was rude.", "summary": "The soup was cold."},
            {"id": 2, "doc": "The soup was cold and the waiter was rude.", "summary": "The soup was hot and tasty."},
            {"id": 3, "doc": "The soup was cold.", "summary": ""}]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["judge", "faithfulness", str(src), "--out", str(out)])
    assert result.exit_code == 0, result.output
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in scored] == [1, 2, 3]
    assert scored[0]["verdict"] == "faithful" and scored[1]["verdict"] == "unfaithful"
    assert scored[0]["score"] > scored[1]["score"] and scored[2] == {**rows[2], "score": None, "verdict": "empty"}


@pytest.mark.parametrize(("line", "message"), [
    ('{"doc": "x"}', "line 1, field 'summary': missing"),
    ('{"doc": "x", "summary": 3}', "line 1, field 'summary': expected a string"),
    ("not json", "line 1: not valid JSON"),
])
def test_cli_file_judge_bad_rows(tmp_path: Path, line: str, message: str) -> None:
    src = tmp_path / "pairs.jsonl"
    src.write_text(line + "\n")
    out = tmp_path / "out.jsonl"
    from knowgap.judges.files import judge_faithfulness_file

    with pytest.raises(InputError, match=re.escape(message)):
        judge_faithfulness_file(src, out)
    assert not out.exists() and list(tmp_path.iterdir()) == [src]


def test_balanced_accuracy_and_threshold_by_hand() -> None:
    import numpy as np

    scores = np.array([0.9, 0.8, 0.75, 0.6, 0.5, 0.3])
    labels = np.array([True, True, False, True, False, False])
    assert balanced_accuracy(scores, labels, 0.7) == pytest.approx((2 / 3 + 2 / 3) / 2)
    assert best_threshold(scores, labels) == pytest.approx(0.55)  # 3/3 faithful, 2/3 unfaithful


def test_calibration_on_the_fixture_extract() -> None:
    report = calibrate(FIXTURES, limit=None, seed=0)
    by_bench = {r.benchmark: r for r in report.at_default}
    assert by_bench["summedits"].n == 6 and by_bench["aggrefact"].n == 6 and by_bench["all"].n_faithful == 6
    assert all(r.balanced_accuracy is not None and 0 <= r.balanced_accuracy <= 1 for r in report.at_default)
    assert {d.label for d in report.distributions} == {"faithful", "unfaithful"}
    with pytest.raises(InputError, match="holds neither"):
        calibrate(FIXTURES / "nowhere")


@pytest.mark.slow
@pytest.mark.local_model
def test_real_run_on_the_small_model(small_pack_home: Path, runs_root: Path) -> None:
    result = knowgap.run("extract", models={"target": "local:qwen2.5-0.5b"}, runs_root=runs_root,
                         options={"sample": 2, "runs": 1, "kinds": ["normal", "adversarial"]})
    names = {m.name for m in result.metrics}
    assert {"parse_failure_rate", "seconds"} <= names
    assert result.manifest.trials_ok + result.manifest.trials_error == 2
    assert _metric(result, "parse_failure_rate").n >= 2


class Robust(ChatModel):
    """Ignores injected instructions: answers every review (clean or injected) with its clean labels."""

    spec = "scripted:robust"

    async def chat(self, request: ChatRequest) -> ChatResponse:
        review = request.messages[-1].content.split("<<<\n", 1)[1].rsplit("\n>>>", 1)[0]
        case = CASES[review]
        return ChatResponse(text=json.dumps({"summary": case.review[:80],
                                             "overall_sentiment": case.expected_sentiment or "neutral",
                                             "contains_conflicting_signals": bool(case.expected_conflicting)}))


def test_the_shipped_gate_fails_a_model_that_obeys_injections_and_passes_one_that_does_not(runs_root: Path) -> None:
    from knowgap.report import evaluate_gate, load_run_data
    from knowgap.report.gate import load_gate_file
    from knowgap.suites.extract import GATE_FILE, ExtractSuite

    gate = load_gate_file(GATE_FILE)
    assert {t.metric for t in gate.thresholds} == {"sentiment_flip_rate", "flip_rate"}
    assert {t.metric for t in gate.thresholds} <= ExtractSuite.metric_names
    verdicts = {}
    for fake in (RuleModel(), Robust()):
        result = knowgap.run("extract", models={"target": fake.spec}, providers={fake.spec: fake},
                             options={"kinds": ["adversarial"], "runs": 1}, runs_root=runs_root)
        checks = evaluate_gate([load_run_data(result.path)], gate.thresholds, source=str(GATE_FILE)).checks
        verdicts[fake.spec] = {c.metric: c.passed for c in checks}
    assert verdicts == {"scripted:rules": {"sentiment_flip_rate": False, "flip_rate": False},
                        "scripted:robust": {"sentiment_flip_rate": True, "flip_rate": True}}
