"""What the ``partial`` suite's metrics read of one trial record, so that computing them does not hold every record.

A record carries its model calls (each request's messages: the system prompt and the rendered view, often several
KB) and its reply; the metrics group every trial several times over (per configuration, family and restriction
dimension). They keep a :class:`TrialFacts` per trial instead: its ids, configuration, status, scores and
``output.injection``, and the target's system prompt only where the injection noise floor reads it (an injected
trial's repeat 1). It is also how the injection driver reads partial's trials
(:class:`knowgap.injection.driver.TrialView`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from knowgap.engine.records import TrialRecord


@dataclass(frozen=True, slots=True)
class TrialFacts:
    case_id: str
    config_id: str
    config: Mapping[str, Any]
    repeat: int
    status: str
    scores: Mapping[str, Any]
    injection: Mapping[str, Any] | None
    """The trial's ``output.injection`` (None for a trial without planted injections)."""
    system: str
    """The target's system prompt in an injected trial's repeat 1 (what the noise floor compares against);
    empty otherwise."""

    @classmethod
    def of(cls, record: TrialRecord) -> TrialFacts:
        injection = record.output.get("injection")
        system = ""
        if injection is not None and record.repeat == 1:
            system = next((m.content for c in record.calls if c.role == "target" for m in c.request.messages
                           if m.role == "system"), "")
        return cls(case_id=record.case_id, config_id=record.config_id, config=record.config, repeat=record.repeat,
                   status=record.status, scores=record.scores, injection=injection, system=system)
