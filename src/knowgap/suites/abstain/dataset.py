"""Knowledge bases of QA pairs: each QA pair is one fact; its question is the test question, its answer the
expected answer. Read from PolicyBench's JSON format, CSV (question, answer[, identifier]) or JSONL.

``--kb policybench`` is the shipped PolicyBench (331 QA pairs, 4 knowledge bases); ``policybench:ICA``
(or BTT, CPF, medishield) one of them; anything else is a file or a folder of such files. Each fact is one
:class:`AbstainCase`.
"""

from __future__ import annotations

import csv
import json
import re
from importlib.resources import files
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from knowgap.engine.suite import Case
from knowgap.errors import InputError
from knowgap.jsonl import read_objects

DATA = Path(str(files("knowgap.suites.abstain") / "data"))
POLICYBENCH = DATA / "policybench" / "questions"


class Fact(BaseModel):
    """One QA pair of a knowledge base."""

    id: str = Field(min_length=1)
    kb: str
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    source: str = ""
    """Where it came from: file (and position for generated facts)."""

    def text(self) -> str:
        return f"Q: {self.question}\nA: {self.answer}"


class AbstainCase(Case):
    """One leave-one-out test: the question of one fact, with that fact removed from the context."""

    kb: str
    question: str
    expected_answer: str


class QAFile(BaseModel):
    knowledge_base_identifier: str
    questions: list[dict[str, Any]]


def _fact(row: dict[str, Any], kb: str, where: str, line: int, index: int) -> Fact:
    for name in ("question", "answer"):
        if not isinstance(row.get(name), str) or not row[name].strip():
            raise InputError(where, "expected a non-empty string", line=line, field=name)
    ident = str(row.get("identifier") or row.get("id") or f"{kb}_{index}")
    try:
        return Fact(id=ident, kb=str(row.get("kb") or kb), question=row["question"].strip(),
                    answer=row["answer"].strip(), source=str(row.get("source") or where))
    except ValidationError as exc:
        raise InputError.from_validation(where, exc, line=line) from None


def load_file(path: Path) -> list[Fact]:
    where = str(path)
    if not path.exists():
        raise InputError(where, "knowledge base file not found")
    kb = re.sub(r"[^\w-]+", "_", path.stem)
    suffix = path.suffix.lower()
    facts: list[Fact] = []
    if suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"))
        except ValueError as exc:
            raise InputError(where, f"not valid JSON ({exc})") from None
        if isinstance(data, dict):
            try:
                qa = QAFile.model_validate(data)
            except ValidationError as exc:
                raise InputError.from_validation(where, exc) from None
            kb, items = qa.knowledge_base_identifier, qa.questions
        elif isinstance(data, list):
            items = data
        else:
            raise InputError(where, "expected {knowledge_base_identifier, questions: [...]} or a list of QA pairs")
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise InputError(where, f"question {i} is not an object", field=f"questions.{i}")
            facts.append(_fact(item, kb, where, i + 1, i))
    elif suffix == ".jsonl":
        for number, row in read_objects(path, what="QA pairs"):
            facts.append(_fact(row, kb, where, number, len(facts)))
    elif suffix == ".csv":
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            missing = {"question", "answer"} - set(reader.fieldnames or [])
            if missing:
                raise InputError(where, "CSV header needs question and answer columns", line=1,
                                 field=sorted(missing)[0])
            for number, row in enumerate(reader, start=2):
                facts.append(_fact(dict(row), kb, where, number, len(facts)))
    else:
        raise InputError(where, "unsupported knowledge base format (use .json, .jsonl or .csv)")
    if not facts:
        raise InputError(where, "holds no QA pairs")
    ids = [f.id for f in facts]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise InputError(where, f"duplicate identifiers {dupes[:5]}", field="identifier")
    return facts


def kb_files(spec: str) -> list[Path]:
    """The files a ``--kb`` value names."""
    if spec == "policybench" or spec.startswith("policybench:"):
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
