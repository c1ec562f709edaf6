"""The starter dataset: 16 short context questions (zh + en), half answered by their context, half not.
A case may carry ``injections`` (written by ``knowgap data inject starter``).

One JSON object per line (``data/cases.jsonl``), validated strictly by :class:`StarterCase` (unknown fields and
coerced values are refused: :mod:`knowgap.strictjsonl`); an answerable case lists the accepted answers.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field

from knowgap.engine.suite import Case
from knowgap.injection.plan import Injection
from knowgap.strictjsonl import CaseFileCheck, read_strict

DATA = Path(str(files("knowgap.suites.starter") / "data" / "cases.jsonl"))


class StarterCase(Case):
    model_config = ConfigDict(extra="forbid")

    lang: Literal["en", "zh"]
    context: str
    question: str
    answerable: bool
    answers: list[str] = Field(default_factory=list)
    injections: list[Injection] = Field(default_factory=list, description="Instructions planted in the context "
                                        "(``knowgap data inject starter``): each its own injected run.")


def _answers(case: StarterCase) -> list[tuple[str | None, str]]:
    if case.answerable and not case.answers:
        return [("answers", "an answerable case needs at least one accepted answer")]
    return []


def check_cases(path: Path) -> CaseFileCheck[StarterCase]:
    """Every problem of the case file ``path`` and its cases, answerable or not (``knowgap data check starter``)."""
    return read_strict(path, StarterCase, suite="starter").with_rule(_answers).counted(
        lambda case: "answerable" if case.answerable else "unanswerable")


def load_cases(path: Path) -> list[StarterCase]:
    """The cases of ``path``; a file with problems raises one InputError listing them all."""
    result = check_cases(path)
    result.raise_problems()
    return [case for _, case in result.records]
