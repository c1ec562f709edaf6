"""The worst examples of a run: errored trials, then the trials the suite judged failed."""

from __future__ import annotations

from knowgap.engine.records import TrialRecord
from knowgap.report.data import RunData


def worst_examples(run: RunData, limit: int = 20) -> tuple[list[TrialRecord], bool]:
    """(up to ``limit`` trials, worst first; whether the suite gave a verdict per trial).

    Failed trials are spread over the groups (round robin) so one configuration does not fill the list. One pass
    over the records, keeping at most ``limit`` errored trials and ``limit`` failed trials per group (no more can
    be picked), so memory does not grow with the run.
    """
    judged = False
    failed: dict[str, list[TrialRecord]] = {}
    errors: list[TrialRecord] = []
    for r in run.records:
        if r.status != "ok":
            if len(errors) < limit:
                errors.append(r)
            continue
        verdict = run.trial_failed(r)
        if verdict is not None:
            judged = True
        if verdict:
            queue = failed.setdefault(r.config_id, [])
            if len(queue) < limit:
                queue.append(r)
    picked = errors[:limit]
    queues = [list(v) for _, v in sorted(failed.items())]
    while len(picked) < limit and any(queues):
        for q in queues:
            if q and len(picked) < limit:
                picked.append(q.pop(0))
    return picked, judged


def failure_counts(run: RunData) -> dict[str, tuple[int, int]]:
    """Per group: (failed trials, trials with a verdict)."""
    counts: dict[str, list[int]] = {}
    for r in run.records:
        verdict = run.trial_failed(r)
        if verdict is None:
            continue
        c = counts.setdefault(r.config_id, [0, 0])
        c[0] += int(verdict)
        c[1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(counts.items())}
