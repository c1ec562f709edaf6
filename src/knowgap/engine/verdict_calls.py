"""Which model call of a trial a verdict is about: the call whose input and answer a listing shows beside the
verdict (``knowgap show RUN --failed``, the report's worst examples), and the clean call an injected or pressured
call is a variant of, against which the planted text is found.

A suite says it (:meth:`knowgap.Suite.verdict_call`): a verdict on a whole trial is about its first target call
by default; a verdict on a part (``injected run 1``, ``injection 0 (...)``, ``pressured run``) is about the call
of that part, which only the suite that wrote the part knows.
"""

from __future__ import annotations

from dataclasses import dataclass

from knowgap.engine.records import TrialRecord

TARGET = "target"


@dataclass(frozen=True)
class VerdictCall:
    """One call of a trial a verdict is about."""

    call: int
    """Its index in the trial's ``calls``."""
    clean: int | None = None
    """The index of the clean call it is a variant of (an injected run's clean run; the unpressured question), or
    None: the call is no variant (then nothing is planted in it)."""
    planted: tuple[str, ...] = ()
    """The planted text as the run stored it (an injection's payload), marked where it occurs verbatim; when it
    does not (a defence rewrote it) or is not stored, the text the call's input adds to the clean call's is."""


def target_calls(record: TrialRecord) -> list[int]:
    """The indices of the trial's calls of its target model, in the order they were made."""
    return [i for i, c in enumerate(record.calls) if c.role == TARGET]


def nth_target(record: TrialRecord, n: int, *, clean: int | None = None,
               planted: tuple[str, ...] = ()) -> VerdictCall | None:
    """The trial's ``n``-th target call (from 0; negative from the end), or None when it made fewer."""
    calls = target_calls(record)
    if not -len(calls) <= n < len(calls):
        return None
    return VerdictCall(calls[n], clean=clean, planted=planted)


def answering_target(record: TrialRecord, answer: object) -> VerdictCall | None:
    """The trial's first target call whose answer is ``answer`` (a suite's stored reply: the call that gave it, in a
    trial whose target is asked several times, such as an agent's evidence requests before its answer), or None."""
    if not isinstance(answer, str):
        return None
    return next((VerdictCall(i) for i in target_calls(record)
                 if (response := record.calls[i].response) is not None and response.text == answer), None)


def first_target(record: TrialRecord) -> VerdictCall | None:
    """The trial's first target call (a verdict on the whole trial, by default), or None when it made none."""
    return nth_target(record, 0)
