"""The citation-check judge: reading cited articles (zh and en) on real answers, checking them against a legal
basis and the statute table, its card on the labelled citations, and the clarify metrics it feeds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import knowgap
from knowgap.errors import InputError
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.suites.clarify.citation_card import load_cited_answers, validate_citation_check
from knowgap.suites.clarify.citations import (
    check_citations,
    citation_scores,
    load_statutes,
    read_citations,
    zh_number,
)
from knowgap.suites.clarify.dataset import CASES_FILE, load_cases
from tests.suites.clarify.test_suite_engine import FakeLawyer

REAL = {a.source: a for a in load_cited_answers()}
"""Real answers: lawyer turns of Lawyer LLaMA multi-turn consultations (ChatGPT-written, Apache-2.0), shipped with
the card's labels; ``basis`` is the consultation's ``laws``."""
REAL_THEFT = REAL["lawyer-llama-multi#34.1"]
REAL_ID_CARD = REAL["lawyer-llama-multi#8.3"]


@pytest.mark.parametrize(("text", "number"), [("三十九", 39), ("一千零八十二", 1082), ("一千一百一十八", 1118),
                                              ("十三", 13), ("二百零九", 209), ("一百零七", 107), ("39", 39),
                                              ("３９", 39)])
def test_chinese_article_numbers(text: str, number: int) -> None:
    assert zh_number(text) == number


def test_real_answers_are_read_with_their_statutes() -> None:
    cited = [(c.statute, c.article) for c in read_citations(REAL_THEFT.text)]
    assert cited == [("criminal-law", 264), ("civil-code", 658), ("civil-code", 657), ("civil-code", 1089)]
    cited = [(c.statute, c.article) for c in read_citations(REAL_ID_CARD.text)]
    assert cited == [("other:居民身份证法", 7), ("other:居住暂行条例", 23)]


@pytest.mark.parametrize(("text", "expected"), [
    ("根据劳动合同法第39条、第40条，以及第八十七条", [("labour-contract-law", n) for n in (39, 40, 87)]),
    ("依照劳动合同法实施条例第6条", [("labour-contract-law-regulations", 6)]),
    ("《民法典》第147至151条", [("civil-code", n) for n in range(147, 152)]),
    ("劳动争议司法解释（一）第50条", [("labour-dispute-interpretation-1", 50)]),
    ("依据公司法第二十条", [("other:公司法", 20)]),
    ("Under Article 47 of the Labor Contract Law and Articles 46, 48 and 87 you may claim",
     [("labour-contract-law", n) for n in (47, 46, 48, 87)]),
    ("Civil Code art. 1079", [("civil-code", 1079)]),
    ("Article 1079 of the Civil Code and Article 47 of the Labour Contract Law",
     [("civil-code", 1079), ("labour-contract-law", 47)]),
    # not statute citations: a contract's clause, an article with no statute named, list headings
    ("请看劳动合同第五条约定的试用期", []),
    ("根据《劳动合同法》的规定。\n\n第三条建议：先协商", []),
    ("Article 5 says nothing about it.", []),
])
def test_citation_forms(text: str, expected: list[tuple[str, int]]) -> None:
    assert [(c.statute, c.article) for c in read_citations(text)] == expected


def test_the_check_names_off_basis_and_nonexistent_articles() -> None:
    checked = check_citations(read_citations(REAL_THEFT.text), REAL_THEFT.basis)
    assert [(c.citation.article, c.verdict) for c in checked] == [(264, "off_basis"), (658, "right"),
                                                                  (657, "right"), (1089, "right")]
    checked = check_citations(read_citations("根据劳动合同法第47条、第120条和民法典第1261条"),
                              ["Labour Contract Law art. 47"])
    assert [(c.citation.article, c.verdict) for c in checked] == [(47, "right"), (120, "nonexistent"),
                                                                  (1261, "nonexistent")]


def test_an_answer_without_citations_is_not_scored() -> None:
    details, scores = citation_scores("公司无法定理由解除属于违法解除。", ["劳动合同法第87条"])
    assert details == [] and scores == {"cites_articles": False, "citation_count": 0, "wrong_citation": None,
                                        "nonexistent_citation": None, "citation_precision": None}
    details, scores = citation_scores(REAL_THEFT.text, REAL_THEFT.basis)
    assert scores["wrong_citation"] is True and scores["nonexistent_citation"] is False
    assert scores["citation_precision"] == 0.75 and len(details) == 4


def test_every_legal_basis_of_the_shipped_cases_reads_as_table_statutes() -> None:
    table = {s.key for s in load_statutes().statutes}
    for case in load_cases(CASES_FILE):
        for entry in case.legal_basis:
            cited = read_citations(entry)
            assert cited and all(c.statute in table for c in cited), (case.id, entry)


def test_a_bad_statute_table_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "statutes.json"
    bad.write_text(json.dumps({"source": "x" * 30, "statutes": [{"key": "Civil Code", "zh": ["民法典"],
                                                                 "edition": "2020"}]}), encoding="utf-8")
    with pytest.raises(InputError, match=r"statutes.json, field 'statutes.0.key'"):
        load_statutes(bad)


def test_the_card_on_the_labelled_citations() -> None:
    answers = load_cited_answers()
    card = validate_citation_check()
    assert card.n == sum(len(a.citations) for a in answers)
    assert card.confusion is not None
    assert card.confusion.tp + card.confusion.fn == sum(c.wrong for a in answers for c in a.citations)
    assert card.extra["real_n"] > card.extra["written_n"] > 0
    small = validate_citation_check(limit=10)  # a sample of citations, equal per label
    assert small.n == 10 and small.confusion is not None and small.confusion.tp + small.confusion.fn == 5


class CitingLawyer(FakeLawyer):
    """Answers the complete control with a conclusion that cites a right, an off-basis and a nonexistent
    article; the deficient cases as the fake lawyer does (questions, no citation)."""

    spec = "fake:citing-lawyer"

    async def chat(self, request: ChatRequest) -> ChatResponse:
        users = [m.content for m in request.messages if m.role == "user"]
        case = self.by_query.get(users[0]) if users else None
        if case is not None and case.id == "zh-labour-101" and request.messages[0].role == "system":
            text = "属于违法解除，依据劳动合同法第87条、第40条和第99条，应支付赔偿金。"
            return ChatResponse(text=text, model=self.spec)
        return await super().chat(request)


def test_the_suite_scores_citations(data: Path, runs_root: Path) -> None:
    fake = CitingLawyer(load_cases(data))
    result = knowgap.run("clarify", models={"target": fake.spec}, providers={fake.spec: fake},
                         options={"data": str(data), "prompts": ["plain"], "no_rubric": True,
                                  "no_correctness": True}, runs_root=runs_root)
    records = {r.case_id: r for r in knowgap.iter_trials(result.run_id, runs_root)}
    control = records["zh-labour-101"]
    assert [(c["article"], c["verdict"]) for c in control.output["citations"]] == [
        (87, "right"), (40, "off_basis"), (99, "nonexistent")]
    assert records["zh-labour-001"].scores["wrong_citation"] is None
    metrics = {m.name: m for m in result.metrics if m.group == "prompt=plain"}
    assert (metrics["citation_rate"].value, metrics["citation_rate"].n) == (pytest.approx(1 / 3), 3)
    assert (metrics["wrong_citation_rate"].value, metrics["wrong_citation_rate"].n) == (1.0, 1)
    assert metrics["nonexistent_citation_rate"].value == 1.0
    assert metrics["citation_precision"].value == pytest.approx(1 / 3, abs=1e-4)  # stored to 4 places
    assert (result.manifest.judges or {})["citation-check"] == "citation-check-1"
