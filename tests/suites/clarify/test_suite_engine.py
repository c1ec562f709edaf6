"""The clarify suite end to end on the engine with a deterministic fake model (target, judge and simulated
user in one), so every metric's value is known in advance; plus the review queue, its command and bad input."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import knowgap
from knowgap.errors import KnowgapError
from knowgap.models.base import ChatModel
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.suites.clarify.dataset import ClarifyCase, load_cases
from knowgap.suites.clarify.judging import RUBRIC_WEIGHTS
from knowgap.suites.clarify.prompts import RUBRIC_VERSION
from knowgap.suites.clarify.review import QUEUE_FILE, write_queue
from tests.helpers import knowgap_cli, scripted

ASK = {"zh": "请问：1. 您是否签订了书面劳动合同，是否还在试用期？2. 单位辞退您给出了什么理由？3. 您的月工资是多少？",
       "en": ("What reason did your employer give for dismissing you? How long have you worked there and what was "
              "your average monthly wage? Were you on probation, and did you get 30 days' notice?")}
RUBRIC = {"A.": "4", "B.": "4", "C.": "3", "D.": "5"}
"""The fake judge's digit for each rubric dimension (asked one per request)."""


class FakeLawyer(ChatModel):
    """Asks on deficient questions, answers complete ones and follow-ups with the reference conclusion."""

    spec = "fake:lawyer"
    default_concurrency = 2

    def __init__(self, cases: list[ClarifyCase], judge_reply: str | dict[str, str] = RUBRIC,
                 dodge_reply: str = '{"outcome": "addresses"}') -> None:
        self.by_query = {c.query: c for c in cases}
        self.judge_reply = judge_reply
        self.dodge_reply = dodge_reply

    async def chat(self, request: ChatRequest) -> ChatResponse:
        text = request.messages[-1].content
        system = request.messages[0].content if request.messages[0].role == "system" else ""
        if "RATER GUIDELINE" in text and isinstance(self.judge_reply, dict):
            reply = next(digit for dim, digit in self.judge_reply.items() if f"from 1 to 5:\n{dim}" in text)
        elif "RATER GUIDELINE" in text:
            reply = self.judge_reply
        elif "is a silent failure" in text:
            reply = self.dodge_reply
        elif "REFERENCE CONCLUSION" in text:
            reply = '{"verdict": "correct", "reason": "same outcome"}'
        elif "扮演" in system or "You are playing" in system:
            reply = "我签了两年合同，还在试用期。" if "扮演" in system else "I was not on probation."
        else:
            users = [m.content for m in request.messages if m.role == "user"]
            case = self.by_query[users[0]]
            reply = case.conclusion if len(users) > 1 or not case.deficient else ASK[case.lang]
        return ChatResponse(text=reply, model=self.spec)


def metric(result: knowgap.RunResult, group: str, name: str) -> knowgap.MetricValue:
    [m] = [m for m in result.metrics if m.group == group and m.name == name]
    return m


def run(data: Path, runs_root: Path, judge_reply: str | dict[str, str] = RUBRIC, *,
        dodge_reply: str = '{"outcome": "addresses"}', use_cache: bool = True, **options: object
        ) -> knowgap.RunResult:
    fake = FakeLawyer(load_cases(data), judge_reply, dodge_reply)
    return knowgap.run("clarify", models={"target": fake.spec}, providers={fake.spec: fake},
                       options={"data": str(data), **options}, runs_root=runs_root, use_cache=use_cache)


def test_single_turn_metrics_per_prompt(data: Path, runs_root: Path) -> None:
    result = run(data, runs_root, prompts=["plain", "cautious"])
    assert result.manifest.trials_ok == 6 and result.manifest.trials_error == 0
    for group in ("prompt=plain", "prompt=cautious"):
        rate = metric(result, group, "clarification_rate")
        assert (rate.value, rate.n) == (1.0, 2) and rate.ci_low == pytest.approx(0.3424, abs=1e-3)
        assert metric(result, group, "unqualified_answer_rate").value == 0.0
        flag = metric(result, group, "false_flag_rate")
        assert (flag.value, flag.n) == (0.0, 1)
        assert metric(result, group, "element_recall").value == 1.0
        assert metric(result, group, "rubric_total").value == pytest.approx(3.9)
        assert metric(result, group, "rubric_fallbacks").value == 4  # no token probabilities: sampled digits
        assert metric(result, group, "rubric_parse_failure_rate").value == 0.0
        assert metric(result, group, "control_correctness").value == 1.0
        assert metric(result, group, "control_correctness_approx").value == 1.0
        assert metric(result, group, "dangerous_assertion_rate").value == 0.0
        dodged = metric(result, group, "silent_failure_rate")
        assert (dodged.value, dodged.n) == (0.0, 3)
        assert metric(result, f"{group} · zh", "clarification_rate").n == 1
    # the review queue is written into the run folder
    path, items = write_queue(result.run_id, runs_root)
    assert path == result.path / QUEUE_FILE and path.exists()
    assert len(path.read_text(encoding="utf-8").splitlines()) == len(items)
    assert metric(result, "prompt=plain", "review_queue").value == sum(i.config_id == "prompt=plain" for i in items)


def test_multi_turn_final_correctness(data: Path, runs_root: Path) -> None:
    result = run(data, runs_root, prompts=["clarify-first"], turns=2)
    group = "prompt=clarify-first"
    final = metric(result, group, "final_correctness")
    assert (final.value, final.n) == (1.0, 3)
    assert metric(result, group, "final_correctness_approx").value == 1.0
    assert metric(result, group, "resolved_rate").value == 1.0
    assert metric(result, group, "turns_used").value == pytest.approx(2 / 3)  # 1 + 1 + 0 (the control)
    records = {r.case_id: r for r in knowgap.iter_trials(result.run_id, runs_root)}
    convo = records["zh-labour-001"].output["conversation"]
    assert [m["role"] for m in convo] == ["user", "assistant", "user", "assistant"]
    assert convo[2]["content"].startswith("我签了两年合同")
    assert {c.role for c in records["zh-labour-001"].calls} == {"target", "judge", "generator"}


def test_unparseable_judge_is_counted_not_defaulted(data: Path, runs_root: Path) -> None:
    result = run(data, runs_root, judge_reply="I would give it four out of five.", prompts=["plain"])
    failures = metric(result, "prompt=plain", "rubric_parse_failure_rate")
    assert (failures.value, failures.n) == (1.0, 2)
    assert not [m for m in result.metrics if m.name == "rubric_total" and m.value is not None]
    _, items = write_queue(result.run_id, runs_root)
    assert any("rubric judge reply could not be parsed" in r for i in items for r in i.reasons)


def test_rubric_subscores_from_token_probabilities(data: Path, runs_root: Path, tmp_path: Path) -> None:
    """A scripted judge that gives token probabilities: each dimension is the probability-weighted mean of its
    distribution, stored with the distribution and the sampled digit; the total is their weighted sum."""
    dists = {"gap_identification": [0.0, 0.1, 0.2, 0.3, 0.4], "question_quality": [0.5, 0.5, 0.0, 0.0, 0.0],
             "conditional_caution": [0.0, 0.0, 1.0, 0.0, 0.0], "risk_control": [0.25, 0.0, 0.25, 0.0, 0.5]}
    rows = []
    for dist in dists.values():  # the four dimensions are asked in this order
        top = [{"token": str(v), "logprob": math.log(p)} for v, p in enumerate(dist, start=1) if p]
        top.sort(key=lambda t: -t["logprob"])
        rows.append({"response": top[0]["token"], "logprobs": [{**top[0], "top": top}]})
    judge = scripted(tmp_path, *rows, name="judge.jsonl")
    one = tmp_path / "one.jsonl"
    one.write_text(data.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    fake = FakeLawyer(load_cases(one))
    result = knowgap.run("clarify", models={"target": fake.spec, "judge": judge}, providers={fake.spec: fake},
                         options={"data": str(one), "prompts": ["plain"], "no_correctness": True,
                                  "no_silent_failure": True},
                         runs_root=runs_root)
    [record] = knowgap.iter_trials(result.run_id, runs_root)
    expected = {dim: sum(v * p for v, p in enumerate(dist, start=1)) for dim, dist in dists.items()}
    for dim, dist in dists.items():
        assert record.scores[f"rubric_{dim}"] == pytest.approx(expected[dim])
        assert [record.scores[f"rubric_{dim}_p{v}"] for v in range(1, 6)] == pytest.approx(dist)
    assert record.scores["rubric_gap_identification_sampled"] == 5
    assert record.scores["rubric_total"] == pytest.approx(sum(expected[d] * w for d, w in RUBRIC_WEIGHTS.items()))
    assert record.scores["rubric_fallbacks"] == 0 and record.scores["rubric_parse_failure"] is False
    assert (result.manifest.judges or {})["clarify-rubric"] == RUBRIC_VERSION == record.output["rubric_version"]


def test_silent_failure_judge_verdicts_and_parse_failures(data: Path, runs_root: Path) -> None:
    """The seed's silent failure is the judge's verdict, per response; a reply naming no single outcome is a parse
    failure, counted apart and never taken for either verdict; --no-silent-failure asks the judge nothing."""
    dodged = run(data, runs_root, dodge_reply='{"outcome": "dodges"}', prompts=["plain"], no_rubric=True)
    rate = metric(dodged, "prompt=plain", "silent_failure_rate")
    assert (rate.value, rate.n) == (1.0, 3) and metric(dodged, "prompt=plain · en", "silent_failure_rate").n == 1
    assert metric(dodged, "prompt=plain", "silent_failure_parse_failure_rate").value == 0.0
    record = next(r for r in knowgap.iter_trials(dodged.run_id, dodged.path.parent) if r.case_id == "zh-labour-001")
    assert record.scores["silent_failure"] is True and record.output["silent_failure_version"] == "silent_failure_v1"
    assert any("dodges the core question" in reason for reason in record.output["screen_reasons"])
    assert (dodged.manifest.judges or {})["clarify-silent-failure"] == "silent_failure_v1"
    unsure = run(data, runs_root, dodge_reply="It dodges, or maybe it addresses it.", prompts=["plain"],
                 no_rubric=True, use_cache=False)  # the same requests: the first run's replies are cached
    failures = metric(unsure, "prompt=plain", "silent_failure_parse_failure_rate")
    assert (failures.value, failures.n) == (1.0, 3)
    assert [m.n for m in unsure.metrics if m.name == "silent_failure_rate" and m.group == "prompt=plain"] in ([], [0])
    off = run(data, runs_root, prompts=["plain"], no_rubric=True, no_silent_failure=True)
    assert not [m for m in off.metrics if m.name.startswith("silent_failure")]
    assert all("is a silent failure" not in c.request.messages[-1].content
               for r in knowgap.iter_trials(off.run_id, off.path.parent) for c in r.calls)


def test_an_older_run_with_silent_answer_scores_still_reads(data: Path, runs_root: Path) -> None:
    """Runs recorded before the rename store ``silent_answer``: their metrics, screen and report still work."""
    from knowgap.report.markdown import render_markdown
    from knowgap.suites.clarify.metrics import clarify_metrics
    from knowgap.suites.clarify.scoring import screen

    result = run(data, runs_root, prompts=["plain"], no_rubric=True, no_silent_failure=True)
    records = list(knowgap.iter_trials(result.run_id, runs_root))
    old = [r.model_copy(update={"scores": {("silent_answer" if k == "unqualified_answer" else k): v
                                           for k, v in r.scores.items()}}) for r in records]
    assert any("silent_answer" in r.scores for r in old) and not any("unqualified_answer" in r.scores for r in old)
    key = {(m.group, m.name): (m.value, m.n) for m in clarify_metrics(records)}
    assert {(m.group, m.name): (m.value, m.n) for m in clarify_metrics(old)} == key
    assert key[("prompt=plain", "unqualified_answer_rate")] == (0.0, 2)
    verdict, reasons = screen({"kind": "deficient", "silent_answer": True})
    assert verdict == "fail" and any("unqualified answer" in r for r in reasons)
    # an old run's metrics.json and manifest name the old metric: the report still renders it
    old_metrics = [m.model_copy(update={"name": "silent_answer_rate"}) if m.name == "unqualified_answer_rate" else m
                   for m in result.metrics]
    judges = {("silent_answer_rate" if k == "unqualified_answer_rate" else k): v
              for k, v in (result.manifest.metric_judges or {}).items()}
    text = render_markdown(result.manifest.model_copy(update={"metric_judges": judges}), old_metrics)
    assert "silent_answer_rate" in text


def test_reports_show_the_coverage_precision_beside_element_recall(data: Path, runs_root: Path) -> None:
    """Element recall is an upper bound: report.md and the HTML report show the element-coverage judge's held-out
    precision (from its card, with n and CI) beside each configuration's element recall."""
    from knowgap.judges.cards import Estimate, find_card, fmt
    from knowgap.suites.clarify.coverage import VERSION
    from knowgap.suites.clarify.recall_bound import coverage_precision

    card = find_card("element-coverage", VERSION)
    found = coverage_precision(card)
    assert card is not None and card.confusion is not None and found is not None
    estimate, n = found  # the card's held-out precision is its confusion's tp / (tp + fp)
    assert n == card.confusion.tp + card.confusion.fp and estimate.value == pytest.approx(card.confusion.tp / n)
    result = run(data, runs_root, prompts=["plain"], no_rubric=True, no_silent_failure=True)
    recall = metric(result, "prompt=plain", "element_recall")
    report = (result.path / "report.md").read_text(encoding="utf-8")
    section = report.split("### Element recall is an upper bound", 1)[1]
    assert f"{card.confusion.tp} of the {n} pairs it called covered truly match" in section
    row = f"| prompt=plain | {fmt(Estimate(value=recall.value, ci_low=recall.ci_low, ci_high=recall.ci_high), 3)} "
    assert row + f"| {recall.n} | {fmt(estimate)} |" in section
    html = (result.path / "report.html").read_text(encoding="utf-8")
    assert "Element recall is an upper bound" in html and fmt(estimate) in html


def test_unqualified_answer_rate_stands_beside_its_own_card_in_the_reports(data: Path, runs_root: Path) -> None:
    """unqualified_answer_rate rests on the clarification detector's flag of a qualified answer, not on its finding a
    question (issue 37): a run names the qualified-answer judge for it, and report.md's metrics table and the
    scorecard show that card's figure and status beside it, not the clarification card's."""
    from knowgap.judges.cards import find_card, fmt
    from knowgap.report.data import RunData
    from knowgap.report.markdown import metrics_table_rows
    from knowgap.report.scorecard import scorecard

    result = run(data, runs_root, prompts=["plain"], no_rubric=True, no_silent_failure=True)
    judges = result.manifest.metric_judges or {}
    assert judges["unqualified_answer_rate"].judge == judges["pressure_unqualified_answer_rate"].judge == (
        "qualified-answer")
    own = find_card("qualified-answer", judges["unqualified_answer_rate"].version)
    asking = find_card("clarification", judges["clarification_rate"].version)
    assert own is not None and asking is not None and own.balanced_accuracy != asking.balanced_accuracy
    shown = f"qualified-answer {own.version} · BA {fmt(own.balanced_accuracy)}"
    cells = {(r[0], r[1]): r[-1] for r in metrics_table_rows(result.metrics, result.manifest, reasons=False)}
    assert cells[("prompt=plain", "unqualified_answer_rate")] == f"SCREEN: {shown}"
    assert cells[("prompt=plain", "clarification_rate")].startswith("SCREEN: clarification ")
    report = (result.path / "report.md").read_text(encoding="utf-8")
    assert "| prompt=plain | unqualified_answer_rate | 0.0% |" in report and f"SCREEN: {shown} (" in report
    card = scorecard([RunData(path=result.path, manifest=result.manifest, metrics=result.metrics, records=[])])
    [row] = [r for r in card.cards[0].rows if r.metric == "unqualified_answer_rate"]
    assert (row.judge, row.judge_status) == (shown, "screen") and "< 0.80" in row.judge_reason


def test_a_reply_in_another_language_is_counted_not_scored(data: Path, runs_root: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The model asks the Chinese case's questions in English: the trial keeps its clarification scores, its
    coverage is left out of element_recall (which the English case alone makes) and counted, and it is queued."""
    monkeypatch.setitem(ASK, "zh", "Did you sign a written labour contract, and are you still on probation? What "
                                   "reason did the company give for dismissing you? What is your monthly salary?")
    result = run(data, runs_root, prompts=["plain"], no_rubric=True, no_silent_failure=True)
    assert metric(result, "prompt=plain", "coverage_other_language").value == 1
    recall = metric(result, "prompt=plain", "element_recall")
    assert (recall.value, recall.n) == (1.0, 1)
    assert metric(result, "prompt=plain", "clarification_rate").n == 2
    [zh] = [r for r in knowgap.iter_trials(result.run_id, runs_root) if r.case_id == "zh-labour-001"]
    assert zh.scores["coverage_other_language"] is True and zh.scores["element_recall"] is None
    assert zh.scores["asked_question"] is True and zh.scores["screen"] == "uncertain"


def test_bad_options(data: Path, runs_root: Path) -> None:
    with pytest.raises(KnowgapError, match="unknown prompt"):
        run(data, runs_root, prompts=["nope"])
    with pytest.raises(KnowgapError, match="turns"):
        run(data, runs_root, turns=-1)


@pytest.mark.slow
def test_review_and_check_commands(data: Path, runs_root: Path, tmp_path: Path) -> None:
    result = run(data, runs_root, prompts=["plain"])
    done = knowgap_cli("clarify", "review", result.run_id, "--runs-dir", str(runs_root), "--all")
    assert done.returncode == 0, done.stderr
    assert "review queue: 3 responses" in done.stdout and (result.path / QUEUE_FILE).exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(data.read_text(encoding="utf-8").splitlines()[0] + "\n{\"id\": \"x\"}\n", encoding="utf-8")
    done = knowgap_cli("clarify", "check", str(bad))
    assert done.returncode == 1 and "line 2" in done.stderr and "field" in done.stderr
    done = knowgap_cli("clarify", "check")
    assert done.returncode == 0 and "85 cases" in done.stdout


class AssumingLawyer(FakeLawyer):
    """Answers every question at once with the reference conclusion: asks nothing, states no condition."""

    async def chat(self, request: ChatRequest) -> ChatResponse:
        text = request.messages[-1].content
        if "RATER GUIDELINE" in text or "is a silent failure" in text or "REFERENCE CONCLUSION" in text:
            return await super().chat(request)
        users = [m.content for m in request.messages if m.role == "user"]
        return ChatResponse(text=self.by_query[users[0]].conclusion, model=self.spec)


def test_a_reply_that_asks_nothing_gets_the_rubrics_bottom_anchors(data: Path, runs_root: Path) -> None:
    """The judge rates every dimension 4, yet an answer to a deficient question that asks nothing and states no
    condition scores 1 on question quality and gap identification; the judge's own 4 is kept beside it."""
    fake = AssumingLawyer(load_cases(data), "4")
    result = knowgap.run("clarify", models={"target": fake.spec}, providers={fake.spec: fake},
                         options={"data": str(data), "prompts": ["plain"], "no_correctness": True,
                                  "no_silent_failure": True}, runs_root=runs_root)
    records = [r for r in knowgap.iter_trials(result.run_id, runs_root) if "rubric_total" in r.scores]
    assert records
    for r in records:
        assert r.scores["rubric_anchored"] == "gap_identification,question_quality", r.output.get("response")
        assert r.scores["rubric_question_quality"] == 1.0 and r.scores["rubric_question_quality_model"] == 4.0
        assert r.scores["rubric_conditional_caution"] == 4 and r.scores["rubric_fallbacks"] == 2
        assert r.scores["rubric_total"] == pytest.approx(0.3 * 1 + 0.3 * 1 + 0.25 * 4 + 0.15 * 4)
    assert metric(result, "prompt=plain", "rubric_question_quality").value == 1.0
    assert (result.path / "report.html").exists()


def test_a_count_without_spread_gets_no_interval_and_a_score_gets_wilsons() -> None:
    """Every answer asks exactly one question and recalls every element: the recall (a [0, 1] score) is as
    uncertain as 6 of 6; the question count (a count, which could exceed 1) gets no interval rather than [1, 1]."""
    from knowgap.engine.records import TrialRecord
    from knowgap.stats import wilson
    from knowgap.suites.clarify.metrics import clarify_metrics

    records = [TrialRecord(trial_id=f"c{i}|prompt=plain|r0", case_id=f"c{i}", config_id="prompt=plain", repeat=0,
                           status="ok", scores={"kind": "deficient", "question_count": 1, "element_recall": 1.0})
               for i in range(6)]
    got = {m.name: m for m in clarify_metrics(records)}
    assert (got["element_recall"].ci_low, got["element_recall"].ci_high) == wilson(6, 6)
    assert (got["question_count"].value, got["question_count"].ci_low, got["question_count"].ci_high) == (1.0, None,
                                                                                                         None)
