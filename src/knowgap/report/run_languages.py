"""The languages a run's metrics are on, for checking each metric's judge card against them (issue 37: a metric
on a language its card does not cover shows ``no card for zh``).

A run's languages are those of the cases its trials ran: a case's ``lang`` field (clarify, partial, extract,
starter, the abstain scenarios), else the language of its ``question`` text (abstain's leave-one-out cases,
:func:`knowgap.text.detect_lang`). A metric broken down by language (``sentiment_accuracy:lang=zh``, a group
``... · lang=zh``) is on that language alone. None when they cannot be known (the suite is not installed, or its
cases name no language and hold no question): the check is then not made.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from knowgap.engine.records import Manifest, MetricValue, TrialRecord
from knowgap.engine.suite import Case
from knowgap.text import detect_lang

Languages = tuple[str, ...]
_LANG = re.compile(r"(?:^|[\s:·,\[])lang=([a-z]{2})\b")


def case_language(case: Case) -> str | None:
    """``zh`` or ``en`` for a case: its ``lang`` field, else its question's language; None when neither is there."""
    lang = getattr(case, "lang", None)
    if lang is None and callable(getattr(case, "effective_lang", None)):
        lang = case.effective_lang()  # type: ignore[attr-defined]
    if isinstance(lang, str) and lang:
        return lang
    question = getattr(case, "question", None)
    return detect_lang(question) if isinstance(question, str) and question.strip() else None


def languages_of(cases: Iterable[Case], case_ids: Iterable[str] | None = None) -> Languages | None:
    """The sorted languages of ``cases`` (only those whose id is in ``case_ids`` when given); None when a case
    has no language to tell."""
    wanted = None if case_ids is None else set(case_ids)
    found: set[str] = set()
    for case in cases:
        if wanted is not None and case.id not in wanted:
            continue
        lang = case_language(case)
        if lang is None:
            return None
        found.add(lang)
    return tuple(sorted(found)) or None


def run_languages(manifest: Manifest, records: Iterable[TrialRecord] | None = None) -> Languages | None:
    """The languages of a run's cases: those of its trials' cases (``records``), else of the cases its options
    plan (the suite's cases, ``--sample`` drawn as the engine draws it). None when they cannot be told."""
    from knowgap.engine.sampling import sample_cases
    from knowgap.report.data import load_suite

    suite = load_suite(manifest)
    if suite is None:
        return None
    try:
        cases: Sequence[Case] = suite.cases()
    except Exception:  # noqa: BLE001 - a dataset that no longer loads: the languages are unknown, not an error
        return None
    if records is not None:
        return languages_of(cases, {r.case_id for r in records})
    sample = getattr(suite.options, "sample", None)
    if sample is not None and sample < len(cases):
        cases = sample_cases(cases, sample, manifest.config.seed)
    return languages_of(cases)


def metric_languages(metric: MetricValue, run: Languages | None) -> Languages | None:
    """The languages one metric is on: the one its name or group names (``lang=zh``), else the run's."""
    for text in (metric.name, metric.group):
        if found := _LANG.search(text):
            return (found.group(1),)
    return run
