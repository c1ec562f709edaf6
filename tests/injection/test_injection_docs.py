"""docs/injection.md stays true to the code: its attacks example is a valid library file, and it names every
family, check, position, disguise, defence and shared metric."""

from __future__ import annotations

import re
from pathlib import Path

from knowgap.injection import CHECKS, DEFENCES, DISGUISES, FAMILIES, INJECTION_METRICS, POSITIONS, read_attacks
from tests.helpers import REPO

PAGE = REPO / "docs" / "injection.md"


def test_the_attacks_example_is_a_valid_library(tmp_path: Path) -> None:
    text = PAGE.read_text(encoding="utf-8").split("### Your own attacks", 1)[1]
    [example] = re.findall(r"```json\n(.*?)```", text.split("\n## ", 1)[0], re.S)
    path = tmp_path / "mine.jsonl"
    path.write_text(example, encoding="utf-8")
    attacks = read_attacks(path)
    assert [(a.family, a.check, a.placeholders()) for a in attacks] == [
        ("refusal_suppression", "marker", {"marker"}), ("exfiltration", "field_leak", {"field"})]


def test_the_page_names_every_choice_and_metric() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for name in [*FAMILIES, *CHECKS, *POSITIONS, *DISGUISES, *DEFENCES, *INJECTION_METRICS]:
        assert f"`{name}`" in text, name
    assert "Hines et al. 2024" in text and "## Measured on the 1.5B" in text
