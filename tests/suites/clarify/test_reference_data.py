"""The shipped clarify cases' references (issue 37): every legal basis follows rule basis-1 where a machine can
check it (docs/clarify.md), and the dataset card's re-read is the fixed sample of the shipped cases."""

from __future__ import annotations

import pytest

from knowgap.suites import get_suite
from knowgap.suites.clarify.citations import basis_articles, citation_scores, load_statutes, read_citations
from knowgap.suites.clarify.dataset import CASES_FILE, ClarifyCase, load_cases
from knowgap.suites.dataset_cards import card_of, draw_sample, population_sha256, shipped_units

CASES = load_cases(CASES_FILE)
BY_ID = {c.id: c for c in CASES}

REFERS = {
    ("labour-contract-law", 87): ("labour-contract-law", 47),  # 2N "按照本法第四十七条规定的经济补偿标准的二倍"
    ("labour-contract-law", 48): ("labour-contract-law", 87),  # 继续履行 or "依照本法第八十七条" 赔偿金
    ("labour-contract-law", 21): ("labour-contract-law", 39),  # probation: only on 第39条 and 第40条(1)(2) grounds
    ("labour-contract-law-regulations", 6): ("labour-contract-law", 82),  # "依照劳动合同法第八十二条"
    ("marriage-family-interpretation-1", 78): ("civil-code", 1087),  # "根据民法典第一千零八十七条第一款"
}
"""Rule basis-1, clause 3: an article of the basis -> an article it expressly refers to for what the shipped
conclusions use (each conclusion with the first computes or grants what the second defines)."""


def _basis(case: ClarifyCase) -> set[tuple[str, int]]:
    return basis_articles(case.legal_basis)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_articles_a_basis_article_refers_to_are_in_the_basis(case: ClarifyCase) -> None:
    basis = _basis(case)
    missing = [f"{a} -> {b}" for a, b in REFERS.items() if a in basis and b not in basis]
    assert not missing, f"{case.id}: {missing}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_every_article_the_conclusion_cites_is_in_the_basis(case: ClarifyCase) -> None:
    cited = {(c.statute, c.article) for c in read_citations(case.conclusion)}
    assert cited <= _basis(case), f"{case.id}: {sorted(cited - _basis(case))}"


def test_every_basis_article_exists_in_its_statute() -> None:
    counts = {s.key: s.articles for s in load_statutes().statutes}
    for case in CASES:
        for statute, article in _basis(case):
            last = counts[statute]
            assert article >= 1 and (last is None or article <= last), (case.id, statute, article)


def test_a_correct_answer_to_the_issue_case_cites_inside_its_basis() -> None:
    """zh-labour-007 concludes 2N after a dismissal in pregnancy: the answer rests on 第42条, 第87条 and 第47条.
    With the basis as shipped before the audit, 第47条 and 第87条 counted as outside it (basis share 1/3)."""
    case = BY_ID["zh-labour-007"]
    answer = ("孕期女职工不得依劳动合同法第42条第4项被经济性裁员，公司解除违法，可要求按第87条支付赔偿金，"
              "即第47条经济补偿标准的二倍：工作2年，赔偿金为4个月工资24000元。")
    details, scores = citation_scores(answer, [*case.legal_basis, case.conclusion, case.conditional_answer])
    assert [(d["article"], d["verdict"]) for d in details] == [(42, "in_basis"), (87, "in_basis"), (47, "in_basis")]
    assert scores["citation_basis_share"] == 1.0 and scores["outside_basis_citation"] is False


def test_the_reread_is_the_fixed_sample_of_the_cases_as_shipped_before_the_fixes() -> None:
    loaded = card_of(get_suite("clarify"))
    assert loaded is not None and not loaded.problems()
    units = shipped_units("clarify", loaded.folder)  # the fixes changed no case id
    assert population_sha256(units) == loaded.card.reread.population_sha256
    assert [row.unit for row in loaded.rows] == draw_sample(units)
    assert all(row.fixed for row in loaded.rows if row.verdict == "wrong")
