"""What went wrong in a run, trial by trial: every ``wrong`` per-metric verdict of its trials (and every errored
trial), with the verdict's why and what it is about (:class:`~knowgap.report.examples.Exhibit`: the input of the
call it judges, with the planted text marked, and that call's answer), for ``knowgap show RUN --failed`` and the
web app. A limit counts trials, each listed with all its failures.

The verdicts are the ones stored in each trial record (:class:`~knowgap.engine.records.Verdict`); a run recorded
before knowgap stored them gets them derived now by its suite from the stored scores (:meth:`Suite.trial_verdicts`),
and says so.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, Field

from knowgap.engine.records import TrialRecord, Verdict
from knowgap.errors import KnowgapError
from knowgap.report.data import CUT_NOTE, RunData
from knowgap.report.examples import Exhibit, trial_exhibits

ERROR = "error"
"""The metric name a listing gives an errored trial (its model call failed for good, or the suite raised)."""
EXCERPT_CHARS = 160


class Failure(BaseModel):
    """One wrong verdict (or one errored trial)."""

    trial_id: str
    config_id: str
    metric: str
    part: str | None = None
    call: int | None = Field(None, description="The index in the trial's calls of the call the verdict is about (its "
                                               "exhibit's; None: the suite names none).")
    why: str
    excerpt: str = Field(description="The start of the answer the verdict is about, whitespace collapsed (empty when "
                                     "the suite names no call for its part).")


class FailureList(BaseModel):
    run_id: str
    failures: list[Failure]
    """Every failure of the listed trials, worst first: errored trials, then trials with wrong verdicts in trial
    order (up to the limit of trials)."""
    exhibits: list[Exhibit] = Field(default_factory=list)
    """What the failures are about: one per listed trial, part and call (``trial_id``, ``part``, ``call``), in the
    same order."""
    total: int
    """Failures before the limit."""
    trials: int = 0
    """Trials with a failure, before the limit (what the limit counts)."""
    by_metric: dict[str, int]
    """Failures per metric (before the metric filter and the limit), for a filter."""
    source: Literal["stored", "derived", "none"]
    """Where the verdicts come from: the trial records, derived now (a run from before verdicts), or nowhere."""
    note: str = ""

    def exhibit(self, trial_id: str, part: str | None, call: int | None | Literal["any"] = "any") -> Exhibit | None:
        """What the failures of ``trial_id`` on ``part`` (and on ``call``, when given) are about."""
        return next((e for e in self.exhibits if e.trial_id == trial_id and e.part == part
                     and (call == "any" or e.call == call)), None)


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _source(run: RunData) -> tuple[Literal["stored", "derived", "none"], str]:
    if any(r.verdicts for r in run.records):
        return "stored", ""
    suite = run.manifest.config.suite
    if run.suite is None:
        return "none", (f"this run predates per-trial verdicts and its suite '{suite}' is not installed here: only "
                        "errored trials are listed")
    return "derived", f"this run predates per-trial verdicts: derived now from its stored scores by suite '{suite}'"


def _listed(run: RunData, r: TrialRecord, verdicts: list[Verdict]) -> tuple[list[Failure], list[Exhibit]]:
    """A trial's failures (``verdicts``: its wrong ones, or none for an errored trial) and their exhibits."""
    if r.status != "ok":
        [(shown, _)] = trial_exhibits(run, r, [])
        return [Failure(trial_id=r.trial_id, config_id=r.config_id, metric=ERROR, call=shown.call,
                        why=excerpt(r.error or "errored"), excerpt="")], [shown]
    exhibits = trial_exhibits(run, r, verdicts)
    failures = [Failure(trial_id=r.trial_id, config_id=r.config_id, metric=v.metric, part=v.part, call=shown.call,
                        why=v.why, excerpt=excerpt(shown.answer))
                for shown, group in exhibits for v in group]
    return failures, [shown for shown, _ in exhibits]


def list_failures(run: RunData, metric: str | None = None, limit: int | None = None) -> FailureList:
    """The run's failures, of ``metric`` only when given (``error``: the errored trials), from at most ``limit``
    trials (each with all its failures of ``metric``).

    One pass over the records (after the early-stopping look for stored verdicts), keeping the counts and the
    failures of at most ``limit`` errored and ``limit`` failing trials: memory does not grow with the run when a
    limit is given.
    """
    source, note = _source(run)
    errors: list[tuple[list[Failure], list[Exhibit]]] = []
    wrong: list[tuple[list[Failure], list[Exhibit]]] = []
    counts: Counter[str] = Counter()
    total = trials = 0
    judged = False
    for r in run.records:
        if r.status != "ok":
            counts[ERROR] += 1
            if metric in (None, ERROR):
                total, trials = total + 1, trials + 1
                if limit is None or len(errors) < limit:
                    errors.append(_listed(run, r, []))
            continue
        verdicts = run.suite.trial_verdicts(r) if run.suite is not None else r.verdicts
        judged = judged or bool(verdicts)
        failing = [v for v in verdicts if v.verdict == "wrong"]
        counts.update(v.metric for v in failing)
        failing = [v for v in failing if metric is None or v.metric == metric]
        if failing:
            total, trials = total + len(failing), trials + 1
            if limit is None or len(wrong) < limit:
                wrong.append(_listed(run, r, failing))
    if source == "derived" and not judged:
        source, note = "none", f"suite '{run.manifest.config.suite}' gives no per-trial verdicts"
    if metric is not None and metric != ERROR and run.suite is not None and run.suite.declares_metric(metric) is False:
        known = ", ".join(sorted(counts)) or "none"
        raise KnowgapError(f"run {run.run_id}: suite '{run.manifest.config.suite}' has no metric '{metric}' "
                           f"(metrics that failed in this run: {known})")
    picked = (errors + wrong)[:limit] if limit is not None else errors + wrong
    return FailureList(run_id=run.run_id, failures=[f for fs, _ in picked for f in fs],
                       exhibits=[e for _, es in picked for e in es], total=total, trials=trials,
                       by_metric=dict(sorted(counts.items())), source=source, note=note)


TEXT_INPUT_CHARS = 320
"""How much of an input the text listing shows (the planted text whole, with context either side)."""


def _one_line(text: str) -> str:
    return " ".join(text.split())


def failure_lines(found: FailureList, *, metric: str | None = None, limit: int | None = None) -> list[str]:
    """The listing as text, as ``knowgap show RUN --failed`` prints it: a count line, then each trial with, per part,
    the input (planted text between ``[[planted: `` and ``]]``), the answer and each failure's metric and why."""
    counts = ", ".join(f"{name} {n}" for name, n in found.by_metric.items())
    what = f" of {metric}" if metric else ""
    lines = [f"{found.run_id}: {found.total} failures{what} in {found.trials} trials"
             + (f" ({counts})" if counts and not metric else "")
             + (f"; the first {limit} trials" if limit is not None and found.trials > limit > 1 else "")
             + ("; the first trial" if limit == 1 and found.trials > 1 else "")]
    trials: set[str] = set()
    parts: set[tuple[str, str | None, int | None]] = set()
    for f in found.failures:
        if f.trial_id not in trials:
            trials.add(f.trial_id)
            lines.append(f"- {f.trial_id}")
        if (f.trial_id, f.part, f.call) not in parts:
            parts.add((f.trial_id, f.part, f.call))
            lines += _exhibit_lines(found.exhibit(f.trial_id, f.part, f.call), f.part)
        lines.append(f"{'    ' if f.part else '  '}{f.metric}: {f.why}")
    return lines


def _exhibit_lines(shown: Exhibit | None, part: str | None) -> list[str]:
    indent = "    " if part else "  "
    lines = [f"  {part}"] if part else []
    if shown is None or not shown.shown:
        return lines
    if shown.input:
        lines.append(f"{indent}input: {_one_line(shown.input_text(TEXT_INPUT_CHARS))}")
    if shown.answer:
        cut = f" ({CUT_NOTE})" if shown.cut else ""
        lines.append(f"{indent}answer{cut}: {excerpt(shown.answer)!r}")
    return lines
