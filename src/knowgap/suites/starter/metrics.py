"""Metrics of a starter run per configuration (system prompt), with Wilson 95% CIs clustered by case (the
repeats of one case count once: :mod:`knowgap.stats`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from knowgap.engine.metric_spec import described
from knowgap.engine.records import MetricValue, TrialRecord
from knowgap.engine.tally import Tally
from knowgap.suites.starter.specs import ERRORS, TASK

DESCRIBED = described(TASK)


def starter_metrics(records: Iterable[TrialRecord]) -> list[MetricValue]:
    tallies: dict[str, Tally] = defaultdict(Tally)
    for r in records:
        t = tallies[r.config_id]
        if r.status != "ok":
            t.count("errors")
            continue
        if r.scores["answerable"]:
            t.hit("accuracy", bool(r.scores["correct"]), r.case_id)
            t.hit("over_abstention", bool(r.scores["abstained"]), r.case_id)
        else:
            t.hit("abstention_unanswerable", bool(r.scores["abstained"]), r.case_id)
    out = []
    for group in sorted(tallies):
        t = tallies[group]
        out += [t.proportion(name, group, description=text) for name, text in DESCRIBED.items()]
        out.append(t.counted("errors", group, description=ERRORS.description))
    return out
