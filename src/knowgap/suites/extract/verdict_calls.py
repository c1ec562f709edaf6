"""The call an extract verdict is about (:meth:`ExtractSuite.verdict_call`), from the order a trial makes its target
calls: the ``--runs`` clean runs of the review, then (an adversarial case) as many of the injected review; judge
calls are the judge's.

- ``run K`` (a normal case's run K, from 1): the K-th target call;
- ``injected run K`` (runs stored before extract's adversarial verdicts came from the injection driver) and
  ``injection I (...)`` (the driver's part: injected run I, from 0): that injected run's call, read against the
  first clean run's call, so the text the attack added to the review is what its input adds to the clean one.

A verdict on the whole trial is about the first target call.
"""

from __future__ import annotations

import re

from knowgap.engine.records import TrialRecord, Verdict
from knowgap.engine.verdict_calls import VerdictCall, first_target, nth_target, target_calls
from knowgap.injection.verdict_calls import PART as INJECTION_PART

RUN = re.compile(r"run (\d+)$")
INJECTED_RUN = re.compile(r"injected run (\d+)$")


def extract_verdict_call(record: TrialRecord, verdict: Verdict) -> VerdictCall | None:
    part = verdict.part
    if part is None:
        return first_target(record)
    clean = record.output.get("clean")
    runs = len(clean) if isinstance(clean, list) else 0
    if found := RUN.match(part):
        return nth_target(record, int(found.group(1)) - 1) if int(found.group(1)) >= 1 else None
    index = None
    if found := INJECTED_RUN.match(part):
        index = int(found.group(1)) - 1
    elif found := INJECTION_PART.match(part):
        index = int(found.group(1))
    if index is None or index < 0 or record.output.get("kind") != "adversarial":
        return None
    injected = record.output.get("injected")
    if not isinstance(injected, list) or index >= len(injected) or len(target_calls(record)) < runs + len(injected):
        return None
    return nth_target(record, runs + index, clean=target_calls(record)[0])
