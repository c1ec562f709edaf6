"""``knowgap run abstain --scenario``: the shipped question sets and the three native formats load, bad files give
one clear line per problem, precision / recall / F1 / accuracy are counted right, and ``--scenario loo`` is the
leave-one-out run unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import knowgap
from knowgap.casefiles.schema import case_schema
from knowgap.casefiles.strict import check
from knowgap.engine.records import TrialRecord
from knowgap.errors import InputError, KnowgapError
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.stats import wilson
from knowgap.suites.abstain.metrics import scenario_metrics
from knowgap.suites.abstain.scenario_data import QUESTION_SCENARIOS, check_scenario_file, load_scenario
from knowgap.suites.abstain.scenarios import scenario_request
from knowgap.suites.abstain.specs import f1_of
from knowgap.suites.abstain.verdicts import scenario_verdicts
from tests.fakes.models import FakeModel
from tests.helpers import knowgap_cli, scripted, write_jsonl


@pytest.mark.parametrize("scenario", QUESTION_SCENARIOS)
def test_each_shipped_scenario_loads_with_both_classes(scenario: str) -> None:
    cases = load_scenario(scenario)
    assert len({c.id for c in cases}) == len(cases) >= 50
    declined = [c for c in cases if c.should_abstain]
    answerable = [c for c in cases if not c.should_abstain]
    assert declined and answerable and all(c.answers for c in answerable)
    assert all((c.context is not None) == (scenario == "unanswerable-context") for c in cases)
    if scenario != "unknowable":  # the written sets are zh + en
        assert {c.lang for c in cases} == {"zh", "en"}
    if scenario == "unanswerable-context":  # the questions on one paragraph form one cluster
        assert len({c.group for c in cases}) == 15


def test_selfaware_json_loads(tmp_path: Path) -> None:
    path = tmp_path / "SelfAware.json"
    path.write_text(json.dumps({"dataset_name": "SelfAware", "example": [
        {"question_id": 7, "question": "Who painted the Mona Lisa?", "answer": ["Leonardo da Vinci"],
         "answerable": True, "source": "squadqa_train"},
        {"question_id": 8, "question": "What will I dream tonight?", "answer": None, "answerable": False,
         "source": "SelfAware"}]}), encoding="utf-8")
    first, second = load_scenario("unknowable", str(path))
    assert (first.id, first.should_abstain, first.answers, first.lang) == ("selfaware-7", False,
                                                                          ["Leonardo da Vinci"], "en")
    assert (second.id, second.should_abstain, second.answers, second.group) == ("selfaware-8", True, [],
                                                                              "case:selfaware-8")


def test_falseqa_csv_loads(tmp_path: Path) -> None:
    path = tmp_path / "test.csv"
    path.write_text('question,answer,label\n'
                    '"Why do fish breathe with lungs?","[\'Fish breathe with gills.\', \'Fish have gills.\']",1\n'
                    'How do fish breathe?,Fish take oxygen from water through their gills.,0\n', encoding="utf-8")
    premise, valid = load_scenario("false-premise", str(path))
    assert (premise.id, premise.should_abstain, premise.answers) == ("falseqa-2", True, ["Fish breathe with gills.",
                                                                                       "Fish have gills."])
    assert (valid.should_abstain, valid.answers) == (False, ["Fish take oxygen from water through their gills."])


def test_squad2_json_loads_with_the_paragraph_as_context(tmp_path: Path) -> None:
    path = tmp_path / "dev.json"
    path.write_text(json.dumps({"version": "v2.0", "data": [{"title": "运河", "paragraphs": [{
        "context": "大运河全长约一千七百九十七公里。",
        "qas": [{"id": "q1", "question": "大运河全长多少公里？",
                 "answers": [{"text": "一千七百九十七", "answer_start": 6}], "is_impossible": False},
                {"id": "q2", "question": "大运河是谁设计的？", "answers": [], "plausible_answers": [],
                 "is_impossible": True}]}]}]}, ensure_ascii=False), encoding="utf-8")
    answered, declined = load_scenario("unanswerable-context", str(path))
    assert (answered.lang, answered.answers) == ("zh", ["一千七百九十七"])
    assert answered.context == "大运河全长约一千七百九十七公里。"
    assert declined.should_abstain and declined.group == answered.group == "paragraph:0.0"
    request = scenario_request(declined, 100, 0)
    assert request.messages[-1].content == "段落：\n大运河全长约一千七百九十七公里。\n\n问题：大运河是谁设计的？"


def _problems(scenario: str, path: Path) -> list[str]:
    return [str(p) for p in check_scenario_file(scenario, path).problems]


def test_bad_files_name_file_line_and_field(tmp_path: Path) -> None:
    bad = write_jsonl(tmp_path / "bad.jsonl", [
        {"id": "a", "question": "Q?", "should_abstain": False, "lang": "en"},
        {"id": "b", "question": "Q?", "should_abstain": "yes", "lang": "en"},
        {"id": "c", "question": "Q?", "should_abstain": True, "lang": "en", "contxt": "x"},
        {"id": "a", "question": "Q?", "should_abstain": True, "lang": "en"}])
    problems = _problems("unanswerable-context", bad)
    assert f"{bad}, line 1, field 'answers': an answerable question (should_abstain false) needs at least one " \
           "reference answer" in problems
    assert f"{bad}, line 1, field 'context': unanswerable-context questions need the paragraph (context)" in problems
    assert any(p.startswith(f"{bad}, line 2, field 'should_abstain'") for p in problems)
    assert any(p.startswith(f"{bad}, line 3, field 'contxt'") and "did you mean 'context'" in p for p in problems)
    assert any(p.startswith(f"{bad}, line 4, field 'id'") and "duplicate" in p for p in problems)
    csv_file = tmp_path / "falseqa.csv"
    csv_file.write_text("question,answer,label\nWhy?,['x'],2\n", encoding="utf-8")
    assert _problems("false-premise", csv_file) == [
        f"{csv_file}, line 2, field 'label': expected 1 (false premise) or 0 (valid), got '2'"]
    assert "unsupported file for --scenario unknowable" in _problems("unknowable", csv_file)[0]
    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps({"data": [{"paragraphs": [{"context": "c", "qas": [
        {"id": "q", "question": "?", "answers": [], "is_impossible": False}]}]}]}), encoding="utf-8")
    assert _problems("unanswerable-context", squad) == [
        f"{squad}, field 'data.0.paragraphs.0.qas.0.answers': an answerable question (is_impossible false) needs "
        "answers"]
    with pytest.raises(InputError, match="line 2, field 'label'"):
        load_scenario("false-premise", str(csv_file))


def test_data_check_and_schema_take_the_scenario(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "q.jsonl", [{"id": "x", "question": "Why is the sky green?", "should_abstain": True,
                                               "lang": "en"}])
    assert check("abstain", good, "false-premise").summary() == f"{good}: 1 question OK (en should abstain 1)"
    assert "should_abstain" in case_schema("abstain", "unknowable")["required"]
    assert "question" in case_schema("abstain")["required"]  # without --scenario: the knowledge base's QA pair
    with pytest.raises(KnowgapError, match="--scenario applies to the abstain suite only"):
        check("starter", good, "false-premise")
    proc = knowgap_cli("data", "check", "abstain", str(good), "--scenario", "unanswerable-context")
    assert proc.returncode == 1 and "line 1, field 'context'" in proc.stderr and "Traceback" not in proc.stderr


def _record(case: str, should: bool, abstained: bool | None, correct: bool | None = None,
            config: str = "false-premise/neutral") -> TrialRecord:
    return TrialRecord(trial_id=f"{case}|{config}|r0", case_id=case, config_id=config, repeat=0, status="ok",
                       scores={"should_abstain": should, "abstained": abstained, "correct": correct})


def test_precision_recall_f1_and_accuracy_on_known_outcomes() -> None:
    # 4 to decline (3 declined), 6 answerable (1 declined; of the 5 answered, 4 right); 1 unparsed judge reply
    records = [_record("d1", True, True), _record("d2", True, True), _record("d3", True, True),
               _record("d4", True, False), _record("a1", False, True, False)]
    records += [_record(f"a{i}", False, False, i != 6) for i in range(2, 7)] + [_record("u", True, None)]
    cases = {r.case_id: f"case:{r.case_id}" for r in records}
    got = {m.name: m for m in scenario_metrics(records, cases, {c: "en" for c in cases})}
    assert (got["abstention_precision"].value, got["abstention_precision"].n) == (0.75, 4)
    assert (got["abstention_recall"].value, got["abstention_recall"].n) == (0.75, 4)
    assert got["abstention_f1"].value == pytest.approx(0.75) and got["abstention_f1"].n == 10
    f1 = got["abstention_f1"]
    assert f1.ci_low is not None and f1.ci_high is not None and 0 < f1.ci_low < 0.75 < f1.ci_high <= 1
    assert (got["answer_accuracy"].value, got["answer_accuracy"].n) == (4 / 6, 6)
    assert got["abstention_judge_parse_failures"].value == 1
    assert f1_of([(True, False), (False, False)]) == 0.0 and f1_of([(False, False)]) is None
    # the verdicts count what the metrics count
    verdicts = [v for r in records for v in scenario_verdicts(r)]
    right = {n: sum(v.metric == n and v.verdict == "right" for v in verdicts) for n in got}
    assert (right["abstention_precision"], right["abstention_recall"], right["answer_accuracy"]) == (3, 3, 4)


def test_clusters_widen_the_interval_and_languages_split() -> None:
    records = [_record(f"q{i}", i % 2 == 0, i % 4 == 0, None if i % 2 == 0 else True) for i in range(12)]
    alone = {r.case_id: f"case:{r.case_id}" for r in records}
    paired = {r.case_id: f"paragraph:{int(r.case_id[1:]) // 4}" for r in records}
    lang = {r.case_id: "zh" if int(r.case_id[1:]) < 6 else "en" for r in records}
    one = {(m.group, m.name): m for m in scenario_metrics(records, alone, lang)}
    three = {(m.group, m.name): m for m in scenario_metrics(records, paired, lang)}
    key = ("false-premise/neutral", "abstention_recall")
    assert one[key].value == three[key].value == 0.5 and three[key].n_cases == 3 < one[key].n_cases
    assert ("false-premise/neutral · lang=zh", "abstention_f1") in one


class Oracle(FakeModel):
    """Declines the questions it is told to (in the question's language), answers the rest with a reference."""

    spec = "test:oracle"

    def __init__(self, replies: dict[str, str]) -> None:
        super().__init__()
        self.replies = replies

    def reply(self, request: ChatRequest) -> ChatResponse:
        question = str(request.messages[-1].content).rsplit("\n", 1)[-1].removeprefix("Question: ").removeprefix(
            "问题：")
        return ChatResponse(text=self.replies[question])


@pytest.mark.parametrize("scenario", QUESTION_SCENARIOS)
def test_a_scenario_runs_end_to_end(scenario: str, runs_root: Path) -> None:
    cases = load_scenario(scenario)
    declined = {"zh": "这个问题无法回答。", "en": "I cannot answer that."}
    replies = {c.question: declined[c.lang] if c.should_abstain else f"{c.answers[0]}." for c in cases}
    oracle = Oracle(replies)
    result = knowgap.run("abstain", models={"target": oracle.spec}, providers={oracle.spec: oracle},
                         options={"scenario": scenario, "sample": 12}, runs_root=runs_root)
    got = {m.name: m for m in result.metrics if m.group == f"{scenario}/neutral"}
    assert result.ok and got["abstention_f1"].value == 1.0 and got["answer_accuracy"].value == 1.0
    f1 = got["abstention_f1"]  # every case right: as uncertain as k of k, not the bootstrap's point [1, 1]
    assert f1.cases > 1 and (f1.ci_low, f1.ci_high) == wilson(f1.cases, f1.cases)  # cases: clusters
    assert got["abstention_recall"].n + got["answer_accuracy"].n == 12
    record = knowgap.iter_trials(result.run_id, runs_root)[0]
    assert record.verdicts and record.output["experiment"]["scenario"] == scenario
    assert (result.manifest.metric_judges or {})["answer_accuracy"].judge == "answer-overlap"


def test_loo_is_the_leave_one_out_run_unchanged(tmp_path: Path, small_kb: Path, runs_root: Path) -> None:
    reply = scripted(tmp_path, '{"response": "I cannot answer.", "citation": "no citation"}')
    base = {"kb": str(small_kb), "retrieval": ["direct"], "prompts": ["basic"]}
    runs = [knowgap.run("abstain", models={"target": reply}, options=options, runs_root=runs_root, use_cache=False)
            for options in (base, {**base, "scenario": "loo"})]
    requests = [[c.request for r in knowgap.iter_trials(run.run_id, runs_root) for c in r.calls] for run in runs]
    assert requests[0] == requests[1] and len(requests[0]) == 7
    assert [(m.group, m.name, m.value) for m in runs[0].metrics] == [(m.group, m.name, m.value)
                                                                    for m in runs[1].metrics]
    with pytest.raises(KnowgapError, match="--data is a --scenario question file"):
        knowgap.run("abstain", models={"target": reply}, options={**base, "data": "x.csv"}, runs_root=runs_root)


def test_inject_and_defences_are_refused_with_a_scenario() -> None:
    from knowgap.errors import KnowgapError
    from knowgap.suites.abstain.suite import AbstainOptions, AbstainSuite

    for extra in ({"inject": True}, {"defences": ["none", "guarded"]}):
        with pytest.raises(KnowgapError, match="apply to the leave-one-out run"):
            AbstainSuite(AbstainOptions(scenario="unknowable", **extra))
    AbstainSuite(AbstainOptions(scenario="unknowable"))
