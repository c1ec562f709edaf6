"""What the judge catalogue does with one judge: measure it (:func:`validate`, ``knowgap judge validate NAME``) and
list it with its card(s) for its current version (:func:`judge_row`, a line of ``knowgap judges``).

A judge is a :class:`~knowgap.judges.judge.Judge` object; which judges exist is found by discovery one layer up
(:mod:`knowgap.suites.judge_registry`: the built-in ones and every installed package's ``knowgap.judges`` entry
points), where the metrics each decides are read from the suites' declarations. A judge's ``fields`` name the
trial scores holding its verdict, which people's labels measure (``knowgap judge validate NAME --labels FILE``, in
:mod:`knowgap.labels.validity`).
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel

from knowgap.errors import KnowgapError
from knowgap.judges.cards import Assessment, ValidityCard, assess, card_key, cards_in, measured_dir, shipped_cards
from knowgap.judges.judge import Judge, JudgeKind, Progress

DATA_ENV = "KNOWGAP_DATA"


def default_data_dir(start: Path | None = None) -> Path:
    """The labelled data folder: ``$KNOWGAP_DATA``, else the nearest ``shared/data`` found walking up from
    ``start`` (default: the current directory)."""
    if os.environ.get(DATA_ENV):
        path = Path(os.environ[DATA_ENV])
        if not path.is_dir():
            raise KnowgapError(f"{DATA_ENV}={path}: not a folder")
        return path
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "shared" / "data").is_dir():
            return folder / "shared" / "data"
    raise KnowgapError(f"no labelled data folder: give --data DIR or set {DATA_ENV} (no shared/data found above "
                       f"{here})")


def validate(judge: Judge, *, data_dir: Path | None = None, limit: int | None = None, judge_model: str | None = None,
             progress: Progress | None = None) -> ValidityCard:
    """Measure ``judge`` with its validator; ``data_dir`` default: :func:`default_data_dir` when its labelled set
    does not ship with it."""
    if judge_model and judge.kind == "offline":
        raise KnowgapError(f"judge '{judge.name}' is offline: --judge-model does not apply")
    folder = data_dir if data_dir is not None or not judge.needs_data else default_data_dir()
    if folder is not None and not folder.is_dir():
        raise KnowgapError(f"--data {folder}: not a folder")
    card = judge.validator(folder, limit, judge_model, progress)
    if not isinstance(card, ValidityCard):
        raise KnowgapError(f"the validator of judge '{judge.name}' returned {type(card).__name__}, not a "
                           "ValidityCard")
    return card


# --- the listing (knowgap judges) -----------------------------------------------------------------------------


class JudgeRow(BaseModel):
    """One judge of ``knowgap judges`` with its cards for the current version (one per judge model)."""

    name: str
    kind: JudgeKind
    version: str | None
    decides: str
    positive: str
    labelled_set: str
    metrics: list[str]
    """The metrics it may decide (``suite.metric``), as the suites declare them."""
    assessments: list[Assessment]
    """One per card of the current version (the card inside), or one ``screen`` without a card when there is
    none."""
    version_error: str | None = None


def cards_for(name: str, version: str) -> list[ValidityCard]:
    """Every card of this judge version, one per judge model: the one measured here (KNOWGAP_HOME/judge_cards)
    before the shipped one."""
    found: dict[str, ValidityCard] = {}
    for card in (*cards_in(measured_dir()), *shipped_cards()):
        if card.judge == name and card.version == version:
            found.setdefault(card_key(card.judge, card.version, card.judge_model), card)
    return list(found.values())


def judge_row(judge: Judge, metrics: list[str]) -> JudgeRow:
    """The judge, its current version, its cards and whether its numbers are reportable."""
    version: str | None
    error = None
    try:
        version = judge.version()
    except (OSError, ValueError, KnowgapError) as exc:  # a judge spec that cannot be read
        version, error = None, f"version not found ({exc})"
    cards = cards_for(judge.name, version) if version else []
    return JudgeRow(name=judge.name, kind=judge.kind, version=version, decides=judge.decides, positive=judge.positive,
                    labelled_set=judge.labelled_set, metrics=metrics,
                    assessments=[assess(c) for c in cards] or [assess(None)], version_error=error)
