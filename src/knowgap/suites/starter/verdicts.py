"""Per-metric verdicts of one starter trial (answerable: accuracy and over-abstention; unanswerable: abstention): the
source of the suite's metrics, which count them (:func:`knowgap.engine.verdict_tally.count_metrics`)."""

from __future__ import annotations

from knowgap.engine.metric_spec import lower_is_better
from knowgap.engine.records import TrialRecord, Verdict
from knowgap.engine.verdicts import judged, rate
from knowgap.suites.starter.specs import SPECS

LOWER_IS_BETTER = lower_is_better(SPECS)


def starter_verdicts(record: TrialRecord) -> list[Verdict]:
    s = record.scores
    abstained = bool(s["abstained"])
    if not s["answerable"]:
        return [judged("abstention_unanswerable", abstained,
                       "said the context does not say" if abstained else
                       "answered a question the context does not answer")]
    correct = bool(s["correct"])
    missed = "declined an answerable question" if abstained else "no accepted answer in the reply"
    return [judged("accuracy", correct, "gave an accepted answer" if correct else missed),
            rate("over_abstention", abstained, "declined an answerable question" if abstained else "answered",
                 lower_is_better=True)]
