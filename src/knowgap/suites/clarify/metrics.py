"""Metrics of a clarify run per configuration (system prompt version), and its key rates per language too (group
``prompt=X · zh``: :data:`LANGUAGES`), each with a 95% CI: the rates counted from the trials' verdicts
(:mod:`.verdicts`), the means, the rates that are no verdict and the counts made by their specs' reducers
(:mod:`.specs`), in one pass (:func:`knowgap.engine.verdict_tally.count_metrics`).

Intervals are clustered (:mod:`knowgap.stats`) by the case's source: cases adapted from one LawBench row
(``source.dataset`` + ``source.row``) form one cluster, any other case (authored) is its own; repeats of a case
count once. Each trial stores its case's key (``ClarifySuite.case_tags``); for a trial stored before knowgap kept it,
the suite passes the key of each case of today's dataset (``ClarifySuite.metrics``), and a case it does not know (an
older run's) is its own cluster."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from knowgap.engine.case_tags import tag_value, tags_of
from knowgap.engine.records import MetricValue, TrialRecord
from knowgap.engine.verdict_tally import Split, Verdicts, count_metrics, stored_or
from knowgap.suites.clarify.specs import BY_LANGUAGE, REPORTED_EMPTY, SPECS
from knowgap.suites.clarify.verdicts import clarify_scores, clarify_verdicts


def _language(record: TrialRecord) -> list[str]:
    lang = record.scores.get("lang") if record.status == "ok" else None
    return [lang] if isinstance(lang, str) and lang in ("zh", "en") else []


LANGUAGES = Split(lambda config, lang: f"{config} · {lang}", _language, metrics=BY_LANGUAGE, order=("zh", "en"))
"""The key rates per configuration and language."""


def trial_cluster(record: TrialRecord, cluster_of: Mapping[str, str]) -> str:
    """A trial's cluster: its case's ``cluster`` tag as its trial stored it (``ClarifySuite.case_tags``), else (a
    trial stored before knowgap kept them) ``cluster_of[case_id]``, today's; a case without one is its own."""
    found = tag_value(tags_of(record, lambda case_id: {"cluster": cluster_of[case_id]}
                              if case_id in cluster_of else None), "cluster")
    return found or f"case:{record.case_id}"


def clarify_metrics(records: Iterable[TrialRecord], cluster_of: Mapping[str, str] | None = None,
                    verdicts: Verdicts | None = None) -> list[MetricValue]:
    """``cluster_of[case_id]``: the case's cluster key (its LawBench row) for a trial stored without it
    (:func:`trial_cluster`); a case without one is its own.
    ``verdicts``: the suite's (default: stored, else :func:`.verdicts.clarify_verdicts`)."""
    return count_metrics(records, SPECS, verdicts=verdicts or stored_or(clarify_verdicts),
                         cluster=lambda r: trial_cluster(r, cluster_of or {}), splits=[LANGUAGES],
                         scores=clarify_scores, always=REPORTED_EMPTY)
