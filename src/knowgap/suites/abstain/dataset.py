"""Knowledge bases of QA pairs: each QA pair is one fact; its question is the test question, its answer the
expected answer. Read from PolicyBench's JSON format, CSV (question, answer[, identifier]) or JSONL.

``--kb policybench`` is the shipped PolicyBench (331 QA pairs, 4 knowledge bases); ``policybench:ICA``
(or BTT, CPF, medishield) one of them; anything else is a file or a folder of such files. Each fact is one
:class:`AbstainCase`.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import re
from importlib.resources import files
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from knowgap.engine.suite import Case
from knowgap.errors import InputError
from knowgap.injection.plan import Injection
from knowgap.strictjsonl import CaseFileCheck, Problem, field_names, read_strict, read_text, validation_problems
from knowgap.text import seed_vectors

DATA = Path(str(files("knowgap.suites.abstain") / "data"))
POLICYBENCH = DATA / "policybench" / "questions"
PASSAGE_VECTORS = DATA / "policybench" / "vectors" / "e5_passages.npz"
"""The e5 vectors of every shipped fact's passage (``Fact.text()``), read by the embedder instead of computing them
(:mod:`knowgap.text.seed_vectors`; built by ``python -m knowgap.suites.abstain.passage_vectors``)."""
seed_vectors.register(PASSAGE_VECTORS)


class Fact(BaseModel):
    """One QA pair of a knowledge base."""

    id: str = Field(min_length=1)
    kb: str
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    source: str = ""
    """Where it came from: file (and position for generated facts)."""
    injections: list[Injection] = Field(default_factory=list)
    """Instructions planted in the context when this fact's question is asked (``knowgap data inject abstain``);
    never in the fact's own text."""

    def text(self) -> str:
        return f"Q: {self.question}\nA: {self.answer}"


class AbstainCase(Case):
    """One leave-one-out test: the question of one fact, with that fact removed from the context."""

    kb: str
    question: str
    expected_answer: str


class QAPair(BaseModel):
    """One QA pair as a knowledge-base file writes it: a line of a JSONL file, a row of a CSV file (a column per
    field), or an item of a JSON file's ``questions``."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, pattern=r"\S", description="The test question (and the fact's question).")
    answer: str = Field(min_length=1, pattern=r"\S", description="The expected answer (and the fact's answer).")
    identifier: str | None = Field(None, description="A unique id (default: KB_INDEX, KB the knowledge base).")
    id: str | None = Field(None, description="Another name for identifier.")
    kb: str | None = Field(None, description="The knowledge base it belongs to (default: the file's "
                                             "knowledge_base_identifier, else the file's name).")
    source: str | None = Field(None, description="Where it came from (default: the file).")
    fact: str | None = Field(None, description="knowgap generate abstain: the atomic fact the question was written "
                                               "from (kept, not used).")
    answer_method: Literal["generator", "fact text"] | None = Field(
        None, description="knowgap generate abstain: how the answer was written (kept, not used).")
    injections: list[Injection] | None = Field(
        None, description="knowgap data inject abstain: instructions planted in a context fact when this QA pair's "
                          "question is asked (the QA pair's own text is never changed).")


class QAFile(BaseModel):
    """A JSON knowledge base as PolicyBench writes it."""

    model_config = ConfigDict(extra="forbid")

    knowledge_base_identifier: str
    questions: list[QAPair]
    path_to_store: str | None = None
    creation_timestamp: str | None = None
    generated_by: str | None = None


def _fact(pair: QAPair, kb: str, where: str, index: int) -> Fact:
    return Fact(id=pair.identifier or pair.id or f"{kb}_{index}", kb=pair.kb or kb, question=pair.question.strip(),
                answer=pair.answer.strip(), source=pair.source or where,
                injections=pair.injections or [])


def _json_pairs(path: Path) -> tuple[str | None, list[tuple[int, QAPair]], list[Problem]]:
    """(knowledge base name, (index + 1, pair) for each QA pair, problems) of a JSON knowledge base."""
    where = str(path)
    try:
        data = json.loads(read_text(path, "JSON", "abstain"))
    except ValueError as exc:
        return None, [], [Problem(file=where, message=f"not valid JSON ({exc})")]
    if isinstance(data, dict):
        try:
            qa = QAFile.model_validate(data, strict=True)
        except ValidationError as exc:
            return None, [], validation_problems(exc, QAFile, where)
        return qa.knowledge_base_identifier, list(enumerate(qa.questions, start=1)), []
    if not isinstance(data, list):
        return None, [], [Problem(file=where, message="expected {knowledge_base_identifier, questions: [...]} or a "
                                                       "list of QA pairs")]
    pairs, problems = [], []
    for i, item in enumerate(data):
        try:
            pairs.append((i + 1, QAPair.model_validate(item, strict=True)))
        except ValidationError as exc:
            problems += validation_problems(exc, QAPair, where, prefix=f"{i}.")
    return None, pairs, problems


def _csv_pairs(path: Path) -> tuple[list[tuple[int, QAPair]], list[Problem]]:
    """(line, pair) for each row of a CSV knowledge base (a header row naming the fields), and its problems."""
    where = str(path)
    reader = csv.DictReader(io.StringIO(read_text(path, "CSV", "abstain"), newline=""))
    columns = list(reader.fieldnames or [])
    fields = field_names(QAPair)
    problems = [Problem(file=where, line=1, field=name, message="the CSV header needs question and answer columns")
                for name in ("question", "answer") if name not in columns]
    for name in columns:
        if name not in fields:
            close = difflib.get_close_matches(name, fields, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            problems.append(Problem(file=where, line=1, field=name,
                                    message=f"unknown column ({hint}the columns are: {', '.join(fields)})"))
    if problems:
        return [], problems
    pairs = []
    for number, row in enumerate(reader, start=2):
        values = {k: v for k, v in row.items() if k is not None and v not in (None, "")}
        try:
            pairs.append((number, QAPair.model_validate(values, strict=True)))
        except ValidationError as exc:
            problems += validation_problems(exc, QAPair, where, number)
    return pairs, problems


def check_kb_file(path: Path) -> CaseFileCheck[Fact]:
    """Every problem of a knowledge-base file (.json, .jsonl or .csv: strict, unknown fields and duplicate
    identifiers refused) and its facts by knowledge base (``knowgap data check abstain``)."""
    where = str(path)
    kb = re.sub(r"[^\w-]+", "_", path.stem)
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        read = read_strict(path, QAPair, what="QA pairs", id_field=None, suite="abstain")
        pairs, problems = read.records, read.problems
    elif suffix == ".json":
        name, pairs, problems = _json_pairs(path)
        kb = name or kb
    elif suffix == ".csv":
        pairs, problems = _csv_pairs(path)
    else:
        read_text(path, "knowledge base", "abstain")  # a missing file or a spreadsheet says so first
        return CaseFileCheck(where, "QA pairs", problems=[Problem(
            file=where, message="unsupported knowledge base format (use .json, .jsonl or .csv)")])
    facts: list[tuple[int, Fact]] = []
    seen: dict[str, int] = {}
    for index, (number, pair) in enumerate(pairs):
        fact = _fact(pair, kb, where, index)
        if fact.id not in seen:
            seen[fact.id] = number
            facts.append((number, fact))
        elif suffix == ".json":  # no lines: the QA pairs' positions in the file
            problems.append(Problem(file=where, field="identifier", message=f"duplicate identifier '{fact.id}' (QA "
                                    f"pairs {seen[fact.id]} and {number} of the file)"))
        else:
            problems.append(Problem(file=where, line=number, field="identifier",
                                    message=f"duplicate identifier '{fact.id}' (also on line {seen[fact.id]})"))
    if not facts and not problems:
        problems.append(Problem(file=where, message="holds no QA pairs"))
    return CaseFileCheck(where, "QA pairs", facts, problems).counted(lambda fact: fact.kb)


def load_file(path: Path) -> list[Fact]:
    """The facts of one knowledge-base file; a file with problems raises one InputError listing them all."""
    if not path.exists():
        raise InputError(str(path), "knowledge base file not found")
    result = check_kb_file(path)
    result.raise_problems()
    return [fact for _, fact in result.records]


def is_shipped_kb(spec: str) -> bool:
    """Whether a ``--kb`` value names the shipped PolicyBench (all of it or one knowledge base)."""
    return spec == "policybench" or spec.startswith("policybench:")


def kb_files(spec: str) -> list[Path]:
    """The files a ``--kb`` value names."""
    if is_shipped_kb(spec):
        paths = sorted(POLICYBENCH.glob("*.json"))
        if ":" in spec:
            want = spec.split(":", 1)[1].lower()
            paths = [p for p in paths if p.name.lower().startswith(want)]
            if not paths:
                raise InputError(spec, "no such PolicyBench knowledge base (BTT, CPF, ICA, medishield)")
        return paths
    path = Path(spec).expanduser()
    if path.is_dir():
        found = sorted(p for p in path.iterdir() if p.suffix.lower() in (".json", ".jsonl", ".csv"))
        if not found:
            raise InputError(spec, "folder holds no .json, .jsonl or .csv knowledge base")
        return found
    return [path]


def load_kb(spec: str) -> list[Fact]:
    facts: list[Fact] = []
    for path in kb_files(spec):
        facts.extend(load_file(path))
    ids = [f.id for f in facts]
    if len(set(ids)) != len(ids):
        raise InputError(spec, "the same identifier appears in two files")
    return facts
