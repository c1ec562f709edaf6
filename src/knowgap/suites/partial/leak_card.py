"""The partial suite's leak detector as a judge of the catalogue (``leak-detector``: does an answer reveal a hidden
(restricted) field?), declared here where it lives, with its validator and its labelled set
(``judges/data/labelled/partial_leaks.jsonl``: texts written against the suite's scenarios, labelled by the
author)."""

from __future__ import annotations

import json
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
from knowgap.suites.partial.leak import VERSION, Fingerprint, find_leaks, fingerprints
from knowgap.suites.partial.view import build_view, render_view


class LeakLabel(LabelledItem):
    id: str
    scenario_id: str
    role: str
    text: str
    leaks: bool = Field(description="the text reveals a value (or a recognisable part) the role may not see")


@dataclass(frozen=True)
class LeakItem:
    id: str
    text: str
    leaks: bool
    prints: list[Fingerprint]


def leak_items() -> tuple[list[LeakItem], Path]:
    """The labelled texts with the fingerprints of their scenario's role (what it may not see, minus what its
    authorized view shows), computed as the partial suite does."""
    path = labelled_file("partial_leaks.jsonl")
    labelled = read_models(path, LeakLabel, what="labelled texts")
    scenarios = load_dataset(DATA)
    cache: dict[tuple[str, str], list[Fingerprint]] = {}
    items = []
    for number, label in labelled:
        scenario = scenarios.get(label.scenario_id)
        if scenario is None:
            raise InputError(str(path), f"no scenario '{label.scenario_id}'", line=number, field="scenario_id")
        key = (label.scenario_id, label.role)
        if key not in cache:
            try:
                policy = scenario.policy(label.role)
            except KeyError:
                raise InputError(str(path), f"no role '{label.role}' in {label.scenario_id}", line=number,
                                     field="role") from None
            built = build_view(scenario, policy)
            visible = "\n".join([render_view(built.view, scenario.effective_lang()),
                                 json.dumps(built.pending, ensure_ascii=False)])
            cache[key] = fingerprints(built.secrets, visible, scenario.leak_markers)
        items.append(LeakItem(id=label.id, text=label.text, leaks=label.leaks, prints=cache[key]))
    return items, path


_NOTES = ("Texts written for this project against the partial suite's own scenarios (the hidden values of each "
          "scenario's restricted roles), labelled by the author: leaks in other formats, partial leaks, paraphrased "
          "leaks; non-leaks that name the hidden field or repeat visible values. Synthetic. Version 2's rules for "
          "amounts (万, million, 1,500元, the sign), dotted IP addresses and bracketed area codes were written after "
          "reading version 1's misses on this set: its sensitivity here is in-sample (version 1: 30 of 41).")


def validate_leak_detector(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                           progress: Progress | None = None) -> ValidityCard:
    """The partial suite's leak detector: does a text reveal a value the role may not see?"""
    items, path = leak_items()
    return labelled_set_card("leak-detector", VERSION, "reveals a hidden value", items, path,
                             label=lambda r: r.leaks, decide=lambda r: bool(find_leaks(r.text, r.prints)),
                             limit=limit, progress=progress, what="labelled texts", notes=_NOTES)


LEAK_DETECTOR = Judge(
    name="leak-detector", kind="offline", decides="does the answer reveal a hidden (restricted) field?",
    current=VERSION, positive="leaked", labelled_set="labelled partial answers (i15-cards2)",
    validator=validate_leak_detector, fields=("leak",))
