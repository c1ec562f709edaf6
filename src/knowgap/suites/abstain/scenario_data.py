"""The questions of ``knowgap run abstain --scenario unknowable|false-premise|unanswerable-context``.

Each question either should be declined (unknowable, a false premise, not answerable from the paragraph given)
or answered (with reference answers). Four formats are read, each strictly (every problem named by file, line or
record, and field):

- knowgap's own JSONL, one :class:`ScenarioItem` per line (the shipped files, ``data/scenarios/*.jsonl``);
- SelfAware's JSON (``{"example": [{question_id, question, answer, answerable, source}...]}``), for unknowable;
- FalseQA's CSV (``question,answer,label``; label 1 = false premise; answer a Python list of texts or one
  text), for false-premise;
- SQuAD 2.0's JSON (``{"data": [{"title", "paragraphs": [{"context", "qas": [...]}]}]}``), for
  unanswerable-context (each question gets its paragraph as context).
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from knowgap.engine.suite import Case
from knowgap.errors import InputError
from knowgap.strictjsonl import CaseFileCheck, Problem, read_strict, read_text, validation_problems

SCENARIOS = ("loo", "unknowable", "false-premise", "unanswerable-context")
"""``--scenario`` values: ``loo`` is the leave-one-out knowledge base (the suite's default, unchanged)."""
QUESTION_SCENARIOS = SCENARIOS[1:]
SHIPPED = Path(str(files("knowgap.suites.abstain") / "data" / "scenarios"))
NATIVE_FORMATS = {"unknowable": "SelfAware JSON (.json)", "false-premise": "FalseQA CSV (.csv)",
                  "unanswerable-context": "SQuAD 2.0 JSON (.json)"}
_CJK = re.compile(r"[\u4e00-\u9fff]")
Row = TypeVar("Row", bound=BaseModel)


def shipped_file(scenario: str) -> Path:
    return SHIPPED / f"{scenario}.jsonl"


def guess_lang(text: str) -> Literal["zh", "en"]:
    """``zh`` when the text holds a Chinese character, else ``en``."""
    return "zh" if _CJK.search(text) else "en"


class ScenarioItem(BaseModel):
    """One question of a scenario file (knowgap's JSONL: one per line)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"\S", description="A unique id.")
    question: str = Field(min_length=1, pattern=r"\S", description="The question the target gets.")
    should_abstain: bool = Field(description="true: the right reply declines (unknowable, false premise, not in "
                                             "the context); false: the right reply answers.")
    answers: list[str] = Field(default_factory=list, description="Reference answers (needed when should_abstain "
                                                                  "is false; for a false premise, optional "
                                                                  "corrections, kept, not scored).")
    context: str | None = Field(None, description="unanswerable-context: the paragraph the target gets.")
    lang: Literal["zh", "en"] = Field(description="The question's language (zh gets the Chinese prompt).")
    group: str | None = Field(None, description="Cluster key for the CIs (default: the id); questions on one "
                                                "paragraph share it.")
    source: str | None = Field(None, description="Where the question came from.")


class ScenarioCase(Case):
    """One scenario question, as the abstain suite runs it."""

    scenario: str
    lang: Literal["zh", "en"]
    question: str
    should_abstain: bool
    answers: list[str] = Field(default_factory=list)
    context: str | None = None
    group: str
    source: str = ""


def _rule(scenario: str) -> Any:
    def rule(item: ScenarioItem) -> list[tuple[str | None, str]]:
        found: list[tuple[str | None, str]] = []
        if not item.should_abstain and not [a for a in item.answers if a.strip()]:
            found.append(("answers", "an answerable question (should_abstain false) needs at least one reference "
                                     "answer"))
        if scenario == "unanswerable-context" and not (item.context or "").strip():
            found.append(("context", "unanswerable-context questions need the paragraph (context)"))
        if scenario != "unanswerable-context" and item.context is not None:
            found.append(("context", f"{scenario} questions take no context (only unanswerable-context does)"))
        return found
    return rule


def _check_jsonl(scenario: str, path: Path) -> CaseFileCheck[ScenarioItem]:
    read = read_strict(path, ScenarioItem, what="questions", id_field="id", suite="abstain")
    return read.with_rule(_rule(scenario))


def _json_rows(path: Path, what: str, key: str, shape: str, model: type[Row],
               problems: list[Problem]) -> Iterator[tuple[int, Row]]:
    """Each element of the list under ``key`` of the JSON object in ``path`` (``shape``: that object, as its
    format writes it) with its index, validated strictly as ``model``; every problem (the file is not JSON or not
    that object; an element that does not validate, named ``KEY.INDEX.FIELD``) goes to ``problems``, in order."""
    try:
        data = json.loads(read_text(path, what, "abstain"))
    except ValueError as exc:
        problems.append(Problem(file=str(path), message=f"not valid JSON ({exc})"))
        return
    if not isinstance(data, dict) or not isinstance(data.get(key), list):
        problems.append(Problem(file=str(path), field=key, message=f"expected {shape}"))
        return
    for i, raw in enumerate(data[key]):
        try:
            row = model.model_validate(raw, strict=True)
        except ValidationError as exc:
            problems += validation_problems(exc, model, str(path), prefix=f"{key}.{i}.")
            continue
        yield i, row


class _SelfAwareRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question_id: int
    question: str = Field(min_length=1, pattern=r"\S")
    answer: list[str] | None
    answerable: bool
    source: str


def _check_selfaware(path: Path) -> CaseFileCheck[ScenarioItem]:
    where = str(path)
    problems: list[Problem] = []
    items: list[tuple[int, ScenarioItem]] = []
    for i, r in _json_rows(path, "SelfAware JSON", "example", "SelfAware's {\"example\": [{question_id, question, "
                           "answer, answerable, source}, ...]}", _SelfAwareRow, problems):
        if r.answerable and not r.answer:
            problems.append(Problem(file=where, field=f"example.{i}.answer",
                                    message="an answerable question needs its answers"))
            continue
        items.append((i + 1, ScenarioItem(id=f"selfaware-{r.question_id}", question=r.question.strip(),
                                          should_abstain=not r.answerable, answers=r.answer or [],
                                          context=None, lang=guess_lang(r.question), group=None,
                                          source=f"SelfAware:{r.source}")))
    return CaseFileCheck(where, "questions", items, problems)


def _falseqa_answers(cell: str) -> list[str] | None:
    """FalseQA's answer cell: a Python list of texts (``['...', '...']``), or one plain text; None when neither."""
    text = cell.strip()
    if not text:
        return None
    if not text.startswith("["):
        return [text]
    try:
        answers = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
        return None
    return answers


def _check_falseqa(path: Path) -> CaseFileCheck[ScenarioItem]:
    where = str(path)
    reader = csv.DictReader(io.StringIO(read_text(path, "FalseQA CSV", "abstain"), newline=""))
    missing = [c for c in ("question", "answer", "label") if c not in (reader.fieldnames or [])]
    if missing:
        return CaseFileCheck(where, "questions", problems=[Problem(
            file=where, line=1, field=c, message="FalseQA's CSV header is question,answer,label") for c in missing])
    items: list[tuple[int, ScenarioItem]] = []
    problems: list[Problem] = []
    for number, row in enumerate(reader, start=2):
        question, label = (row.get("question") or "").strip(), (row.get("label") or "").strip()
        if not question:
            problems.append(Problem(file=where, line=number, field="question", message="empty question"))
            continue
        if label not in ("0", "1"):
            problems.append(Problem(file=where, line=number, field="label",
                                    message=f"expected 1 (false premise) or 0 (valid), got {label!r}"))
            continue
        answers = _falseqa_answers(row.get("answer") or "")
        if answers is None:
            problems.append(Problem(file=where, line=number, field="answer",
                                    message="expected a text, or a list of texts (['...', '...'])"))
            continue
        items.append((number, ScenarioItem(id=f"falseqa-{number}", question=question, should_abstain=label == "1",
                                           answers=answers, context=None, lang=guess_lang(question), group=None,
                                           source=f"FalseQA:{number}")))
    return CaseFileCheck(where, "questions", items, problems)


class _SquadAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str


class _SquadQA(BaseModel):
    model_config = ConfigDict(extra="ignore")  # plausible_answers and the like are SQuAD's own, not needed

    id: str
    question: str
    answers: list[_SquadAnswer]
    is_impossible: bool


class _SquadParagraph(BaseModel):
    model_config = ConfigDict(extra="ignore")

    context: str = Field(min_length=1)
    qas: list[_SquadQA]


class _SquadArticle(BaseModel):
    model_config = ConfigDict(extra="ignore")

    title: str = ""
    paragraphs: list[_SquadParagraph]


def _check_squad(path: Path) -> CaseFileCheck[ScenarioItem]:
    where = str(path)
    problems: list[Problem] = []
    items: list[tuple[int, ScenarioItem]] = []
    seen: set[str] = set()
    for a, article in _json_rows(path, "SQuAD 2.0 JSON", "data", "SQuAD 2.0's {\"data\": [{title, paragraphs: "
                                 "[{context, qas: [...]}]}]}", _SquadArticle, problems):
        for p, para in enumerate(article.paragraphs):
            for q, qa in enumerate(para.qas):
                field = f"data.{a}.paragraphs.{p}.qas.{q}"
                answers = [x.text for x in qa.answers if x.text.strip()]
                if qa.id in seen:
                    problems.append(Problem(file=where, field=f"{field}.id", message=f"duplicate id '{qa.id}'"))
                elif not qa.is_impossible and not answers:
                    problems.append(Problem(file=where, field=f"{field}.answers",
                                            message="an answerable question (is_impossible false) needs answers"))
                elif qa.question.strip():
                    seen.add(qa.id)
                    items.append((len(items) + 1, ScenarioItem(
                        id=qa.id, question=qa.question.strip(), should_abstain=qa.is_impossible,
                        answers=sorted(set(answers), key=answers.index), context=para.context,
                        lang=guess_lang(para.context + qa.question), group=f"paragraph:{a}.{p}",
                        source=f"SQuAD2:{article.title}")))
    return CaseFileCheck(where, "questions", items, problems)


_READERS = {("unknowable", ".json"): _check_selfaware, ("false-premise", ".csv"): _check_falseqa,
            ("unanswerable-context", ".json"): _check_squad}


def check_scenario_file(scenario: str, path: Path) -> CaseFileCheck[ScenarioItem]:
    """Every problem of a scenario file (knowgap's JSONL, or the scenario's native format) and its questions,
    counted by what the right reply is (``knowgap data check abstain FILE --scenario NAME``)."""
    if scenario not in QUESTION_SCENARIOS:
        raise InputError(str(path), f"--scenario {scenario!r}: a scenario file is for one of "
                                    f"{', '.join(QUESTION_SCENARIOS)}")
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        result = _check_jsonl(scenario, path)
    elif (scenario, suffix) in _READERS:
        result = _READERS[(scenario, suffix)](path)
    else:
        read_text(path, "scenario file", "abstain")  # a missing file says so first
        return CaseFileCheck(str(path), "questions", problems=[Problem(
            file=str(path), message=f"unsupported file for --scenario {scenario} (use knowgap's .jsonl or "
                                    f"{NATIVE_FORMATS[scenario]})")])
    if not result.records and not result.problems:
        result.problems.append(Problem(file=str(path), message="holds no questions"))
    return result.counted(lambda item: f"{item.lang} {'should abstain' if item.should_abstain else 'answerable'}")


def load_scenario(scenario: str, data: str | None = None) -> list[ScenarioCase]:
    """The cases of ``scenario``: from ``data`` (a file) or the shipped set; a file with problems raises one
    InputError listing them all."""
    path = Path(data).expanduser() if data else shipped_file(scenario)
    if not path.exists():
        raise InputError(str(path), "scenario file not found")
    result = check_scenario_file(scenario, path)
    result.raise_problems()
    return [ScenarioCase(id=item.id, scenario=scenario, lang=item.lang, question=item.question,
                         should_abstain=item.should_abstain, answers=item.answers, context=item.context,
                         group=item.group or f"case:{item.id}", source=item.source or str(path.name))
            for _, item in result.records]
