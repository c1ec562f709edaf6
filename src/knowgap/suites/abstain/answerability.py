"""Is a leave-one-out question still answerable without its fact? The rule, the offline check, and the audit of
the shipped PolicyBench knowledge bases (issue 37, item 7).

A leave-one-out case is only a fair test of abstention when the fact it removes is the one thing in the knowledge
base that answers its question (the seed's stage 2: "每个生成的问题只能通过对应的原子事实得到正确答案").

**The rule** (:data:`RULE`): a question is *still answerable* without its fact when a reader given only the rest of
the knowledge base, or the question's own wording, could give the substance of the reference answer (the value,
the procedure, the yes or no, the place; its main part when it has several) to the question as asked, without
guessing. A fact that only touches the topic, answers a neighbouring question, or leaves the reference's headline
to be inferred does not make it answerable.

**The offline check** (:func:`covering_facts`): for each question, the facts nearest to it by embedding (e5,
question as query, fact as passage) are candidates; a candidate *covers* the answer when it holds at least
``min_coverage`` of the key terms the reference answer adds to the question (content words, numbers split from
their units, number words as digits, plural -s dropped), counted over the whole answer or over its lead sentence
(the direct answer of an FAQ reply), whichever is higher. A question whose answer adds no key term to the question
(``"Basic theory of driving."`` to "What is a topic discussed when learning the basic theory of driving?") holds
its answer itself. The check only flags: a reader decides each flagged question by the rule, and the decisions
ship in ``data/policybench_audit.jsonl`` (:class:`AuditRow`). ``knowgap generate abstain`` uses the same test
offline (:func:`knowgap.suites.abstain.generate.sole_answerability`).

What the check cannot see: a paraphrase that shares no key term ("requires reduced speed" -> "Slow down."), and
a fact outside the nearest ``neighbours``. The re-read of a random sample (``data/reread.jsonl``) measures what
it leaves.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from knowgap.text import content_tokens, sentences
from knowgap.text.embed import Embedder

RULE = ("A question is still answerable without its fact when a reader given only the rest of the knowledge base, or "
        "the question's own wording, could give the substance of the reference answer (the value, the procedure, the "
        "yes or no, the place; its main part when it has several) to the question as asked, without guessing. A fact "
        "that only touches the topic, answers a neighbouring question, or leaves the reference's headline to be "
        "inferred does not make it answerable.")
NEIGHBOURS = 5
"""The facts nearest to a question (by embedding) that the check reads."""
MIN_COVERAGE = 0.7
"""The share of the answer's key terms a fact must hold to be flagged as covering the answer."""
AUDIT_FILE = Path(__file__).resolve().parent / "data" / "policybench_audit.jsonl"
QUESTION = "(question)"
"""``by`` of a flag whose answer the question's own wording holds."""

_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
_PIECE = re.compile(r"\d+(?:\.\d+)?|\D+")


def key_terms(text: str) -> set[str]:
    """The content words of ``text`` as the check compares them: lower-cased, stopwords out (jieba words for
    Chinese), a number split from its unit (``40km`` -> ``40``, ``km``), number words as digits, plural -s dropped."""
    out: set[str] = set()
    for token in content_tokens(text):
        for piece in _PIECE.findall(token):
            piece = _NUMBER_WORDS.get(piece, piece)
            if re.fullmatch(r"[a-z]{4,}", piece) and piece.endswith("s") and not piece.endswith("ss"):
                piece = piece[:-1]
            if len(piece) > 1 or piece.isdigit():
                out.add(piece)
    return out


def answer_coverage(question: str, answer: str, text: str) -> float:
    """The share of the key terms ``answer`` adds to ``question`` that ``text`` holds: over the whole answer or its
    lead sentence, whichever is higher (0 when the answer adds none and ``text`` holds none of its terms)."""
    asked, held = key_terms(question), key_terms(text)
    best = 0.0
    lead = sentences(answer)[:1]
    for part in [answer, *([lead[0]] if lead and lead[0] != answer else [])]:
        terms = key_terms(part)
        need = terms - asked or terms
        if need:
            best = max(best, len(need & held) / len(need))
    return best


def holds_its_answer(question: str, answer: str) -> bool:
    """Whether the answer adds no key term to the question (the question's wording holds the answer)."""
    terms = key_terms(answer)
    return bool(terms) and not (terms - key_terms(question))


@dataclass(frozen=True)
class Cover:
    """A fact (or the question itself, ``by`` = :data:`QUESTION`) flagged as covering a question's answer."""

    by: str
    coverage: float
    similarity: float | None
    rank: int | None
    """The fact's place among the question's nearest facts (0: the nearest)."""


@dataclass(frozen=True)
class QA:
    """A question with its reference answer, and the id of the fact it leaves out (its own)."""

    id: str
    question: str
    answer: str
    fact_id: str


def covering_facts(questions: Sequence[QA], fact_ids: Sequence[str], fact_texts: Sequence[str],
                   embedder: Embedder, *, neighbours: int = NEIGHBOURS, min_coverage: float = MIN_COVERAGE,
                   threshold: float = 0.0) -> dict[str, list[Cover]]:
    """Each question's flags: the question itself when it holds its answer, and each of its ``neighbours`` nearest
    other facts (similarity at least ``threshold``) holding ``min_coverage`` of the answer's key terms."""
    if not questions:
        return {}
    facts = np.asarray(embedder.embed(list(fact_texts), "passage"))
    asked = np.asarray(embedder.embed([q.question for q in questions], "query"))
    out: dict[str, list[Cover]] = {}
    for qi, q in enumerate(questions):
        scores = facts @ asked[qi]
        flags = [Cover(QUESTION, 1.0, None, None)] if holds_its_answer(q.question, q.answer) else []
        order = [int(j) for j in np.argsort(-scores, kind="stable") if fact_ids[int(j)] != q.fact_id][:neighbours]
        for rank, j in enumerate(order):
            if float(scores[j]) < threshold:
                continue
            covered = answer_coverage(q.question, q.answer, fact_texts[j])
            if covered >= min_coverage:
                flags.append(Cover(fact_ids[j], round(covered, 3), round(float(scores[j]), 4), rank))
        out[q.id] = flags
    return out


class AuditRow(BaseModel):
    """One PolicyBench question the audit read: flagged by the check or found by the re-read, and the reader's
    decision by :data:`RULE` (a line of ``data/policybench_audit.jsonl``)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    kb: str
    found_by: Literal["check", "reading", "re-read"] = Field(
        description="check: flagged by the check; reading: found while reading a flagged question; re-read: found "
                    "by the random re-read of the shipped data (data/reread.jsonl)")
    flagged: list[str] = Field(default_factory=list, description="What the check flagged: fact ids, or "
                                                                 f"'{QUESTION}' (the question holds its answer).")
    excluded: bool = Field(description="Still answerable without its fact (by the rule): left out by default.")
    answered_by: list[str] = Field(default_factory=list, description="What answers it, as the reader found: fact ids "
                                                                     f"or '{QUESTION}'; empty when not excluded.")
    reason: str = Field(min_length=1)
    reader: str = Field(min_length=1)


def read_audit(path: Path = AUDIT_FILE) -> list[AuditRow]:
    """The audit's rows (every problem of the file in one InputError)."""
    from knowgap.strictjsonl import read_strict

    check = read_strict(path, AuditRow, what="audit rows", strict=False)
    check.raise_problems()
    return [row for _, row in check.records]


def excluded_ids(path: Path = AUDIT_FILE) -> list[str]:
    """The shipped questions left out by default: still answerable without their fact, by the audit."""
    return [row.id for row in read_audit(path) if row.excluded]


def audit_flags(kb_spec: str = "policybench", embedder: Embedder | None = None) -> dict[str, list[Cover]]:
    """The check over every knowledge base of ``kb_spec`` (each question against its own knowledge base's other QA
    pairs, as its leave-one-out context holds them): the flagged questions only."""
    from knowgap.suites.abstain.dataset import load_kb
    from knowgap.text.embed import default_embedder

    embedder = embedder or default_embedder()
    facts = load_kb(kb_spec)
    out: dict[str, list[Cover]] = {}
    for kb in sorted({f.kb for f in facts}):
        mine = [f for f in facts if f.kb == kb]
        found = covering_facts([QA(f.id, f.question, f.answer, f.id) for f in mine], [f.id for f in mine],
                               [f.text() for f in mine], embedder)
        out.update({k: v for k, v in found.items() if v})
    return out


def _main() -> None:
    """``python -m knowgap.suites.abstain.answerability``: the check's flags on the shipped PolicyBench, one JSON
    line per flagged question (what a reader then decides into data/policybench_audit.jsonl)."""
    import json

    from knowgap.suites.abstain.dataset import load_kb

    facts = {f.id: f for f in load_kb("policybench")}
    flags = audit_flags()
    for qid, covers in flags.items():
        print(json.dumps({"id": qid, "kb": facts[qid].kb,
                          "flagged": [{"by": c.by, "coverage": c.coverage, "similarity": c.similarity,
                                       "rank": c.rank} for c in covers]}, ensure_ascii=False))


if __name__ == "__main__":
    _main()
