"""The abstain suite's data part (``knowgap data schema / check / import / inject abstain``): a knowledge base of
QA pairs (``--kb FILE``: JSONL, one :class:`~.dataset.QAPair` a line, or PolicyBench's JSON, or CSV), and, by
``--scenario NAME``, the question files of the other scenarios (:mod:`.scenario_data`). An imported QA pair
whose ``source`` no column fills says the sheet and row it came from; the suite numbers QA pairs itself.

``data inject abstain``: every chosen QA pair gets an ``injections`` list (the planner's, as ``run --inject``
plans them), planted in a context fact when its question is asked; no fact is added or changed, so leave-one-out
stays intact. The knowledge base is written as JSONL (identifier, kb, question, answer, source), so ids,
knowledge bases and clusters stay the input's.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

from knowgap.engine.case_injection import CaseRecord
from knowgap.engine.suite_data import SuiteData
from knowgap.injection.carried import CarriedInjections
from knowgap.suites.abstain.dataset import Fact, QAPair, check_kb_file, load_file
from knowgap.suites.abstain.injection import CHECKS, case_lang
from knowgap.suites.abstain.scenario_data import QUESTION_SCENARIOS, SCENARIOS, ScenarioItem, check_scenario_file


def _row(fact: Fact) -> dict[str, Any]:
    row: dict[str, Any] = {"identifier": fact.id, "kb": fact.kb, "question": fact.question, "answer": fact.answer,
                           "source": fact.source}
    if fact.injections:
        row["injections"] = [i.model_dump() for i in fact.injections]
    return row


def policybench_ids(folder: Path) -> list[str]:
    """The units of the shipped knowledge base (its dataset card's re-read samples them): each PolicyBench question
    identifier, the leave-one-out question of one QA pair."""
    ids = []
    for path in sorted((folder / "policybench" / "questions").glob("*.json")):
        ids += [str(q["identifier"]) for q in json.loads(path.read_text(encoding="utf-8"))["questions"]]
    return ids


class KnowledgeBase(SuiteData):
    """A knowledge base's records are its facts, whatever the file's format (see the module)."""

    def records(self, path: Path) -> list[CaseRecord]:
        return [CaseRecord(id=fact.id, row=_row(fact), case=fact) for fact in load_file(path)]


CASE_FILE = KnowledgeBase(
    QAPair, id_field=None, provenance_field="source", checker=check_kb_file, main_file=SCENARIOS[0],
    other_files={name: SuiteData(ScenarioItem, checker=partial(check_scenario_file, name))
                 for name in QUESTION_SCENARIOS},
    injection=CarriedInjections(CHECKS, unit="QA pair", lang=lambda record: case_lang(record.case.question)),
    units=policybench_ids)
