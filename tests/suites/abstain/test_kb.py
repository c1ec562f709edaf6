from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.suites.abstain.dataset import load_kb
from knowgap.suites.abstain.retrieval import leave_one_out


def test_policybench_ships_331_qa_pairs_in_4_kbs() -> None:
    facts = load_kb("policybench")
    assert len(facts) == 331
    assert {f.kb: sum(g.kb == f.kb for g in facts) for f in facts} == {
        "BTT": 55, "CPF_111": 112, "ICA_134": 135, "medishield": 29}
    assert len(load_kb("policybench:medishield")) == 29


def test_csv_and_jsonl(tmp_path: Path) -> None:
    csv = tmp_path / "faq.csv"
    csv.write_text("question,answer\nWhat is X?,X is 1.\n什么是Y？,Y是2。\n", encoding="utf-8")
    facts = load_kb(str(csv))
    assert [f.id for f in facts] == ["faq_0", "faq_1"] and facts[1].answer == "Y是2。"
    jl = tmp_path / "kb.jsonl"
    jl.write_text(json.dumps({"question": "Q?", "answer": "A.", "identifier": "a1"}) + "\n", encoding="utf-8")
    assert load_kb(str(jl))[0].id == "a1"


def test_leave_one_out_stays_in_the_kb_and_drops_the_fact() -> None:
    facts = load_kb("policybench")
    held = next(f for f in facts if f.id == "medishield_3")
    rest = leave_one_out(facts, held)
    assert len(rest) == 28 and held not in rest and {f.kb for f in rest} == {"medishield"}


@pytest.mark.parametrize(("content", "suffix", "message"), [
    ('{"question": "Q?"}\n', ".jsonl", "line 1, field 'answer'"),
    ("not json\n", ".jsonl", "line 1: not valid JSON"),
    ("question,text\nQ,A\n", ".csv", "field 'answer'"),
    ('{"knowledge_base_identifier": "x"}', ".json", "field 'questions'"),
    ('{"question": "Q", "answer": "A", "id": "d"}\n{"question": "Q2", "answer": "B", "id": "d"}\n', ".jsonl",
     "duplicate identifier 'd' (also on line 1)"),
    ("q", ".txt", "unsupported knowledge base format"),
])
def test_bad_inputs_name_file_line_field(tmp_path: Path, content: str, suffix: str, message: str) -> None:
    path = tmp_path / f"bad{suffix}"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_kb(str(path))
    assert str(path) in str(info.value) and message in str(info.value)


def test_unknown_policybench_kb() -> None:
    with pytest.raises(InputError, match="no such PolicyBench"):
        load_kb("policybench:NOPE")
