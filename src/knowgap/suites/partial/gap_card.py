"""The partial suite's gap matcher as a judge of the catalogue (``gap-matcher``: does a gap the agent named refer
to a given hidden field?), declared here where it lives, with its validator and its labelled set
(``judges/data/labelled/partial_gaps.jsonl``: named gaps written against the suite's scenarios, labelled by the
author)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from knowgap.errors import InputError
from knowgap.jsonl import read_models
from knowgap.judges.cards import ValidityCard
from knowgap.judges.judge import Judge, Progress
from knowgap.judges.labelled_sets import LabelledItem, labelled_file
from knowgap.judges.offline_cards import labelled_set_card
from knowgap.suites.partial.dataset import DATA, load_dataset
from knowgap.suites.partial.scoring import GAP_MATCH_VERSION, gap_matches


class GapLabel(LabelledItem):
    id: str
    scenario_id: str
    path: str = Field(description="the hidden field")
    named: str = Field(description="a gap as an agent names it")
    match: bool


@dataclass(frozen=True)
class GapItem:
    id: str
    named: str
    path: str
    aliases: list[str]
    match: bool


def gap_items() -> tuple[list[GapItem], Path]:
    """The labelled (named gap, field) pairs with the field's labels from its scenario (``field_labels``)."""
    path = labelled_file("partial_gaps.jsonl")
    scenarios = load_dataset(DATA)
    items = []
    for number, label in read_models(path, GapLabel, what="labelled gaps"):
        scenario = scenarios.get(label.scenario_id)
        if scenario is None:
            raise InputError(str(path), f"no scenario '{label.scenario_id}'", line=number, field="scenario_id")
        items.append(GapItem(id=label.id, named=label.named, path=label.path,
                                 aliases=scenario.field_labels.get(label.path, []), match=label.match))
    return items, path


_NOTES = ("Named gaps written for this project as an agent paraphrases them (zh + en) against the hidden fields of "
          "8 partial scenarios (4 families), 4 matching and 4 naming another field per scenario, labelled by the "
          "author; most matching ones do not reuse a field label. Synthetic.")


def validate_gap_matcher(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                         progress: Progress | None = None) -> ValidityCard:
    """The partial suite's gap matcher: does a gap the agent named refer to a given hidden field?"""
    items, path = gap_items()
    return labelled_set_card("gap-matcher", GAP_MATCH_VERSION, "the named gap refers to the field", items, path,
                             label=lambda r: r.match, decide=lambda r: gap_matches(r.named, r.path, r.aliases),
                             limit=limit, progress=progress, what="labelled (named gap, field) pairs", notes=_NOTES)


GAP_MATCHER = Judge(
    name="gap-matcher", kind="offline", decides="does a named gap match an expected missing field?",
    current=GAP_MATCH_VERSION, positive="matches", labelled_set="labelled partial answers (i15-cards2)",
    validator=validate_gap_matcher)
