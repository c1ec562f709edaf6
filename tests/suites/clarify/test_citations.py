"""The citation-check judge: reading cited articles (zh and en) on real answers, checking them against a legal
basis and the statute table, its card on the labelled citations, and the clarify metrics it feeds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import knowgap
from knowgap.errors import InputError, KnowgapError
from knowgap.judges.cards import ValidityCard, binary_card, save_card
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.suites.clarify.citation_card import load_cited_answers, validate_citation_basis, validate_citation_check
from knowgap.suites.clarify.citations import VERSION as CITATION_VERSION
from knowgap.suites.clarify.citations import (
    check_citations,
    citation_scores,
    load_statutes,
    mentioned_numbers,
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


def test_the_check_tells_articles_outside_the_basis_from_nonexistent_ones() -> None:
    checked = check_citations(read_citations(REAL_THEFT.text), REAL_THEFT.basis)
    assert [(c.citation.article, c.verdict) for c in checked] == [(264, "not_in_basis"), (658, "in_basis"),
                                                                  (657, "in_basis"), (1089, "in_basis")]
    checked = check_citations(read_citations("根据劳动合同法第47条、第120条和民法典第1261条"),
                              ["Labour Contract Law art. 47"])
    assert [(c.citation.article, c.verdict) for c in checked] == [(47, "in_basis"), (120, "nonexistent"),
                                                                  (1261, "nonexistent")]


def test_an_answer_without_citations_is_not_scored() -> None:
    details, scores = citation_scores("公司无法定理由解除属于违法解除。", ["劳动合同法第87条"])
    assert details == [] and scores == {"cites_articles": False, "citation_count": 0, "nonexistent_citation": None,
                                        "outside_basis_citation": None, "citation_basis_share": None}
    details, scores = citation_scores(REAL_THEFT.text, REAL_THEFT.basis)
    assert scores["outside_basis_citation"] is True and scores["nonexistent_citation"] is False
    assert scores["citation_basis_share"] == 0.75 and len(details) == 4


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


def test_the_card_measures_extraction_and_claims_only_that() -> None:
    """Positives: the labelled citations; negatives: the other article numbers the answers mention (a contract's
    clause, a heading). Its claim names extraction in the metrics' words, not whether a citation is right."""
    answers = load_cited_answers()
    card = validate_citation_check()
    labelled = sum(len({(c.statute, c.article) for c in a.citations}) for a in answers)
    mentions = sum(len(mentioned_numbers(a.text) - {c.article for c in a.citations}) for a in answers)
    assert card.confusion is not None and mentions > 0
    assert (card.confusion.tp + card.confusion.fn, card.confusion.fp + card.confusion.tn) == (labelled, mentions)
    assert card.claim is not None and card.claim.startswith("extracts the statute articles")
    assert "citation_rate" in card.claim and "outside_basis" not in card.claim
    assert card.replies is not None and card.replies.kind == "mixed" and card.languages is not None
    assert set(card.languages) == {"zh", "en"}
    small = validate_citation_check(limit=4)  # equal per label as far as the two classes allow
    assert small.n == 4 and small.confusion is not None and small.confusion.fp + small.confusion.tn == 2


class CitingLawyer(FakeLawyer):
    """Answers the complete control with a conclusion that cites an article in its basis, one outside it and a
    nonexistent one; the deficient cases as the fake lawyer does (questions, no citation)."""

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
        (87, "in_basis"), (40, "not_in_basis"), (99, "nonexistent")]
    assert records["zh-labour-001"].scores["outside_basis_citation"] is None
    metrics = {m.name: m for m in result.metrics if m.group == "prompt=plain"}
    assert (metrics["citation_rate"].value, metrics["citation_rate"].n) == (pytest.approx(1 / 3), 3)
    assert (metrics["outside_basis_citation_rate"].value, metrics["outside_basis_citation_rate"].n) == (1.0, 1)
    assert metrics["nonexistent_citation_rate"].value == 1.0
    assert metrics["citation_basis_share"].value == pytest.approx(1 / 3, abs=1e-4)  # stored to 4 places
    assert "wrong_citation_rate" not in metrics and "citation_precision" not in metrics
    judges = result.manifest.judges or {}
    assert (judges["citation-check"], judges["citation-basis"]) == ("citation-check-2", "citation-basis-1")


def test_an_older_run_with_wrong_citation_scores_reads_under_the_new_names(data: Path, runs_root: Path) -> None:
    """citation-check-1 runs stored ``wrong_citation`` and ``citation_precision``: the same values, now named
    ``outside_basis_citation`` and ``citation_basis_share``."""
    from knowgap.suites.clarify.metrics import clarify_metrics

    fake = CitingLawyer(load_cases(data))
    result = knowgap.run("clarify", models={"target": fake.spec}, providers={fake.spec: fake},
                         options={"data": str(data), "prompts": ["plain"], "no_rubric": True,
                                  "no_correctness": True}, runs_root=runs_root)
    records = list(knowgap.iter_trials(result.run_id, runs_root))
    old_names = {"outside_basis_citation": "wrong_citation", "citation_basis_share": "citation_precision"}
    old = [r.model_copy(update={"scores": {old_names.get(k, k): v for k, v in r.scores.items()}}) for r in records]
    assert any("wrong_citation" in r.scores for r in old) and not any("outside_basis_citation" in r.scores for r in old)
    new = {(m.group, m.name): (m.value, m.n) for m in clarify_metrics(records)}
    assert {(m.group, m.name): (m.value, m.n) for m in clarify_metrics(old)} == new
    assert new[("prompt=plain", "outside_basis_citation_rate")] == (1.0, 1)


def _reportable_extraction_card() -> ValidityCard:
    """A citation-check card that meets the card rule: real replies of two models in zh and en, all agreeing."""
    labels = [True] * 20 + [False] * 20
    return binary_card("citation-check", CITATION_VERSION, labels, labels, positive="cites the article",
                       dataset="test", dataset_sha256="0" * 64, claim="extracts the statute articles",
                       item_languages=["zh", "en"] * 20, writers=["local:a", "local:b"] * 20)


def test_the_basis_metrics_stay_screens_when_extraction_is_reportable(data: Path, runs_root: Path) -> None:
    """A card that validates extraction makes citation_rate and nonexistent_citation_rate reportable; the metrics
    that count membership of the reference basis are judged by citation-basis, which has no card until real replies
    are labelled by rule basis-1, so they stay screens."""
    from knowgap.report.judging import Judgements

    fake = CitingLawyer(load_cases(data))
    result = knowgap.run("clarify", models={"target": fake.spec}, providers={fake.spec: fake},
                         options={"data": str(data), "prompts": ["plain"], "no_rubric": True,
                                  "no_correctness": True}, runs_root=runs_root)
    save_card(_reportable_extraction_card())  # this test's own KNOWGAP_HOME
    judged = Judgements(result.manifest, languages=("zh", "en"))
    status = {m.name: judged.of(m) for m in result.metrics if m.group == "prompt=plain"}
    assert status["citation_rate"].status == status["nonexistent_citation_rate"].status == "reportable"
    for name in ("outside_basis_citation_rate", "citation_basis_share"):
        judge = status[name].judge
        assert status[name].status == "screen" and judge is not None and judge.judge == "citation-basis"
        assert "no validity card" in status[name].reason


def test_citation_basis_needs_its_labelled_replies(tmp_path: Path) -> None:
    with pytest.raises(KnowgapError, match="citation-basis has no labelled set yet .* at least two models"):
        validate_citation_basis(labels_file=tmp_path / "citation_basis.jsonl")


def test_citation_basis_is_measured_on_labelled_replies(tmp_path: Path) -> None:
    """Two models' replies to zh-labour-007: 第87条 rests on the case (in its basis since the basis-1 audit), 劳动法第
    25条 (an article of another statute about dismissal for misconduct) does not; 第42条 is in the basis but
    labelled outside by mistake, so the card shows one disagreement."""
    rows = [
        {"id": "r1", "case_id": "zh-labour-007", "writer": "local:a",
         "reply": "违法解除，依劳动合同法第87条支付赔偿金。",
         "citations": [{"statute": "labour-contract-law", "article": 87, "outside": False}]},
        {"id": "r2", "case_id": "zh-labour-007", "writer": "local:b",
         "reply": "根据劳动法第25条和劳动合同法第42条，公司不能辞退您。",
         "citations": [{"statute": "labour-law", "article": 25, "outside": True},
                       {"statute": "labour-contract-law", "article": 42, "outside": True}]},
    ]
    path = tmp_path / "citation_basis.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    card = validate_citation_basis(labels_file=path)
    assert card.confusion is not None and (card.confusion.tp, card.confusion.fn, card.confusion.tn) == (1, 1, 1)
    assert card.replies is not None and card.replies.models == {"local:a": 1, "local:b": 2}
    assert card.languages is not None and set(card.languages) == {"zh"}
    rows[1]["case_id"] = "zh-labour-999"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError, match=r"citation_basis.jsonl, line 2, field 'case_id': unknown clarify case"):
        validate_citation_basis(labels_file=path)
