"""How a run ended: its status from the trial counts, and why trials errored, grouped by cause.

Statuses: ``running`` (a writer holds the run), ``finished`` (every trial ok), ``finished_with_errors`` (some
trials errored: the metrics leave them out), ``failed`` (no trial ok), ``interrupted`` (stopped before every
trial ran: Ctrl-C, a stop signal, or a dead writer; resume it), ``stopped`` (its stopping rule, ``--until``, ended it
before every case ran; ``resume --until all`` continues it).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping

from knowgap.engine.records import ErrorCause, Manifest, RunStatus, TrialRecord
from knowgap.engine.usage import usage_from_trials

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_TRIAL_ERRORS = 3
EXIT_INTERRUPTED = 130

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_HEX = re.compile(r"\b[0-9a-f]{8,}\b")
_NUMBER = re.compile(r"(?<![\w:./-])\d+(?:\.\d+)?(?![\w.:/])")


def finished_status(ok: int, errors: int) -> RunStatus:
    """The status of a run whose every planned trial ran: ``failed`` when none is ok."""
    if ok == 0:
        return "failed"
    return "finished_with_errors" if errors else "finished"


def cause_key(message: str) -> str:
    """An error message with what varies between trials (quoted text, ids, counts, durations) masked; ports,
    addresses and URLs are kept, so one dead server is one cause."""
    return _NUMBER.sub("N", _HEX.sub("#", _QUOTED.sub("'…'", message.strip())))


def error_causes(records: Iterable[TrialRecord], top: int = 5) -> list[ErrorCause]:
    """The ``top`` most frequent causes of the errored trials among ``records``, most frequent first."""
    counts: dict[str, int] = {}
    first: dict[str, str] = {}
    for record in records:
        if record.status == "ok":
            continue
        message = (record.error or "unknown error").strip()
        key = cause_key(message)
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, message)
    ranked = sorted(counts, key=lambda k: -counts[k])
    return [ErrorCause(trials=counts[k], message=first[k]) for k in ranked[:top]]


def describe_causes(causes: list[ErrorCause], errors: int, limit: int = 300) -> list[str]:
    """One line per cause (``N trials: message``), and a last line for errored trials not shown."""
    lines = [f"{c.trials} trial{'s' if c.trials != 1 else ''}: "
             f"{c.message if len(c.message) <= limit else c.message[:limit] + '…'}" for c in causes]
    rest = errors - sum(c.trials for c in causes)
    if rest > 0:
        lines.append(f"{rest} {'more ' if causes else ''}errored trial{'s' if rest != 1 else ''}"
                     f"{' with other causes' if causes else ''}")
    return lines


def status_text(manifest: Manifest) -> str:
    """The status as a person reads it: with the errored trials, or how to resume; and what is damaged in the run's
    files, when reading them found something (``Manifest.damage``)."""
    damage = f"; damaged: {manifest.damage}" if manifest.damage else ""
    if manifest.status == "interrupted":
        return f"interrupted — resume with knowgap resume {manifest.run_id}{damage}"
    if manifest.status == "stopped" and manifest.sequential is not None:
        record = manifest.sequential
        return (f"stopped after {record.units_run} of {record.units_total} cases ({record.reason}) — continue to every "
                f"case with knowgap resume {manifest.run_id} --until all{damage}")
    if manifest.status in ("failed", "finished_with_errors") and manifest.trials_error:
        return f"{manifest.status} ({manifest.trials_error} of {manifest.trials_total} trials errored){damage}"
    return manifest.status + damage


def error_report(manifest: Manifest) -> list[str]:
    """Lines saying that and why trials errored (empty when none did)."""
    if not manifest.trials_error:
        return []
    head = (f"run {manifest.status}: {manifest.trials_error} of {manifest.trials_total} trials errored "
            "(left out of the metrics); first causes:")
    return [head] + ["  " + line for line in describe_causes(manifest.error_causes, manifest.trials_error)]


def tally_trials(manifest: Manifest, records: Iterable[TrialRecord], every_record: Iterable[TrialRecord],
                 prices: Mapping[str, tuple[float, float]] | None) -> None:
    """Trial counts, error causes and usage in ``manifest``, from a run's stored trials: ``records`` (one per
    trial, the last of each) and ``every_record`` (every stored line, resumes included, for the usage)."""
    statuses: Counter[str] = Counter()

    def counted() -> Iterator[TrialRecord]:
        for record in records:
            statuses[record.status] += 1
            yield record

    manifest.error_causes = error_causes(counted())
    manifest.trials_ok = statuses["ok"]
    manifest.trials_error = sum(statuses.values()) - statuses["ok"]
    manifest.usage = usage_from_trials(every_record, prices)
