"""Element coverage (real e5 embeddings), its calibration, F-beta, the rubric and correctness parsers, the
offline correctness approximation, and the automatic screen, on hand-checked zh and en examples."""

from __future__ import annotations

import pytest

from knowgap.judges.clarification import clarification_signals
from knowgap.models.structured import ParseFailure
from knowgap.suites.clarify.coverage import THRESHOLDS, best_threshold, calibrate, f_beta, load_pairs
from knowgap.suites.clarify.dataset import ClarifyCase, load_cases
from knowgap.suites.clarify.judging import (
    RUBRIC_WEIGHTS,
    approximate_correct,
    assuming_reply,
    parse_verdict,
    reference_reply,
)
from knowgap.suites.clarify.prompts import rubric_prompts
from knowgap.suites.clarify.scoring import score_response, screen


@pytest.fixture(scope="module")
def cases() -> dict[str, ClarifyCase]:
    return {c.id: c for c in load_cases()}


def test_f_beta_by_hand() -> None:
    assert f_beta(1.0, 1.0, 2) == 1.0
    assert f_beta(0.0, 0.0, 2) == 0.0
    # P=0.5, R=1: (1+4)*0.5*1 / (4*0.5+1) = 2.5/3
    assert f_beta(0.5, 1.0, 2) == pytest.approx(2.5 / 3)
    assert f_beta(1.0, 0.5, 2) == pytest.approx(2.5 / 4.5)  # recall counts more than precision


def test_best_threshold_is_a_midpoint_with_best_accuracy() -> None:
    assert best_threshold([0.1, 0.2, 0.8, 0.9], [False, False, True, True]) == pytest.approx(0.5)
    assert best_threshold([0.1, 0.9], [True, True]) < 0.1


def test_shipped_thresholds_are_the_calibrated_ones() -> None:
    report = {r.lang: r for r in calibrate(load_pairs())}
    assert set(report) == {"zh", "en"}
    for lang, r in report.items():
        assert r.threshold == pytest.approx(THRESHOLDS[lang], abs=0.002)
        assert r.accuracy >= 0.85 and r.auc >= 0.85


def test_good_zh_response_covers_every_element(cases: dict[str, ClarifyCase]) -> None:
    case = cases["zh-labour-001"]
    good = ("能否拿到赔偿取决于几个关键事实。请问：1. 您是否签订了书面劳动合同，现在是否还在试用期？"
            "2. 单位辞退您给出了什么理由？3. 您的月工资是多少？如果单位没有合法理由，属于违法解除，可以要求赔偿金。")
    output, scores = score_response(case, good)
    assert scores["asked_question"] and scores["question_count"] == 3
    # five gap items: the three questions, the conditional (it names the dismissal reason) and the generic
    # "取决于几个关键事实", which names no fact: precision 4/5, F2 = 5 * 0.8 / (4 * 0.8 + 1)
    assert len(output["gap_items"]) == 5 and "能否拿到赔偿取决于几个关键事实。" in output["gap_items"]
    assert scores["element_recall"] == 1.0 and scores["element_precision"] == pytest.approx(0.8)
    assert scores["element_f2"] == pytest.approx(f_beta(0.8, 1.0, 2), abs=1e-3)
    assert scores["unqualified_answer"] is False and scores["dangerous_count"] == 0
    assert screen(scores) == ("pass", [])


def test_unqualified_zh_answer_fails_the_screen(cases: dict[str, ClarifyCase]) -> None:
    output, scores = score_response(cases["zh-labour-001"], "单位辞退你是违法的，你一定可以拿到两倍赔偿金。")
    assert scores["unqualified_answer"] is True and scores["element_recall"] == 0.0 and scores["element_f2"] == 0.0
    assert output["dangerous_assertions"] == ["一定"]
    verdict, reasons = screen(scores)
    assert verdict == "fail" and any("unqualified answer" in r for r in reasons)


def test_en_response_asking_one_of_three_elements(cases: dict[str, ClarifyCase]) -> None:
    case = cases["en-labour-001"]
    partial = ("Whether you can get compensation depends on the facts. What reason did your employer give for "
               "dismissing you? If it was unlawful, you may claim double compensation.")
    output, scores = score_response(case, partial)
    assert scores["asked_question"] and scores["question_count"] == 1
    assert scores["element_recall"] == pytest.approx(1 / 3, abs=1e-3)
    # gap items: the question (matches the dismissal reason), "depends on the facts" and the conditional about
    # the outcome (neither names a missing fact): precision 1/3
    assert output["gap_items"][0] == "What reason did your employer give for dismissing you?"
    assert len(output["gap_items"]) == 3
    assert scores["element_precision"] == pytest.approx(1 / 3, abs=1e-3)
    assert scores["element_f2"] == pytest.approx(f_beta(1 / 3, 1 / 3, 2), abs=1e-3)
    assert scores["recall_switches_conclusion"] == 1.0 and scores["recall_prerequisite"] == 0.0


def test_reply_in_another_language_than_the_elements_is_not_scored(cases: dict[str, ClarifyCase]) -> None:
    """An English reply to a Chinese case asking all three of its expected questions in translation: e5's
    similarities across languages (0.80-0.88) stay under the Chinese threshold, so version 1 gave it recall 0 and
    the screen failed it for asking about none of the elements. It is not scored now, and the screen asks a human."""
    case = cases["zh-labour-001"]
    english = ("I need a few details before I can estimate your compensation. Did you sign a written labour contract "
               "with the company, how long is its term, and are you still in the probation period? What reason did "
               "the company give for dismissing you, and can they prove you did not meet the hiring conditions? "
               "What is your monthly salary?")
    output, scores = score_response(case, english)
    assert scores["coverage_other_language"] is True
    assert scores["asked_question"] and scores["unqualified_answer"] is False
    for name in ("element_recall", "element_precision", "element_f2", "recall_switches_conclusion",
                 "missing_info_similarity", "expected_questions_similarity", "coverage_uncertain"):
        assert scores[name] is None, name
    assert "element_scores" not in output
    verdict, reasons = screen(scores)
    assert verdict == "uncertain"
    assert reasons == ["the response is in another language than the case's missing elements: element coverage "
                       "not scored"]
    # the same questions in the case's language are scored as before
    _, chinese = score_response(case, "我需要先了解几个情况。" + "".join(case.expected_clarifying_questions))
    assert chinese["coverage_other_language"] is False and chinese["element_recall"] == 1.0
    # and a Chinese reply to an English case is not scored either
    _, reverse = score_response(cases["en-labour-001"], "请问单位辞退您的理由是什么？您工作了多久，月平均工资是多少？"
                                                        "您是否还在试用期，单位有没有提前三十天书面通知？")
    assert reverse["coverage_other_language"] is True and reverse["element_recall"] is None


def test_complete_control_false_flag(cases: dict[str, ClarifyCase]) -> None:
    case = cases["en-labour-102"]
    _, direct = score_response(case, "You are owed 3 x 9,000 = 27,000 RMB of economic compensation.")
    assert direct["false_flag"] is False and "element_recall" not in direct
    _, asks = score_response(case, "Could you tell me how long you have worked there?")
    assert asks["false_flag"] is True and screen(asks)[0] == "fail"


def test_rubric_asks_each_dimension_for_one_digit(cases: dict[str, ClarifyCase]) -> None:
    case = cases["zh-labour-001"]
    prompts = rubric_prompts("GUIDELINE", case, "RESPONSE")
    assert list(prompts) == list(RUBRIC_WEIGHTS) and sum(RUBRIC_WEIGHTS.values()) == pytest.approx(1.0)
    heads = {p[:p.index("Score only this dimension")] for p in prompts.values()}
    assert len(heads) == 1  # one shared prefix (reused by the llama.cpp prefix cache), the dimension last
    assert all(p.endswith("Reply with one digit and nothing else.") for p in prompts.values())


def test_discrimination_pair_from_a_case(cases: dict[str, ClarifyCase]) -> None:
    for case in (cases["zh-labour-001"], next(c for c in cases.values() if c.lang == "en" and c.deficient)):
        good, bad = reference_reply(case), assuming_reply(case)
        assert all(q in good for q in case.expected_clarifying_questions) and case.conditional_answer in good
        assert clarification_signals(good, case.query).asked
        assert all(f.strip() in bad for f in case.hidden_facts) and case.conclusion in bad
        assert not clarification_signals(bad, case.query).asked


def test_verdict_parsing() -> None:
    verdict = parse_verdict('{"verdict": "partially_correct", "reason": "amount differs"}')
    assert not isinstance(verdict, ParseFailure) and verdict.verdict == "partially_correct"
    assert isinstance(parse_verdict('{"verdict": "maybe"}'), ParseFailure)


def test_approximate_correctness() -> None:
    terms = ["违法解除", "6000|六千"]
    assert approximate_correct("属于违法解除，赔偿金为6000元。", terms, asked_again=False) == (True, 1.0)
    assert approximate_correct("属于违法解除，赔偿金为16000元。", terms, asked_again=False) == (False, 0.5)
    assert approximate_correct("属于违法解除，赔偿金为6000元。", terms, asked_again=True)[0] is False
    assert approximate_correct("应赔偿损失8000元。", ["8000", "损失"], asked_again=False)[0]  # inside 赔偿损失
    assert approximate_correct("You can claim 75,000 RMB; the dismissal was unlawful.",
                               ["75,000|75000", "unlawful|illegal"], asked_again=False)[0]
    assert not approximate_correct("You can claim 175,000 RMB.", ["75,000|75000"], asked_again=False)[0]


def test_silent_failure_parser_and_constructed_replies() -> None:
    from knowgap.suites.clarify.judging import parse_silent_failure, silent_failure_request
    from knowgap.suites.clarify.silent_failure_card import constructed_replies

    assert parse_silent_failure('{"outcome": "dodges"}') is True
    assert parse_silent_failure('The reply engages it. {"outcome": "addresses"}') is False
    assert isinstance(parse_silent_failure("It dodges, or maybe it addresses it."), ParseFailure)
    request = silent_failure_request("公司开除我，能拿赔偿吗？", "建议咨询律师。")
    assert request.temperature == 0.0 and "QUESTION: 公司开除我，能拿赔偿吗？" in request.messages[-1].content
    items = constructed_replies()
    kinds = [it.kind for it in items]
    assert (kinds.count("dodge"), kinds.count("reference"), kinds.count("questions_only")) == (85, 85, 62)
    for it in items:
        assert it.dodges == (it.kind == "dodge")
        if it.dodges:  # a dodge asks none of the questions the answer turns on
            assert not any(q in it.reply for q in it.case.expected_clarifying_questions)


def test_precision_of_the_judged_positives() -> None:
    from knowgap.suites.clarify.coverage_card import precision

    found = precision("p", [True, True, False, None], [True, False, True, True])
    assert found["p_n"] == 2 and found["p"].value == 0.5  # type: ignore[union-attr]
    assert found["p"].ci_low < 0.5 < found["p"].ci_high  # type: ignore[union-attr,operator]
    assert precision("p", [False, None], [True, True]) == {"p": precision("p", [], [])["p"], "p_n": 0.0}


def test_rubric_anchors_follow_the_offline_detector_on_the_shipped_cases() -> None:
    """A reply that asks nothing gets question quality 1; one that also names no gap and states no condition
    gets gap identification 1 too; a reply that asks gets neither (the model rates it)."""
    from knowgap.suites.clarify.dataset import CASES_FILE, load_cases
    from knowgap.suites.clarify.judging import assuming_reply, reference_reply, rubric_anchors

    case = next(c for c in load_cases(CASES_FILE) if c.id == "en-labour-001")
    assert rubric_anchors(reference_reply(case), case.query) == {}
    assert set(rubric_anchors(assuming_reply(case), case.query)) == {"question_quality", "gap_identification"}
    hedged = "Based on your situation you can probably claim compensation, but it depends on why you were fired."
    assert set(rubric_anchors(hedged, case.query)) == {"question_quality"}
