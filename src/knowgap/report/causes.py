"""Where a run fails most: its ``wrong`` per-trial verdicts grouped by cause (the verdict's ``why`` with its
numbers taken out, so ``cited fact 99`` and ``cited fact 12`` are one cause), largest first, each with the
metrics it fails, the trials it holds, the configurations it is most in and one example trial; errored trials
are one cause per normalised error.

One pass over the run's records, keeping counts per cause and one example each: memory grows with the causes, not
with the trials. A run recorded before trials stored verdicts gets them from its suite, as ``knowgap show RUN
--failed`` does.
"""

from __future__ import annotations

import re
from collections import Counter

from pydantic import BaseModel, Field

from knowgap.engine.records import TrialRecord
from knowgap.redaction import redact
from knowgap.report.data import RunData

NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:[.,]\d+)?")
ERROR_PREFIX = "errored: "
MAX_WHY = 200


def cause_of(why: str) -> str:
    """A verdict's why with its numbers as ``#`` (``cited fact #, which is not in the context``)."""
    text = " ".join(why.split())
    return NUMBER.sub("#", text)[:MAX_WHY] or "(no reason given)"


class Cause(BaseModel):
    cause: str
    """The normalised why (``errored: ...`` for errored trials)."""
    metrics: list[str]
    """The metrics whose verdicts say it, most frequent first."""
    trials: int
    """Distinct trials with a wrong verdict (or an error) of this cause."""
    groups: list[tuple[str, int]] = Field(default_factory=list)
    """The configurations it is in, with its trials there, most first."""
    example: str = ""
    """One trial showing it (the first seen)."""
    example_case: str = ""
    """That trial's case."""
    example_why: str = ""
    """That trial's why, with its numbers."""
    baseline_trials: int | None = None
    """Against a baseline run: its trials of this cause (0 when it has none); None without a baseline."""


class RunCauses(BaseModel):
    run_id: str
    suite: str
    trials: int
    """Trials with a verdict (or an error)."""
    failed: int
    """Trials with at least one wrong verdict or an error."""
    causes: list[Cause]
    """Largest first (at most the limit)."""
    more: int = 0
    """Causes left out by the limit."""
    judged: bool = True
    """False when no trial carries a verdict (the suite gives none, or it is not installed)."""
    baseline: str | None = None
    """The baseline run the causes' ``baseline_trials`` count in."""
    baseline_of: int = 0
    """The baseline's trials with a verdict (or an error)."""


def failure_causes(run: RunData, limit: int = 5) -> RunCauses:
    """The run's failed verdicts grouped by cause, the ``limit`` largest."""
    trials: Counter[str] = Counter()
    metrics: dict[str, Counter[str]] = {}
    groups: dict[str, Counter[str]] = {}
    example: dict[str, tuple[str, str, str]] = {}
    judged_trials = failed = 0
    judged = False

    def see(found: list[tuple[str, str, str]], r: TrialRecord) -> None:
        """One trial's (cause, metric, why) triples: each cause counts the trial once."""
        for cause, metric, why in found:
            metrics.setdefault(cause, Counter())[metric] += 1
            example.setdefault(cause, (r.trial_id, r.case_id, why))
        for cause in dict.fromkeys(c for c, _, _ in found):
            trials[cause] += 1
            groups.setdefault(cause, Counter())[r.config_id] += 1

    for r in run.records:
        if r.status != "ok":
            judged_trials += 1
            failed += 1
            why = redact(r.error or "errored")
            see([(ERROR_PREFIX + cause_of(why), "error", why)], r)
            continue
        verdicts = run.suite.trial_verdicts(r) if run.suite is not None else r.verdicts
        if not verdicts:
            continue
        judged = True
        judged_trials += 1
        wrong = [(cause_of(why), v.metric, why) for v in verdicts if v.verdict == "wrong" for why in [redact(v.why)]]
        failed += bool(wrong)
        see(wrong, r)
    ranked = sorted(trials, key=lambda c: (-trials[c], c))
    causes = [Cause(cause=c, metrics=[m for m, _ in metrics[c].most_common()], trials=trials[c],
                    groups=groups[c].most_common(), example=example[c][0], example_case=example[c][1],
                    example_why=example[c][2])
              for c in ranked[:limit]]
    return RunCauses(run_id=run.run_id, suite=run.manifest.config.suite, trials=judged_trials, failed=failed,
                     causes=causes, more=max(0, len(ranked) - limit), judged=judged)


def against(found: RunCauses, baseline: RunData) -> RunCauses:
    """``found`` with each cause's trials in ``baseline`` beside its own (a comparison's B against its A)."""
    base = failure_causes(baseline, limit=1_000_000)
    counts = {c.cause: c.trials for c in base.causes}
    return found.model_copy(update={
        "baseline": base.run_id, "baseline_of": base.trials,
        "causes": [c.model_copy(update={"baseline_trials": counts.get(c.cause, 0)}) for c in found.causes]})
