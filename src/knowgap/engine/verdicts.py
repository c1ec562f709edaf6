"""Per-metric verdicts of one trial (:class:`~knowgap.engine.records.Verdict`): building them, reading a trial's
pass/fail from them, and counting them back into a metric's k of n.

A suite's :meth:`~knowgap.engine.suite.Suite.verdicts` turns a finished trial's scores into one verdict per
proportion metric the trial feeds (right / wrong / not scored, and why). The runner stores them in the trial's
record, so ``knowgap show RUN --failed`` and the web app list what went wrong without recomputing anything, and
:meth:`~knowgap.engine.suite.Suite.trial_failed` reads them.

Polarity: a metric whose value is a share of good behaviour (``accuracy``) counts its ``right`` verdicts; a rate
of bad behaviour (``flip_rate``, ``leak_rate``) counts its ``wrong`` ones. :func:`hits` gives that k of n, the
numbers the suite's metrics report: they are counted from the verdicts
(:func:`knowgap.engine.verdict_tally.count_metrics`).
"""

from __future__ import annotations

from collections.abc import Iterable

from knowgap.engine.records import TrialRecord, Verdict


def judged(metric: str, good: bool, why: str, *, part: str | None = None) -> Verdict:
    """``right`` when the trial showed the behaviour ``metric`` wants (``good``), else ``wrong``."""
    return Verdict(metric=metric, verdict="right" if good else "wrong", why=why, part=part)


def rate(metric: str, happened: bool, why: str, *, lower_is_better: bool, part: str | None = None) -> Verdict:
    """The verdict of one observation of a proportion ``metric`` whose numerator is ``happened``: ``wrong`` when
    it happened and the metric counts bad behaviour (``lower_is_better``), or did not happen and it counts good."""
    return judged(metric, happened != lower_is_better, why, part=part)


def not_scored(metric: str, why: str, *, part: str | None = None) -> Verdict:
    """The trial feeds ``metric`` in principle but was left out of it (did not parse, judge reply unreadable...)."""
    return Verdict(metric=metric, verdict="not_scored", why=why, part=part)


def failed(verdicts: Iterable[Verdict]) -> bool | None:
    """A trial's pass/fail from its verdicts: failed when one is ``wrong``; None when none is right or wrong."""
    scored = [v.verdict for v in verdicts if v.verdict != "not_scored"]
    if not scored:
        return None
    return "wrong" in scored


def hits(records: Iterable[TrialRecord], metric: str, *, lower_is_better: bool,
         config_id: str | None = None) -> tuple[int, int]:
    """(k, n) of proportion ``metric`` counted from the stored verdicts of ``records`` (of one configuration when
    ``config_id`` is given): n the right and wrong verdicts, k those in the numerator."""
    k = n = 0
    for r in records:
        if config_id is not None and r.config_id != config_id:
            continue
        for v in r.verdicts:
            if v.metric != metric or v.verdict == "not_scored":
                continue
            n += 1
            k += (v.verdict == "wrong") == lower_is_better
    return k, n
