"""The worst examples of a run: errored trials, then the trials the suite judged failed; and the failed trials per
group."""

from __future__ import annotations

from dataclasses import dataclass

from knowgap.engine.records import TrialRecord
from knowgap.report.data import RunData


@dataclass
class Failed:
    """What one pass over a run's records finds: its worst examples and its failed trials per group."""

    examples: list[TrialRecord]
    """Up to the limit, worst first: errored trials, then failed ones spread over the groups (round robin)."""
    judged: bool
    """Whether the suite gave a verdict per trial."""
    counts: dict[str, tuple[int, int]]
    """Per group: (failed trials, trials with a verdict)."""


def failed_trials(run: RunData, limit: int = 20) -> Failed:
    """The worst examples and the failed trials per group, in one pass over the records.

    Failed trials are spread over the groups (round robin) so one configuration does not fill the list. At most
    ``limit`` errored trials and ``limit`` failed trials per group are kept (no more can be picked), so memory does
    not grow with the run.
    """
    judged = False
    failed: dict[str, list[TrialRecord]] = {}
    errors: list[TrialRecord] = []
    counts: dict[str, list[int]] = {}
    for r in run.records:
        verdict = run.trial_failed(r)
        if verdict is not None:
            c = counts.setdefault(r.config_id, [0, 0])
            c[0] += int(verdict)
            c[1] += 1
        if r.status != "ok":
            if len(errors) < limit:
                errors.append(r)
            continue
        if verdict is not None:
            judged = True
        if verdict:
            queue = failed.setdefault(r.config_id, [])
            if len(queue) < limit:
                queue.append(r)
    picked = errors  # at most ``limit`` were kept
    queues = [list(v) for _, v in sorted(failed.items())]
    while len(picked) < limit and any(queues):
        for q in queues:
            if q and len(picked) < limit:
                picked.append(q.pop(0))
    return Failed(examples=picked, judged=judged, counts={k: (v[0], v[1]) for k, v in sorted(counts.items())})


def worst_examples(run: RunData, limit: int = 20) -> tuple[list[TrialRecord], bool]:
    """(up to ``limit`` trials, worst first; whether the suite gave a verdict per trial): see :func:`failed_trials`."""
    found = failed_trials(run, limit)
    return found.examples, found.judged


def failure_counts(run: RunData) -> dict[str, tuple[int, int]]:
    """Per group: (failed trials, trials with a verdict)."""
    return failed_trials(run, 0).counts
