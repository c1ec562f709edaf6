"""The starter dataset: 16 short context questions (zh + en), half answered by their context, half not.

One JSON object per line (``data/cases.jsonl``), validated by :class:`StarterCase`; an answerable case lists
the accepted answers.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Literal

from pydantic import Field

from knowgap.engine.suite import Case
from knowgap.errors import InputError
from knowgap.jsonl import read_models

DATA = Path(str(files("knowgap.suites.starter") / "data" / "cases.jsonl"))


class StarterCase(Case):
    lang: Literal["en", "zh"]
    context: str
    question: str
    answerable: bool
    answers: list[str] = Field(default_factory=list)


def load_cases(path: Path) -> list[StarterCase]:
    cases = read_models(path, StarterCase, what="cases")
    for number, case in cases:
        if case.answerable and not case.answers:
            raise InputError(str(path), "an answerable case needs at least one accepted answer", line=number,
                             field="answers")
    return [case for _, case in cases]
