"""A judge's one declaration: anything that decides what free text means, as an object declared where it lives.

A :class:`Judge` says what it decides, its positive class, its current version, the labelled set it is measured
on and its validator, the function ``knowgap judge validate NAME`` runs. Every validator has one signature,
:data:`Validator`: ``(data_dir, limit, judge_model, progress) -> ValidityCard``. A suite's metric names its judge
as this object (:class:`knowgap.engine.metric_spec.MetricSpec`); the catalogue finds every judge by discovery
(the ``knowgap.judges`` entry points: :mod:`knowgap.suites.judge_registry`).

A built-in judge of the judges package is declared beside its validator here (``validation.py``,
``detector_validation.py``...); a suite's own judge in the suite's package (``suites/starter/answer_match_card.py``);
a third party's in its own package, with one entry point::

    [project.entry-points."knowgap.judges"]
    my-judge = "my_package.my_judge:MY_JUDGE"
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from knowgap.judges.cards import ValidityCard

JudgeKind = Literal["offline", "model"]
Progress = Callable[[int, int], None]
"""``progress(done, total)``."""


class Validator(Protocol):
    def __call__(self, data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                 progress: Progress | None = None) -> ValidityCard:
        """Measure the judge on its labelled set: ``data_dir`` a folder laid out like ``../shared/data`` (None
        when the set ships with the judge), ``limit`` a seeded sample balanced between the labels (None: the
        whole set), ``judge_model`` the model spec of a model-backed judge (ignored by an offline one),
        ``progress(done, total)`` after each item."""
        ...


@dataclass(frozen=True, eq=False)
class Judge:
    """One judge of the catalogue (``knowgap judges``)."""

    name: str
    """Its catalogue name (``knowgap judge validate NAME``); its cards are keyed by it and its version."""
    kind: JudgeKind
    """offline (no model) or model (the run's ``judge`` role)."""
    decides: str
    current: str | Callable[[], str]
    """Its current version: the version constant, or a function reading it (a judge spec's YAML)."""
    positive: str
    labelled_set: str
    validator: Validator
    fields: tuple[str, ...] = ()
    """The trial scores that hold its verdict as true/false (true: its positive class). People's labels on one of
    them (``knowgap label sample RUN --judge-field FIELD``) measure it: ``knowgap judge validate NAME --labels
    FILE``, and the card of the run's own verdicts in ``knowgap label agreement``."""
    needs_data: bool = True
    """False when its labelled set ships with it (no --data folder needed)."""

    def version(self) -> str:
        return self.current if isinstance(self.current, str) else self.current()

    def __repr__(self) -> str:
        return f"Judge({self.name!r})"


def spec_version(name: str) -> Callable[[], str]:
    """The current version of the judge spec ``name`` (``judges/data/NAME.yaml``), read when asked for."""

    def version() -> str:
        from knowgap.judges.spec import load_spec

        return load_spec(name).version

    return version
