"""What went wrong in a run: every ``wrong`` per-metric verdict of its trials (and every errored trial), with the
verdict's why and a short excerpt of the answer, for ``knowgap show RUN --failed`` and the web app.

The verdicts are the ones stored in each trial record (:class:`~knowgap.engine.records.Verdict`); a run recorded
before knowgap stored them gets them derived now by its suite from the stored scores (:meth:`Suite.trial_verdicts`),
and says so.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, Field

from knowgap.errors import KnowgapError
from knowgap.report.data import RunData, response_text

ERROR = "error"
"""The metric name a listing gives an errored trial (its model call failed for good, or the suite raised)."""
EXCERPT_CHARS = 160


class Failure(BaseModel):
    """One wrong verdict (or one errored trial)."""

    trial_id: str
    config_id: str
    metric: str
    part: str | None = None
    why: str
    excerpt: str = Field(description="The start of the target's answer, whitespace collapsed.")


class FailureList(BaseModel):
    run_id: str
    failures: list[Failure]
    """Worst first: errored trials, then wrong verdicts in trial order (up to the limit)."""
    total: int
    """Failures before the limit."""
    by_metric: dict[str, int]
    """Failures per metric (before the metric filter and the limit), for a filter."""
    source: Literal["stored", "derived", "none"]
    """Where the verdicts come from: the trial records, derived now (a run from before verdicts), or nowhere."""
    note: str = ""


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


def list_failures(run: RunData, metric: str | None = None, limit: int | None = None) -> FailureList:
    """The run's failures, of ``metric`` only when given (``error``: the errored trials), at most ``limit``.

    One pass over the records (after the early-stopping look for stored verdicts), keeping the counts and at
    most ``limit`` errored and ``limit`` wrong failures: memory does not grow with the run when a limit is given.
    """
    source, note = _source(run)
    errors: list[Failure] = []
    wrong: list[Failure] = []
    counts: Counter[str] = Counter()
    total = 0
    judged = False

    def wanted(name: str, kept: list[Failure]) -> bool:
        nonlocal total
        counts[name] += 1
        if metric is not None and name != metric:
            return False
        total += 1
        return limit is None or len(kept) < limit

    for r in run.records:
        if r.status != "ok":
            if wanted(ERROR, errors):
                errors.append(Failure(trial_id=r.trial_id, config_id=r.config_id, metric=ERROR,
                                      why=excerpt(r.error or "errored"), excerpt=""))
            continue
        verdicts = run.suite.trial_verdicts(r) if run.suite is not None else r.verdicts
        judged = judged or bool(verdicts)
        text: str | None = None
        for v in verdicts:
            if v.verdict == "wrong" and wanted(v.metric, wrong):
                text = excerpt(response_text(r)) if text is None else text
                wrong.append(Failure(trial_id=r.trial_id, config_id=r.config_id, metric=v.metric, part=v.part,
                                     why=v.why, excerpt=text))
    if source == "derived" and not judged:
        source, note = "none", f"suite '{run.manifest.config.suite}' gives no per-trial verdicts"
    if metric is not None and metric != ERROR and run.suite is not None and run.suite.declares_metric(metric) is False:
        known = ", ".join(sorted(counts)) or "none"
        raise KnowgapError(f"run {run.run_id}: suite '{run.manifest.config.suite}' has no metric '{metric}' "
                           f"(metrics that failed in this run: {known})")
    picked = errors + wrong
    return FailureList(run_id=run.run_id, failures=picked[:limit] if limit is not None else picked,
                       total=total, by_metric=dict(sorted(counts.items())), source=source, note=note)
