"""The validity cards of the clarify suite's two citation judges (issue 37: a card states the claim it validates in
its metrics' own words).

``citation-check`` (:data:`CITATION_CHECK`): **extracts the statute articles a final answer cites** (statute and
article number), which ``citation_rate`` counts, and ``nonexistent_citation_rate`` compares with the statute's last
article (arithmetic on what was extracted). Measured on hand-labelled answers
(``judges/data/labelled/citations.jsonl``; provenance and rule in its SOURCES.md): each labelled citation is a
positive item (right when the check read that article under that statute), each other article number the text
mentions ("第N条", "Article N": a contract's clause, a list heading, an article with no statute named) a negative
item (right when the check read no citation with that number). The labels say nothing about whether a citation is
right for a case, and the card claims nothing about it.

``citation-basis`` (:data:`CITATION_BASIS`): whether an article outside the case's reference basis (its
``legal_basis`` and the articles its reference answers cite) is one a lawyer's answer to the case would not rest
on, which ``outside_basis_citation_rate`` and ``citation_basis_share`` assume. Nothing has measured that yet: its
labelled set (:data:`BASIS_LABELS_FILE`: real replies of at least two models to the clarify cases, each cited
article labelled ``outside`` by rule basis-1 of docs/clarify.md before the check runs on them) does not exist, so
the judge has no card and its two metrics are screens; :func:`validate_citation_basis` measures it once the file
is there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from knowgap.errors import InputError, KnowgapError
from knowgap.jsonl import read_models
from knowgap.judges.cards import Labelling, ValidityCard, binary_card, sha256_files
from knowgap.judges.judge import Judge
from knowgap.judges.validation import stratified_sample
from knowgap.suites.clarify.citations import (
    BASIS_VERSION,
    VERSION,
    check_citations,
    mentioned_numbers,
    read_citations,
)

LABELS_FILE = Path(str(files("knowgap.judges") / "data" / "labelled" / "citations.jsonl"))
DATASET = "knowgap judges/data/labelled/citations.jsonl"
BASIS_LABELS_FILE = Path(str(files("knowgap.judges") / "data" / "labelled" / "citation_basis.jsonl"))
REAL_WRITER = "ChatGPT (Lawyer LLaMA's multi-turn consultations)"
"""Who wrote the real answers of the labelled set: Lawyer LLaMA's lawyer turns are ChatGPT-generated (its card
says which version it does not know)."""
CHECK_CLAIM = ("extracts the statute articles a final answer cites: the statute and the article number "
               "(citation_rate: answers citing at least one; nonexistent_citation_rate: answers citing a number "
               "beyond the statute's last article in data/statutes.json, compared once extracted)")
BASIS_CLAIM = ("a cited article outside the case's reference basis is one a lawyer's answer to the case would not "
               "rest on (outside_basis_citation_rate, citation_basis_share)")


class LabelledCitation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    statute: str = Field(description="statute key of data/statutes.json, or other:NAME")
    article: int = Field(ge=0)
    wrong: bool = Field(description="citation-check-1's label: not among the answer's basis articles, or beyond the "
                                    "statute's last article (the card of citation-check-2 does not use it)")


class CitedAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    source: str
    basis: list[str] = Field(min_length=1)
    text: str = Field(min_length=1)
    citations: list[LabelledCitation] = Field(min_length=1)

    @property
    def language(self) -> str:
        return "en" if "(en)" in self.source else "zh"

    @property
    def writer(self) -> str | None:
        """The model that wrote a real answer; None for one written for knowgap."""
        return None if self.source.startswith("written") else REAL_WRITER


def load_cited_answers(path: Path = LABELS_FILE) -> list[CitedAnswer]:
    return [item for _, item in read_models(path, CitedAnswer, what="labelled citations")]


def validate_citation_check(data_dir: Path | None = None, limit: int | None = None, judge_model: str | None = None,
                            progress: Callable[[int, int], None] | None = None) -> ValidityCard:
    """Agreement of the check's reading with the labels. ``data_dir`` and ``judge_model`` are not used (the set
    ships with knowgap, the judge is offline); ``limit``: a seeded sample of N items, equal between citations and
    mentions that are not citations as far as the set allows."""
    answers = load_cited_answers()
    items: list[tuple[CitedAnswer, str | None, int]] = []  # (answer, statute or None for a non-citation, number)
    for a in answers:
        labelled = {(c.statute, c.article) for c in a.citations}
        items += [(a, statute, article) for statute, article in sorted(labelled)]
        items += [(a, None, n) for n in sorted(mentioned_numbers(a.text) - {n for _, n in labelled})]
    picked = stratified_sample(items, [statute is not None for _, statute, _ in items], limit)
    read: dict[str, set[tuple[str, int]]] = {}
    verdicts: list[bool | None] = []
    labels: list[bool] = []
    start = time.perf_counter()
    for done, i in enumerate(picked, start=1):
        answer, statute, number = items[i]
        if answer.id not in read:
            read[answer.id] = {(c.statute, c.article) for c in read_citations(answer.text)}
        found = read[answer.id]
        verdicts.append((statute, number) in found if statute is not None else any(n == number for _, n in found))
        labels.append(statute is not None)
        if progress:
            progress(done, len(picked))
    seconds = time.perf_counter() - start
    chosen = [items[i][0] for i in picked]
    spurious = sum(len(read[a.id] - {(c.statute, c.article) for c in a.citations}) for a in answers if a.id in read)
    return binary_card(
        "citation-check", VERSION, verdicts, labels, positive="cites the article (read under its statute)",
        dataset=DATASET, dataset_sha256=sha256_files([LABELS_FILE]), seconds=seconds, claim=CHECK_CLAIM,
        item_languages=[a.language for a in chosen], writers=[a.writer for a in chosen],
        replies_how="lawyer turns of Lawyer LLaMA's multi-turn consultations that cite an article (real, "
                    "ChatGPT-written) and short zh/en answers written for knowgap",
        labelling=Labelling(rule="src/knowgap/judges/data/labelled/SOURCES.md, citations[]: every statute article "
                                 "the answer cites; a contract's clause and an article with no statute named are "
                                 "not citations",
                            by="one annotator (the project), no second pass; the real answers labelled from the "
                               "turns as printed before the check ran on them, the written ones written after the "
                               "reading rules (they test the rules, not measure them independently)"),
        extra={"spurious_citations": float(spurious), "answers": float(len(read))},
        method=f"{len(picked)} items of {len(read)} answers: each labelled citation (positive) and each other "
               "article number the answer mentions (negative, '第N条' or 'Article N' read by the check's own "
               "patterns, so a form the patterns miss is no item)",
        notes="measures extraction only: whether a citation is right for a case is not labelled here "
              "(citation-basis); nonexistent articles are the statute table's last-article numbers, not measured")


# --- citation-basis ---------------------------------------------------------------------------------------------

class BasisLabel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    statute: str = Field(description="statute key of data/statutes.json, or other:NAME")
    article: int = Field(ge=0)
    outside: bool = Field(description="rule basis-1 (docs/clarify.md): the article is not one a lawyer's answer to "
                                      "this case rests on (its conclusion's rule, amount or referred-to article, or "
                                      "a branch its conditional answer discusses); a nonexistent article is outside")


class BasisReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    case_id: str = Field(description="a case id of the shipped clarify cases")
    writer: str = Field(min_length=1, description="the model spec that wrote the reply")
    reply: str = Field(min_length=1)
    citations: list[BasisLabel] = Field(min_length=1)
    reason: str = ""


def validate_citation_basis(data_dir: Path | None = None, limit: int | None = None, judge_model: str | None = None,
                            progress: Callable[[int, int], None] | None = None, *,
                            labels_file: Path = BASIS_LABELS_FILE) -> ValidityCard:
    """Agreement of "outside the case's reference basis" with "a lawyer's answer would not rest on it" on labelled
    real replies (``labels_file``; ``data_dir`` and ``judge_model`` are not used). A labelled citation the check
    did not read has no verdict (counted wrong). No labelled set is a :class:`KnowgapError` saying what it needs."""
    from knowgap.suites.clarify.dataset import CASES_FILE, load_cases

    if not labels_file.is_file():
        raise KnowgapError(
            f"citation-basis has no labelled set yet ({labels_file} does not exist): it needs real replies of at "
            "least two models to the clarify cases, each cited article labelled 'outside' by rule basis-1 "
            "(docs/clarify.md) before the check runs on them; until then outside_basis_citation_rate and "
            "citation_basis_share are screens")
    cases = {c.id: c for c in load_cases(CASES_FILE)}
    replies = read_models(labels_file, BasisReply, what="labelled replies")
    for line, r in replies:
        if r.case_id not in cases:
            raise InputError(str(labels_file), f"unknown clarify case '{r.case_id}'", line=line, field="case_id")
    items = [(r, c) for _, r in replies for c in r.citations]
    picked = stratified_sample(items, [c.outside for _, c in items], limit)
    checked: dict[str, dict[tuple[str, int], bool]] = {}
    verdicts: list[bool | None] = []
    start = time.perf_counter()
    for done, i in enumerate(picked, start=1):
        reply, label = items[i]
        if reply.id not in checked:
            case = cases[reply.case_id]
            checked[reply.id] = {(c.citation.statute, c.citation.article): not c.in_basis for c in check_citations(
                read_citations(reply.reply), [*case.legal_basis, case.conclusion, case.conditional_answer])}
        verdicts.append(checked[reply.id].get((label.statute, label.article)))
        if progress:
            progress(done, len(picked))
    chosen = [items[i] for i in picked]
    return binary_card(
        "citation-basis", BASIS_VERSION, verdicts, [c.outside for _, c in chosen],
        positive="outside the case's reference basis", dataset=f"knowgap judges/data/labelled/{labels_file.name}",
        dataset_sha256=sha256_files([labels_file]), seconds=time.perf_counter() - start, claim=BASIS_CLAIM,
        item_languages=[cases[r.case_id].lang for r, _ in chosen], writers=[r.writer for r, _ in chosen],
        replies_how="real replies to the clarify cases",
        labelling=Labelling(rule="docs/clarify.md, rule basis-1 (label 'outside')",
                            by="see judges/data/labelled/SOURCES.md (citation_basis.jsonl)"),
        method=f"{len(picked)} labelled citations of {len(checked)} replies")


CITATION_CHECK = Judge(
    name="citation-check", kind="offline",
    decides="which statute articles does an answer cite (statute and article number), and does each number exist "
            "in its statute?", current=VERSION, positive="cites the article (read under its statute)",
    labelled_set="judges/data/labelled/citations.jsonl (Lawyer LLaMA lawyer turns + written answers, hand-labelled)",
    validator=validate_citation_check, needs_data=False)
CITATION_BASIS = Judge(
    name="citation-basis", kind="offline",
    decides="is each cited article outside the case's reference basis, i.e. one a lawyer's answer would not rest "
            "on?", current=BASIS_VERSION, positive="outside the case's reference basis",
    labelled_set="judges/data/labelled/citation_basis.jsonl (real replies labelled by rule basis-1: not made yet)",
    validator=validate_citation_basis, needs_data=False)
