"""`knowgap generate abstain`: each stage's artifact, the diversity filter's decisions, sole-answerability,
offline on a small document folder (zh + en), and on the shipped MediShield pages."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from knowgap.errors import InputError
from knowgap.suites.abstain.dataset import DATA, load_kb
from knowgap.suites.abstain.generate import (
    GeneratedQuestion,
    GenerateOptions,
    diversity_filter,
    generate_kb,
    is_claim,
    split_facts,
    template_question,
)
from tests.helpers import scripted


class BagEmbedder:
    """A deterministic stand-in embedder: bag of lower-cased words, hashed into 64 dimensions."""

    name = "bag"

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        rows = np.zeros((len(texts), 64), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().replace("?", " ").replace(".", " ").split():
                rows[i, sum(map(ord, w)) % 64] += 1
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


def test_is_claim_drops_headings_fragments_and_table_rows() -> None:
    assert is_claim("No one will lose MediShield Life coverage due to an inability to pay premiums.")
    assert is_claim("住院自付额每年为1500元。")
    for junk in ("Better Protection", "Seven", "Psychiatric", "86 – 88 $2,785", "What is covered?", "保障范围"):
        assert not is_claim(junk), junk


def test_split_facts_zh_en() -> None:
    text = ("3.2 How much is the premium?\nThe premium is paid yearly from MediSave; the deductible is $2,000 "
            "for class C wards.\n12\n保费每年从保健储蓄账户中扣除。住院的自付额为2000元。")
    assert split_facts(text) == ["The premium is paid yearly from MediSave",
                                 "the deductible is $2,000 for class C wards.",
                                 "保费每年从保健储蓄账户中扣除。", "住院的自付额为2000元。"]


def test_template_questions() -> None:
    # a value: a fill-in question about it, which only this fact answers
    assert template_question("The deductible is $2,000 for class C wards.") == \
        'According to the documents, what value fills the blank: "The deductible is ____ for class C wards."?'
    assert template_question("Hospitalisations in Ward B1 are covered.").startswith("What do the documents say")
    assert template_question("住院的自付额为2000元。") == \
        "根据资料，以下句子中“____”处应是什么：“住院的自付额为____。”？"
    # a clean subject: a question about it; a pronoun or a dangling subject: how the statement continues
    assert template_question("The deductible applies to every claim.") == \
        "What do the documents say about the deductible?"
    assert template_question("MediShield Life covers large hospital bills.") == \
        "What do the documents say about MediShield Life?"
    assert template_question("They are designed to cover subsidised bills in public hospitals.").startswith(
        'According to the documents, how does this statement continue: "They are designed to cover')
    assert template_question("This information booklet contains a summary of the key features of the scheme.") \
        == 'According to the documents, how does this statement continue: "This information booklet contains a ' \
           'summary ..."?'
    assert template_question("投保人应当如实告知。").startswith("关于“投保人应当如实告知")


def test_diversity_filter_reports_why() -> None:
    qs = [GeneratedQuestion(id=f"q{i}", fact_id=f"f{i}", question=t, answer="a", source="s", method="template")
          for i, t in enumerate(["What is the premium for MediShield Life?", "What is the MediShield Life premium?",
                                 "Who administers the scheme?"])]
    decisions = diversity_filter(qs, "both", 0.7, 0.99, BagEmbedder())
    assert [d.kept for d in decisions] == [True, False, True]
    assert decisions[1].removed_by == "keyword" and decisions[1].similar_to == "q0" and decisions[1].score >= 0.7
    semantic = diversity_filter(qs, "semantic", 0.7, 0.9, BagEmbedder())
    assert semantic[1].removed_by == "semantic"


def test_offline_pipeline_writes_every_stage(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("The kettle warranty lasts 27 months from purchase. Library cards cost 14 dollars "
                                "per year for adults.\n", encoding="utf-8")
    (docs / "b.html").write_text("<html><body><p>The museum opens at 11:00 on Sundays for all visitors.</p>"
                                 "<script>var x = 1;</script></body></html>", encoding="utf-8")
    faq = [{"question": "押金何时退还？", "answer": "押金在验收合格后7个工作日内退还给租客。"}]
    (docs / "c.json").write_text(json.dumps(faq), encoding="utf-8")
    out = tmp_path / "out"
    summary = generate_kb(GenerateOptions(docs=str(docs), out=str(out), offline=True), embedder=BagEmbedder())
    for name in ("documents.jsonl", "facts.jsonl", "questions_raw.jsonl", "filter_decisions.jsonl",
                 "answerability.jsonl", "questions.json", "summary.json"):
        assert (out / name).exists(), name
    facts = [json.loads(line) for line in (out / "facts.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [f["text"] for f in facts][:3] == ["The kettle warranty lasts 27 months from purchase.",
                                              "Library cards cost 14 dollars per year for adults.",
                                              "The museum opens at 11:00 on Sundays for all visitors."]
    assert facts[0]["source"].endswith("a.txt") and facts[1]["position"] == 1
    assert facts[3]["source"].endswith("c.json#0")
    assert summary.facts == 4 and summary.kept + summary.removed_keyword + summary.removed_semantic \
        + summary.removed_not_sole == 4
    kb = load_kb(str(out / "questions.json"))  # the next stage reads it as a knowledge base
    assert len(kb) == summary.kept and kb[0].answer == "The kettle warranty lasts 27 months from purchase."
    rows = json.loads((out / "questions.json").read_text(encoding="utf-8"))["questions"]
    assert {r["answer_method"] for r in rows} == {"fact text"}  # offline: the expected answer is the fact text


def test_bad_docs_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="must be a folder"):
        generate_kb(GenerateOptions(docs=str(tmp_path / "nope"), out=str(tmp_path / "o"), offline=True))
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no documents"):
        generate_kb(GenerateOptions(docs=str(tmp_path / "empty"), out=str(tmp_path / "o"), offline=True))


@pytest.mark.slow
def test_offline_on_the_shipped_medishield_pages(tmp_path: Path) -> None:
    docs = DATA / "policybench" / "sources" / "MediShield"
    summary = generate_kb(GenerateOptions(docs=str(docs), out=str(tmp_path / "kb"), offline=True, max_facts=40))
    assert summary.documents >= 30 and summary.facts == 40 and 0 < summary.kept <= 40
    assert summary.removed_keyword + summary.removed_semantic + summary.removed_not_sole == 40 - summary.kept


def test_generator_path_through_the_model_layer(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Kettle\nThe Aurora kettle has a warranty of 27 months, and library cards cost "
                               "14 dollars.\n", encoding="utf-8")
    found = '{"facts": ["The Aurora kettle warranty lasts 27 months.", "Library cards cost 14 dollars."]}'
    generator = scripted(tmp_path, f"```json\n{found}\n```", "How long is the Aurora kettle warranty?",
                         "Answer: The warranty on the Aurora kettle is 27 months.", "What does a library card cost?",
                         "")
    out = tmp_path / "out"
    seen: list[tuple[str, int, int]] = []
    summary = generate_kb(GenerateOptions(docs=str(docs), out=str(out), generator=generator),
                          embedder=BagEmbedder(), progress=lambda *step: seen.append(step))
    # each model stage advances its progress bar: one chunk, two questions, two sole-answerability checks
    assert seen == [("facts (generator, per chunk)", 1, 1), ("questions (generator)", 1, 2),
                    ("questions (generator)", 2, 2), ("sole-answerability (judge)", 1, 2),
                    ("sole-answerability (judge)", 2, 2)]
    facts = [json.loads(line) for line in (out / "facts.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(f["text"], f["method"]) for f in facts] == [
        ("The Aurora kettle warranty lasts 27 months.", "generator"), ("Library cards cost 14 dollars.", "generator")]
    kb = load_kb(str(out / "questions.json"))
    assert [q.question for q in kb] == ["How long is the Aurora kettle warranty?", "What does a library card cost?"]
    # the expected answer is the generator's answer to the question (seed stage 2), not the fact text; an empty
    # reply falls back to the fact text, and the knowledge base says which is which
    assert [q.answer for q in kb] == ["The warranty on the Aurora kettle is 27 months.",
                                      "Library cards cost 14 dollars."]
    rows = json.loads((out / "questions.json").read_text(encoding="utf-8"))["questions"]
    assert [(r["fact"], r["answer_method"]) for r in rows] == [
        ("The Aurora kettle warranty lasts 27 months.", "generator"), ("Library cards cost 14 dollars.", "fact text")]
    assert summary.fact_method == "generator" and summary.model_calls == 5
