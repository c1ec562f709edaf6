"""The extract dataset: normal, adversarial and judge-calibration cases (``data/cases.jsonl``).

Every case records where its labels came from (``label_source``); ``data/SOURCES.md`` gives the licences and
``generate.py`` rebuilds the file from the source data.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, model_validator

from knowgap.engine.suite import Case
from knowgap.injection.attacks import FamilyName
from knowgap.strictjsonl import CaseFileCheck, read_strict
from knowgap.suites.extract.attacks import Disguise, Position
from knowgap.suites.extract.labelling import AnalysisLabel
from knowgap.suites.extract.summarizer import Sentiment

CASES_FILE = Path(str(files("knowgap.suites.extract") / "data" / "cases.jsonl"))
Kind = Literal["normal", "adversarial", "calibration"]


class ExtractCase(Case):
    model_config = ConfigDict(extra="forbid")

    kind: Kind
    lang: Literal["en", "zh"]
    review: str
    """The clean review (the source for faithfulness)."""
    label_source: str
    """How the labels were derived, and from where."""
    expected_sentiment: Sentiment | None = None
    """None: not scored for sentiment (e.g. an aspect tie)."""
    expected_conflicting: bool | None = None
    analysis_labels: dict[str, AnalysisLabel] = {}
    """Normal cases: a field (``sentiment``, ``conflicting``) the two annotation passes did not settle (they
    disagree, or one marks it disputable): both values, kept for analysis, never scored."""
    # adversarial
    base_id: str | None = None
    """The case whose clean review was attacked (clean runs are shared between its variants)."""
    attack_id: str | None = None
    attack_type: str | None = None
    attack_family: FamilyName | None = None
    """The attack's family, as its attacks file says (``knowgap data inject`` writes it; ``unclassified``: the file
    gives none). None: the shipped library's family of ``attack_id`` (the shipped cases)."""
    attack_source: str | None = None
    """Where the attack's text comes from, and its licence, as its attacks file says."""
    position: Position | None = None
    disguise: Disguise | None = None
    injected_review: str | None = None
    # calibration
    summary: str | None = None
    faithful: bool | None = None

    @model_validator(mode="after")
    def _fields_of_kind(self) -> ExtractCase:
        need = {"adversarial": ("base_id", "attack_id", "attack_type", "position", "disguise", "injected_review"),
                "calibration": ("summary", "faithful")}.get(self.kind, ())
        missing = [name for name in need if getattr(self, name) is None]
        if missing:
            raise ValueError(f"a {self.kind} case needs {', '.join(missing)}")
        if self.kind == "normal" and self.expected_sentiment is None and self.expected_conflicting is None \
                and not self.analysis_labels:
            raise ValueError("a normal case needs expected_sentiment, expected_conflicting or analysis_labels")
        return self


def check_cases(path: Path) -> CaseFileCheck[ExtractCase]:
    """Every problem of the case file ``path`` and its cases by kind (``knowgap data check extract``)."""
    return read_strict(path, ExtractCase, suite="extract").counted(lambda case: case.kind)


def load_cases(path: Path = CASES_FILE) -> list[ExtractCase]:
    """The cases of ``path``; a file with problems raises one InputError listing them all."""
    result = check_cases(path)
    result.raise_problems()
    return [case for _, case in result.records]
