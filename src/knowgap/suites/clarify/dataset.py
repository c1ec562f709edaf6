"""The clarify dataset: underspecified ("deficient") legal questions and complete controls, zh + en.

One JSON object per line (``data/cases.jsonl``), validated by :class:`ClarifyCase`. A deficient case lists the
missing elements (each with its category), the clarifying questions a good answer asks, a conditional answer,
and the hidden facts that complete it together with the conclusion they lead to (used by the multi-turn
mode). A complete control carries its reference conclusion and no missing elements.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from knowgap.engine.suite import Case
from knowgap.errors import InputError
from knowgap.strictjsonl import CaseFileCheck, read_strict
from knowgap.suites.clarify.pressure import Pressure

DATA_DIR = Path(str(files("knowgap.suites.clarify") / "data"))
CASES_FILE = DATA_DIR / "cases.jsonl"
GUIDELINE_FILES: dict[str, Path] = {"zh": DATA_DIR / "rater_guideline.md", "en": DATA_DIR / "rater_guideline.en.md"}
"""The rater guideline (seed 000's checklist, verbatim in Chinese; the project's English translation)."""

Domain = Literal["labour", "contract", "tort", "family", "lease", "consumer", "lending"]
DOMAIN_NAMES_ZH: dict[str, str] = {
    "labour": "劳动合同与解雇赔偿", "contract": "合同效力", "tort": "侵权", "family": "婚姻家事",
    "lease": "租赁与房产", "consumer": "消费者权益", "lending": "民间借贷",
}
Category = Literal["switches_conclusion", "gates_rule", "prerequisite"]
CATEGORY_DESCRIPTIONS: dict[str, str] = {
    "switches_conclusion": "a fact whose value switches the legal conclusion",
    "gates_rule": "a fact that decides whether a rule applies at all",
    "prerequisite": "a fact without which no concrete answer (e.g. an amount) is possible",
}


class Source(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dataset: Literal["lawbench-2-4", "lawbench-3-8", "authored"]
    row: int | None = Field(None, ge=0, description="0-based index in the source JSON list")
    adapted: bool = False
    note: str = ""

    @model_validator(mode="after")
    def _row_for_lawbench(self) -> Source:
        if self.dataset != "authored" and self.row is None:
            raise ValueError("a LawBench-derived case must record its source row")
        return self


class MissingElement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=2)
    category: Category


class ClarifyCase(Case):
    model_config = ConfigDict(extra="forbid")

    lang: Literal["zh", "en"]
    domain: Domain
    kind: Literal["deficient", "complete"]
    query: str = Field(min_length=4)
    source: Source
    missing_information: list[MissingElement] = Field(default_factory=list)
    expected_clarifying_questions: list[str] = Field(default_factory=list)
    conditional_answer: str = ""
    hidden_facts: list[str] = Field(default_factory=list)
    conclusion: str = Field(min_length=4, description="deficient: the conclusion under the hidden facts; "
                                                      "complete: the reference conclusion")
    conclusion_terms: list[str] = Field(min_length=1, description="terms a correct conclusion contains; "
                                                                  "'a|b' accepts either (offline approximation)")
    legal_basis: list[str] = Field(min_length=1)
    pressure: Pressure | None = Field(None, description="The pressure test: a phrase asking the model not to ask "
                                                        "(see pressure.py); the trial also runs the query with it")

    @model_validator(mode="after")
    def _fields_for_kind(self) -> ClarifyCase:
        if self.kind == "deficient":
            for name in ("missing_information", "expected_clarifying_questions", "hidden_facts"):
                if not getattr(self, name):
                    raise ValueError(f"a deficient case needs a non-empty '{name}'")
            if not self.conditional_answer.strip():
                raise ValueError("a deficient case needs a 'conditional_answer'")
        elif self.missing_information or self.expected_clarifying_questions or self.hidden_facts:
            raise ValueError("a complete control has no missing_information, expected_clarifying_questions "
                             "or hidden_facts")
        return self

    @property
    def deficient(self) -> bool:
        return self.kind == "deficient"


def check_cases(path: Path) -> CaseFileCheck[ClarifyCase]:
    """Every problem of the case file ``path`` (strict: unknown fields, coerced values, duplicate ids) and its
    cases by kind (``knowgap data check clarify``)."""
    return read_strict(path, ClarifyCase, suite="clarify").counted(lambda case: case.kind)


def load_cases(path: Path = CASES_FILE) -> list[ClarifyCase]:
    """Every case in ``path``; a file with problems raises one InputError listing them all (file, line, field)."""
    result = check_cases(path)
    result.raise_problems()
    return [case for _, case in result.records]


def load_guideline(lang: str = "zh", path: Path | None = None) -> str:
    """The rater guideline text in ``lang`` (the same text human raters read; the rubric judge reads it too)."""
    path = path or GUIDELINE_FILES[lang]
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(str(path), "rater guideline file not found") from None


def cluster_key(case: ClarifyCase) -> str:
    """The cluster a case's trials share in every interval: its LawBench row (cases adapted from one row are
    not independent), else the case itself."""
    if case.source.row is not None and case.source.dataset != "authored":
        return f"{case.source.dataset}:{case.source.row}"
    return f"case:{case.id}"
