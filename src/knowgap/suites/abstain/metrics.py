"""Metrics of an abstain run, counted from its trials' verdicts (:mod:`.verdicts`;
:func:`knowgap.engine.verdict_tally.count_metrics`) with the counts and the F1 its specs' reducers make.

A leave-one-out run's are per configuration (retrieval/prompt) and, when a run spans more than one knowledge base,
per configuration and knowledge base (group ``rag/basic · kb=ICA_134``). Their intervals are clustered
(:mod:`knowgap.stats`) by :func:`cluster_key`: a question's fact, i.e. its case (repeats count once); for a
knowledge base generated from documents, the document the fact came from (its questions share one text). A
PolicyBench question's ``source`` is its knowledge-base file, so clustering by it would leave 1 cluster per
knowledge base (4 in all): too few to estimate a variance from, and the knowledge bases are reported apart anyway.

A scenario run's (``--scenario unknowable|false-premise|unanswerable-context``), as AbstentionBench reports them,
are per configuration (``false-premise/neutral``) and, when a run holds both languages, per configuration and
language (``false-premise/neutral · lang=zh``): ``abstention_precision`` (of the replies that declined, the share on
questions that should be declined), ``abstention_recall`` (of the questions that should be declined, the share
declined), ``abstention_f1`` (their harmonic mean, a percentile bootstrap CI resampling clusters) and
``answer_accuracy`` (of the answerable questions, the share answered with an answer that matches a reference:
:mod:`.scenario_answers`). A question's cluster is its ``group``: its paragraph for unanswerable-context (the
questions on one paragraph share it), else the question itself. A reply the LLM abstention judge could not parse
counts in none of them (``abstention_judge_parse_failures``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from knowgap.engine.case_tags import Tags, tag_value, tag_values, tags_of
from knowgap.engine.metric_spec import metric_names
from knowgap.engine.records import MetricValue, TagValue, TrialRecord
from knowgap.engine.verdict_tally import Split, Verdicts, count_metrics, stored_or
from knowgap.suites.abstain.specs import DESCRIBED, LOO_COUNTED, LOO_OWN, SCENARIO_COUNTED
from knowgap.suites.abstain.verdicts import abstain_verdicts, scenario_verdicts

GENERATED_SOURCE = re.compile(r"^(?P<document>.+):\d+$")
"""A generated fact's source: ``DOCUMENT:POSITION`` (``generate.make_questions``)."""


def kb_group(config_id: str, kb: str) -> str:
    """The group of one configuration's trials on one knowledge base."""
    return f"{config_id} · kb={kb}"


def lang_group(config_id: str, lang: str) -> str:
    return f"{config_id} · lang={lang}"


def kb_split(kb_of: Mapping[str, str]) -> Split:
    """A trial's knowledge base: the one recorded in its output (``experiment.kb``), else its case's ``kb`` tag (a
    failed trial has no output; a trial stored without its tags: ``kb_of[case_id]``, today's); groups only when the
    trials span more than one."""

    def kb(record: TrialRecord) -> list[str]:
        found = record.output.get("experiment", {}).get("kb") or tag_value(
            tags_of(record, lambda case_id: {"kb": kb_of[case_id]} if case_id in kb_of else None), "kb")
        return [found] if found else []

    return Split(kb_group, kb, several=True, tags=("kb",), metrics=metric_names(LOO_OWN))


def lang_split(lang_of: Mapping[str, str]) -> Split:
    """A scenario question's language (its case's ``lang`` tag; a trial stored without its tags:
    ``lang_of[case_id]``, today's); groups only when the trials hold both."""

    def lang(record: TrialRecord) -> list[str]:
        return tag_values(tags_of(record, lambda case_id: {"lang": lang_of[case_id]} if case_id in lang_of else None),
                          "lang")

    return Split(lang_group, lang, several=True, tags=("lang",))


def cluster_key(case_id: str, source: str = "") -> str:
    """The cluster of a question: the document of a generated fact (``source`` ``DOCUMENT:POSITION``), else
    the question's own case."""
    found = GENERATED_SOURCE.match(source)
    return f"document:{found['document']}" if found else f"case:{case_id}"


def loo_tags(case_id: str, kb: str | None, source: str) -> dict[str, TagValue]:
    """What a leave-one-out run's groups and intervals read of a question, kept in each of its trials' records
    (``AbstainSuite.case_tags``): its knowledge base and its cluster (:func:`cluster_key`)."""
    tags: dict[str, TagValue] = {"kb": kb} if kb else {}
    return tags | {"cluster": cluster_key(case_id, source)}


def scenario_tags(lang: str | None, group: str) -> dict[str, TagValue]:
    """What a scenario run's groups and intervals read of a question: its language and its cluster (its group)."""
    tags: dict[str, TagValue] = {"lang": lang} if lang else {}
    return tags | {"cluster": group}


def trial_cluster(record: TrialRecord, today: Callable[[str], Tags | None]) -> str:
    """A trial's cluster: its case's ``cluster`` tag, as stored (else ``today(case_id)``), else its own case."""
    return tag_value(tags_of(record, today), "cluster") or f"case:{record.case_id}"


def abstain_metrics(records: Iterable[TrialRecord], *, factuality_judge: str = "offline",
                    kb_of: Mapping[str, str] | None = None, source_of: Mapping[str, str] | None = None,
                    verdicts: Verdicts | None = None) -> list[MetricValue]:
    """A leave-one-out run's, per configuration and knowledge base (:func:`kb_split`; the injection driver's per
    configuration alone), in one pass; a trial's cluster is
    :func:`cluster_key` of its case and ``source_of[case_id]`` (the fact's source); ``verdicts``: the suite's
    (default: stored, else :func:`.verdicts.abstain_verdicts`)."""
    sources, kbs = source_of or {}, kb_of or {}
    approx = " (offline judge: learned combiner of embedding, number, yes/no and key-word signals; " \
             "--factuality-judge llm for the LLM judge)" if factuality_judge == "offline" else \
        " (LLM judge, spec factuality_v1)"
    return count_metrics(records, LOO_COUNTED, verdicts=verdicts or stored_or(abstain_verdicts),
                         cluster=lambda r: trial_cluster(r, lambda c: loo_tags(c, kbs.get(c), sources.get(c, ""))),
                         splits=[kb_split(kbs)],
                         descriptions={"factuality_answered": DESCRIBED["factuality_answered"] + approx})


def scenario_metrics(records: Iterable[TrialRecord], cluster_of: Mapping[str, str], lang_of: Mapping[str, str],
                     verdicts: Verdicts | None = None) -> list[MetricValue]:
    """A scenario run's, per configuration and language (:func:`lang_split`); ``cluster_of[case_id]``: the
    question's cluster (its own case when unknown)."""
    return count_metrics(records, SCENARIO_COUNTED, verdicts=verdicts or stored_or(scenario_verdicts),
                         cluster=lambda r: trial_cluster(r, lambda c: scenario_tags(lang_of.get(c),
                                                                                   cluster_of.get(c, f"case:{c}"))),
                         splits=[lang_split(lang_of)])
