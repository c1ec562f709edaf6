"""docs/reliability.md names, for each guarantee, the test that holds it: every test file and test function it
names must exist, so the page cannot keep promising what a renamed or deleted test no longer checks."""

from __future__ import annotations

import re

from tests.helpers import REPO

DOC = REPO / "docs" / "reliability.md"
# `tests/x/test_y.py::test_z` or `tests/x/test_y.py`, then `::test_w` for more tests of the last file named
NAMED = re.compile(r"`(tests/[\w/]+\.py)?(?:::(\w+))?`")


def _named_tests() -> list[tuple[str, str | None]]:
    named: list[tuple[str, str | None]] = []
    last: str | None = None
    for file, test in NAMED.findall(DOC.read_text(encoding="utf-8")):
        if file:
            last = file
        if file or test:
            assert last is not None, f"docs/reliability.md names ::{test} before any test file"
            named.append((last, test or None))
    return named


def test_every_test_the_reliability_page_names_exists() -> None:
    named = _named_tests()
    assert len(named) >= 40, "the page names the tests of its guarantees"
    missing = []
    for file, test in named:
        path = REPO / file
        if not path.is_file():
            missing.append(file)
        elif test and not re.search(rf"^(?:async )?def {test}\(", path.read_text(encoding="utf-8"), re.M):
            missing.append(f"{file}::{test}")
    assert not missing, f"docs/reliability.md names tests that do not exist: {missing}"
