"""Every suite's docs page documents its case file under ``## Case file format``: each example there passes
``knowgap data check``, together they show every kind of case, and every field of the format is named. The
examples are read from the docs, so the docs cannot drift from the code. The pages are found from the installed
suites (a suite with a data part and its page ``docs/NAME.md`` in this tree), so a new suite needs no entry here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from knowgap.casefiles import case_schema, check
from knowgap.engine.suite_data import data_of
from knowgap.suites import BUILTIN, available
from tests.helpers import REPO, knowgap_cli

HEADING = "## Case file format"
PAGES = {name: f"docs/{name}.md" for name, cls in available().items()
         if data_of(cls) is not None and (REPO / "docs" / f"{name}.md").is_file()}
"""Each suite that reads a case file (its data part) and has its page in knowgap's docs (a built-in suite's
``docs/NAME.md``)."""


def test_every_builtin_suite_with_a_case_file_has_its_page() -> None:
    assert {name for name in BUILTIN if data_of(available()[name]) is not None} <= set(PAGES)


def section(suite: str) -> str:
    """The page's case-format section (up to the next heading of the same level)."""
    text = (REPO / PAGES[suite]).read_text(encoding="utf-8")
    assert HEADING in text, f"{PAGES[suite]} has no '{HEADING}' section"
    body = text.split(HEADING, 1)[1]
    return body.split("\n## ", 1)[0]


def examples(suite: str) -> list[tuple[str, str]]:
    """(language, text) of each fenced example (```jsonl, ```csv or ```json) of the section."""
    return [(lang, body) for lang, body in re.findall(r"```(jsonl|csv|json)\n(.*?)```", section(suite), re.S)]


def expected_kinds(suite: str) -> set[str]:
    """The values of the format's ``kind`` field, where it lists them."""
    return set(case_schema(suite)["properties"].get("kind", {}).get("enum", []))


@pytest.mark.parametrize("suite", sorted(PAGES))
def test_every_doc_example_passes_data_check_and_every_kind_is_shown(suite: str, tmp_path: Path) -> None:
    found = examples(suite)
    assert found, f"{PAGES[suite]}: no example under '{HEADING}'"
    kinds: set[str] = set()
    for i, (lang, text) in enumerate(found):
        path = tmp_path / f"example-{i}.{lang}"
        path.write_text(text, encoding="utf-8")
        result = check(suite, path)
        assert result.problems == [], f"{PAGES[suite]}, example {i + 1}:\n" + "\n".join(map(str, result.problems))
        kinds |= set(result.kinds)
    assert expected_kinds(suite) <= kinds, f"{PAGES[suite]}: no example of {sorted(expected_kinds(suite) - kinds)}"


@pytest.mark.parametrize("suite", sorted(PAGES))
def test_every_field_of_the_format_is_documented(suite: str) -> None:
    named = set(re.findall(r"^\| `([^`]+)` \|", section(suite), re.M))
    fields = set(case_schema(suite)["properties"])
    assert fields <= named, f"{PAGES[suite]}: fields not in the table: {sorted(fields - named)}"
    assert named <= fields, f"{PAGES[suite]}: the table names fields the format lacks: {sorted(named - fields)}"


def test_the_starter_examples_show_an_answerable_and_an_unanswerable_case(tmp_path: Path) -> None:
    kinds: set[str] = set()
    for i, (lang, text) in enumerate(examples("starter")):
        path = tmp_path / f"example-{i}.{lang}"
        path.write_text(text, encoding="utf-8")
        kinds |= set(check("starter", path).kinds)
    assert kinds == {"answerable", "unanswerable"}


def test_the_first_extract_example_checks_on_the_command_line(tmp_path: Path) -> None:
    lang, text = examples("extract")[0]
    path = tmp_path / f"cases.{lang}"
    path.write_text(text, encoding="utf-8")
    done = knowgap_cli("data", "check", "extract", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{path}: 3 cases OK (normal 1, adversarial 1, calibration 1)"
