"""What the partial suite's card validators (:mod:`.leak_card`, :mod:`.gap_card`) share of their labelled sets: the
fields of a labelled row about one of the suite's scenarios (:class:`ScenarioRow`) and of a row of a real reply to a
role view (:class:`RealReplyRow`, the rows experiments/partial_real_replies.py's sheet gives), and reading a labelled
file's rows each with the scenario it names (:func:`rows_with_scenarios`): a row naming no scenario of the suite is an
InputError naming the file, the line and the field."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import Field

from knowgap.errors import InputError
from knowgap.jsonl import read_models
from knowgap.judges.labelled_sets import LabelledItem
from knowgap.suites.partial.dataset import DATA, Scenario, load_dataset


class ScenarioRow(LabelledItem):
    """A labelled row about one of the suite's scenarios."""

    id: str
    scenario_id: str


class RealReplyRow(ScenarioRow):
    """A labelled row of a real reply of a model to a role view of a partial task."""

    model: str = Field(description="the model spec that wrote the reply (the run manifest's target)")
    runs: list[str] = Field(min_length=1, description="RUN_ID/TRIAL_ID of every trial that gave this reply")
    role: str
    task_id: str
    lang: str


Row = TypeVar("Row", bound=ScenarioRow)


def rows_with_scenarios(path: Path, model: type[Row], what: str) -> Iterator[tuple[int, Row, Scenario]]:
    """Each row of the labelled file ``path`` as ``model`` with its line number and the shipped scenario it names; a
    row that does not fit ``model`` or names no scenario is an InputError naming the file, line and field."""
    scenarios = load_dataset(DATA)
    for number, row in read_models(path, model, what=what):
        scenario = scenarios.get(row.scenario_id)
        if scenario is None:
            raise InputError(str(path), f"no scenario '{row.scenario_id}'", line=number, field="scenario_id")
        yield number, row, scenario
