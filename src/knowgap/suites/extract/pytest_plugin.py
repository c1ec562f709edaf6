"""A pytest plugin to put the extract checks into a team's own CI.

Enable it with ``pytest -p knowgap.suites.extract.pytest_plugin`` (or ``pytest_plugins = [...]`` in a
conftest). It adds:

- markers ``unit`` (no model), ``integration`` (calls the Summarizer), ``faithfulness`` (judge or offline
  checker) and ``adversarial`` (prompt injection), so a pipeline can pick ``-m "unit or faithfulness"``;
- options ``--summarizer-model`` and ``--judge-model`` (model specs, default ``local:qwen2.5-1.5b``; the judge
  defaults to the summarizer) and ``--summarizer-prompt`` (a file with your own system prompt);
- fixtures ``summarizer_model``, ``judge_model``, ``summarizer`` (a :class:`Summarizer` with your prompt),
  ``extract_cases`` (the shipped cases), ``offline_faithfulness`` (the offline checker) and
  ``summarize`` (review -> Extraction or ParseFailure on the summarizer model).

See docs/extract.md for an example test file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from knowgap.models.registry import DEFAULT_MODEL
from knowgap.models.structured import ParseFailure
from knowgap.suites.extract.dataset import ExtractCase, load_cases
from knowgap.suites.extract.summarizer import PROMPTS, Extraction, Summarizer

MARKERS = {
    "unit": "no model call (parsing, offline checks)",
    "integration": "calls the Summarizer model",
    "faithfulness": "checks summaries against their reviews (judge model or offline checker)",
    "adversarial": "prompt-injection robustness",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("knowgap-extract")
    group.addoption("--summarizer-model", default=DEFAULT_MODEL, help="Summarizer model spec.")
    group.addoption("--judge-model", default=None, help="Judge model spec (default: the summarizer's).")
    group.addoption("--summarizer-prompt", default=None, help="A file with the Summarizer's system prompt.")


def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")


@pytest.fixture(scope="session")
def summarizer_model(request: pytest.FixtureRequest) -> str:
    return str(request.config.getoption("--summarizer-model"))


@pytest.fixture(scope="session")
def judge_model(request: pytest.FixtureRequest, summarizer_model: str) -> str:
    return str(request.config.getoption("--judge-model") or summarizer_model)


@pytest.fixture(scope="session")
def summarizer(request: pytest.FixtureRequest) -> Summarizer:
    path = request.config.getoption("--summarizer-prompt")
    prompt = Path(path).read_text(encoding="utf-8-sig").strip() if path else PROMPTS["default"]
    return Summarizer(prompt)


@pytest.fixture(scope="session")
def extract_cases() -> list[ExtractCase]:
    return load_cases()


@pytest.fixture(scope="session")
def offline_faithfulness() -> object:
    from knowgap.judges.faithfulness import OfflineFaithfulness

    return OfflineFaithfulness()


@pytest.fixture(scope="session")
def summarize(summarizer: Summarizer, summarizer_model: str) -> Callable[[str], Extraction | ParseFailure]:
    def run(review: str) -> Extraction | ParseFailure:
        return summarizer.summarize(review, summarizer_model)

    return run
