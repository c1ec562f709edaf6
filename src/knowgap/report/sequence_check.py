"""A gate's check of a run that ``--until`` stopped before every case ran: read from the metric's confidence
sequence (:mod:`knowgap.report.sequential` builds the rule and the report pieces)."""

from __future__ import annotations

from knowgap.engine.records import MetricValue
from knowgap.engine.stopping_rule import StopRecord


def sequential_check(op: str, value: float, use: str, record: StopRecord, m: MetricValue) -> tuple[bool, str] | None:
    """For a run its rule stopped before every case ran: the check ``m OP VALUE`` read from the metric's sequence
    (valid at the run's level whatever threshold is asked: each end bounds the whole set's value at every stop),
    or failed when it has none; None for a run of every case (the metric's own value then is the whole set's). A
    check on the judge-corrected rate (``use: corrected``) reads the corrected sequence whenever the run has one,
    also after every case ran (the card's own uncertainty remains then)."""
    from knowgap.stats.sequential import decide

    corrected = use == "corrected"
    seq = next((s for s in record.sequences if s.metric == m.name and s.group == m.group
                and (s.corrected is not None) == corrected), None)
    if corrected and seq is not None and seq.low is not None and seq.high is not None:
        where = f"run stopped after {record.units_run} of {record.units_total} cases; corrected by the judge's card " \
                f"{seq.corrected.card.card if seq.corrected is not None else ''}"
    elif not record.stopped_early:
        return None  # every case ran: a corrected rate with no sequence is read at its point, as without --until
    else:
        where = f"run stopped after {record.units_run} of {record.units_total} cases"
    if use not in ("value", "corrected") or seq is None or seq.low is None or seq.high is None:
        return False, (f"{m.name}[{m.group}]: {where} with no sequence deciding it; continue it with knowgap resume "
                       "RUN --until all")
    verdict = decide(seq.low, seq.high, op, value)
    interval = f"[{seq.low:.4g}, {seq.high:.4g}] at alpha {record.rule.alpha:g}"
    if record.sides == "each":
        where += "; each end one-sided"
    if verdict == "undecided":
        return False, (f"{m.name}[{m.group}] undecided: its sequence {interval} holds both sides of {value:g} "
                       f"({where})")
    said = "satisfies" if verdict == "pass" else "violates"
    return verdict == "pass", f"{m.name}[{m.group}] sequence {interval} {said} {op} {value:g} ({where})"
