"""The shipped clarify dataset: composition, internal consistency, provenance; and the loader's errors."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from knowgap.errors import InputError
from knowgap.judges.clarification import dangerous_assertions
from knowgap.suites.clarify.dataset import CASES_FILE, GUIDELINE_FILES, ClarifyCase, load_cases, load_guideline
from knowgap.suites.clarify.judging import approximate_correct

LAWBENCH = Path("/work/shared/data/legal_zh/lawbench_consult/2-4_issue_topic_identification.json")


@pytest.fixture(scope="module")
def cases() -> list[ClarifyCase]:
    return load_cases()


def test_composition(cases: list[ClarifyCase]) -> None:
    kinds = Counter(c.kind for c in cases)
    assert len(cases) >= 80 and kinds["deficient"] >= 60 and kinds["complete"] >= 20
    assert sum(c.lang == "en" for c in cases) >= 20
    zh_domains = Counter(c.domain for c in cases if c.lang == "zh")
    assert set(zh_domains) == {"labour", "contract", "tort", "family", "lease", "consumer", "lending"}
    assert min(zh_domains.values()) >= 7
    assert sum(c.source.dataset != "authored" for c in cases) >= 30  # real LawBench questions first


def test_every_element_category_is_used_and_each_case_is_consistent(cases: list[ClarifyCase]) -> None:
    categories = Counter(m.category for c in cases for m in c.missing_information)
    assert set(categories) == {"switches_conclusion", "gates_rule", "prerequisite"}
    for c in cases:
        # the reference conclusion itself passes the offline check, and is not itself overconfident
        assert approximate_correct(c.conclusion, c.conclusion_terms, asked_again=False)[0], c.id
        assert not dangerous_assertions(c.conclusion), c.id
        assert c.legal_basis, c.id
        if c.deficient:
            assert any(m.category == "switches_conclusion" for m in c.missing_information), c.id


@pytest.mark.skipif(not LAWBENCH.exists(), reason="the LawBench source file is only on the development machine")
def test_lawbench_rows_are_the_recorded_questions(cases: list[ClarifyCase]) -> None:
    rows = json.loads(LAWBENCH.read_text(encoding="utf-8"))
    for c in cases:
        if c.source.dataset == "lawbench-2-4" and not c.source.adapted:
            assert rows[c.source.row]["question"].strip() == c.query, c.id


def test_guidelines_hold_the_four_weighted_dimensions() -> None:
    zh, en = load_guideline("zh"), load_guideline("en")
    for text in (zh, en):
        assert "0.3" in text and "0.25" in text and "0.15" in text
    assert "信息缺口识别" in zh and "澄清性问题质量" in zh and "风险控制" in zh
    assert "Gap identification" in en and "Risk control" in en
    assert GUIDELINE_FILES["zh"].name == "rater_guideline.md"


def _row(**changes: Any) -> dict[str, Any]:
    row = json.loads(CASES_FILE.read_text(encoding="utf-8").splitlines()[0])
    row.update(changes)
    return row


def _write(tmp_path: Path, rows: list[Any], raw: str | None = None) -> Path:
    path = tmp_path / "cases.jsonl"
    text = raw if raw is not None else "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("rows", "line", "field", "message"), [
    ([_row(), _row(id="b", kind="complete")], 2, None, "complete control has no missing_information"),
    ([_row(hidden_facts=[])], 1, None, "needs a non-empty 'hidden_facts'"),
    ([_row(missing_information=[{"text": "工作年限", "category": "nice_to_know"}])], 1,
     "missing_information.0.category", "Input should be"),
    ([_row(domain="tax")], 1, "domain", "Input should be"),
    ([_row(source={"dataset": "lawbench-2-4"})], 1, "source", "must record its source row"),
    ([_row(), _row()], 2, "id", "duplicate id"),
    ([_row(conclusion_terms=[])], 1, "conclusion_terms", "at least 1 item"),
    ([_row(extra_field=1)], 1, "extra_field", "unknown field"),
])
def test_bad_records_name_file_line_and_field(tmp_path: Path, rows: list[dict[str, Any]], line: int,
                                              field: str | None, message: str) -> None:
    path = _write(tmp_path, rows)
    with pytest.raises(InputError) as info:
        load_cases(path)
    assert info.value.line == line and info.value.file == str(path)
    if field:
        assert info.value.field == field
    assert message in str(info.value)


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="line 2: not valid JSON"):
        load_cases(_write(tmp_path, [], raw=json.dumps(_row(), ensure_ascii=False) + "\n{oops\n"))
    with pytest.raises(InputError, match="expected a JSON object"):
        load_cases(_write(tmp_path, [], raw="[1, 2]\n"))
    with pytest.raises(InputError, match="holds no cases"):
        load_cases(_write(tmp_path, [], raw="\n\n"))
    with pytest.raises(InputError, match="file not found"):
        load_cases(tmp_path / "missing.jsonl")
    (tmp_path / "latin1.jsonl").write_bytes("é".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        load_cases(tmp_path / "latin1.jsonl")
