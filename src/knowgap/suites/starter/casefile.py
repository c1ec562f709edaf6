"""The starter suite's data part (``knowgap data schema / check / import / inject starter``): one
:class:`~.dataset.StarterCase` a line, checked with the suite's own rule (an answerable case lists its answers);
``data inject`` gives each chosen case an ``injections`` list, planted in its context when it is run
(:mod:`.injection`)."""

from __future__ import annotations

from knowgap.engine.suite_data import SuiteData, record_ids
from knowgap.injection.carried import CarriedInjections
from knowgap.suites.starter.dataset import StarterCase, check_cases
from knowgap.suites.starter.injection import CHECKS

CASE_FILE = SuiteData(StarterCase, checker=check_cases, injection=CarriedInjections(CHECKS),
                      units=record_ids("cases.jsonl"))  # the dataset card's unit: a case
