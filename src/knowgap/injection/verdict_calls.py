"""The call an injected run's verdict is about (:meth:`knowgap.Suite.verdict_call` for the injection driver's
parts, ``injection 0 (ATTACK): "reply..."``): the target call that gave the run's stored reply, read against the
trial's clean call (its first target call), with the injection's payload as the planted text.

The calls of a trial with injected runs are the clean run's, then each injected run's in order
(:meth:`~knowgap.injection.driver.InjectionDriver.run`); a run's call is the next target call whose answer is the
reply the run stored. A run whose reply no single call gave (a suite whose injected run is a conversation) has no
call to show: None.
"""

from __future__ import annotations

import re

from knowgap.engine.records import TrialRecord, Verdict
from knowgap.engine.verdict_calls import VerdictCall, target_calls

PART = re.compile(r"injection (\d+)\b")
"""How the driver names an injected run's part (its number in ``output.injection.runs``, from 0)."""


def injected_call(record: TrialRecord, verdict: Verdict, reply_field: str = "raw") -> VerdictCall | None:
    """The call of the injected run ``verdict`` is about, or None: not an injected run's verdict, or no call gave
    its reply. ``reply_field``: the stored run's field holding the reply (the driver's ``reply_field``)."""
    found = PART.match(verdict.part or "")
    info = record.output.get("injection")
    if found is None or not isinstance(info, dict):
        return None
    runs, wanted = info.get("runs") or [], int(found.group(1))
    if wanted >= len(runs):
        return None
    targets = target_calls(record)
    if not targets:
        return None
    cursor = 0  # targets[0] is the clean run's call
    for i, run in enumerate(runs[: wanted + 1]):
        reply = run.get(reply_field)
        cursor = next((k for k in range(cursor + 1, len(targets))
                       if (response := record.calls[targets[k]].response) is not None and response.text == reply), -1)
        if cursor < 0:
            return None
        if i == wanted:
            planted = info.get("planted") or []
            injection = run.get("injection") or (planted[i] if i < len(planted) else {})
            payload = injection.get("payload") if isinstance(injection, dict) else None
            return VerdictCall(targets[cursor], clean=targets[0], planted=(payload,) if payload else ())
    return None
