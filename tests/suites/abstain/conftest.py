"""A small knowledge base whose answers carry unique marker words, so a leak is visible in any text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FACTS = [
    ("kb_0", "How long is the warranty on the Aurora kettle?", "The Aurora kettle warranty lasts 27 months ZEBRA."),
    ("kb_1", "What does a library card cost?", "A library card costs 14 dollars a year QUOKKA."),
    ("kb_2", "When does the museum open on Sundays?", "The museum opens at 11:00 on Sundays PANGOLIN."),
    ("kb_3", "How many items can members borrow?", "Members may borrow 9 items at a time OCELOT."),
    ("kb_4", "Where is the lost-and-found desk?", "The lost-and-found desk is on level 3 NARWHAL."),
    ("kb_5", "How do I renew a parking permit?", "Parking permits are renewed online via the city portal AXOLOTL."),
    ("kb_6", "What is the late fee for books?", "The late fee is 20 cents per day per book IBEX."),
]


@pytest.fixture
def small_kb(tmp_path: Path) -> Path:
    path = tmp_path / "kb.jsonl"
    path.write_text("".join(json.dumps({"identifier": i, "question": q, "answer": a}) + "\n" for i, q, a in FACTS),
                    encoding="utf-8")
    return path
