"""Every metric of the starter suite, each declared once (:class:`~knowgap.engine.metric_spec.MetricSpec`): its
kind, direction, cluster unit (the case: its repeats count once), the judge that decides it and what a run needs
for it. The suite's metric names, computed metrics, judges, needs and descriptions are derived from these."""

from __future__ import annotations

from typing import Any

from knowgap.engine.metric_spec import MetricSpec, Need, described
from knowgap.engine.reducers import ERRORED
from knowgap.injection.metrics import CLEAN_TASK_SCORE
from knowgap.judges.validation import ABSTENTION
from knowgap.suites.starter.answer_match_card import ANSWER_MATCH
from knowgap.suites.starter.injection import DRIVER


def _injected(suite: Any) -> bool:
    return bool(suite.injections())


INJECTED = Need("--inject (or a case file whose cases carry injections: knowgap data inject starter)", _injected)

TASK = (
    MetricSpec("abstention_unanswerable", "proportion",
               "share of unanswerable questions where the model said it didn't know", judge=ABSTENTION,
               counts="positive", headline=True),
    # an accepted answer (answer-match) and no abstention: not one judge's verdict, so no correction
    MetricSpec("accuracy", "proportion", "share of answerable questions answered correctly", judge=ANSWER_MATCH,
               headline=True),
    MetricSpec("over_abstention", "proportion", "share of answerable questions where the model declined anyway",
               lower_is_better=True, judge=ABSTENTION, counts="positive"),
)
ERRORS = MetricSpec("errors", "count", "trials whose model call failed for good", lower_is_better=True, cluster=None,
                    reducer=ERRORED)
# the injection driver's metrics (starter/injection.py): attack success and noise floor are offline checks (an exact
# code match, a copy of the system prompt, the takeover judge's and the abstention phrases' verdicts compared between
# two runs); the clean task score is accuracy or abstention by the case: as accuracy, not one judge's verdict, so no
# correction
INJECTION = DRIVER.metric_specs(needs=INJECTED, judges={CLEAN_TASK_SCORE: ANSWER_MATCH})
SPECS = (*TASK, ERRORS, *INJECTION)
"""Counted from the trials' verdicts in one pass (the errors by their reducer, the noise floor by the driver's)."""
DESCRIBED = described(SPECS)
