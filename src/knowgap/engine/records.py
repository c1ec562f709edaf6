"""Records of a run: its manifest, and one TrialRecord per finished trial (appended to trials.jsonl)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from knowgap.engine.stopping_rule import StoppingRule, StopRecord
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.stats import ClusterCounts, cluster_counts, clustered_wilson, effective_n, mean_interval, wilson

ScoreValue = float | int | bool | str | None
TagValue = str | list[str]
"""One of a trial's case tags (:attr:`TrialRecord.case_tags`): a value (a family, a cluster key) or several."""
RunStatus = Literal["running", "finished", "finished_with_errors", "failed", "interrupted", "stopped"]
"""running, finished (every trial ok), finished_with_errors, failed (no trial ok), interrupted (resume it), stopped
(its stopping rule ended it before every case ran: ``--until decided`` or a budget; resume continues it)."""
Executor = Literal["local", "ray"]
"""Where a run's trials run: in this process, or on a Ray cluster's workers (knowgap.engine.ray_executor)."""


def utcnow() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class CallRecord(BaseModel):
    """One model call made inside a trial, as it went."""

    role: str
    model: str
    request: ChatRequest
    response: ChatResponse | None = None
    error: str | None = None
    attempts: int = 1
    cached: bool = False


class Verdict(BaseModel):
    """One metric's verdict on one trial (or on one part of it: a run of an extract case, a turn): whether the
    trial showed the behaviour the metric wants, and why in one short line. ``right``/``wrong`` is the desired
    behaviour, not the raw label: for a rate where lower is better (``flip_rate``) a flip is ``wrong``."""

    metric: str
    """The metric's base name (``sentiment_accuracy``, not a breakdown ``flip_rate:position=end``)."""
    verdict: Literal["right", "wrong", "not_scored"]
    why: str = ""
    part: str | None = None
    """Which part of the trial, when a trial feeds a metric more than once (``run 2``); None: the whole trial."""


class TrialRecord(BaseModel):
    """Everything one trial (case, configuration, repeat) produced. Written once, when it finishes."""

    trial_id: str
    case_id: str
    config_id: str
    config: dict[str, Any] = Field(default_factory=dict)
    repeat: int = 0
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
    calls: list[CallRecord] = Field(default_factory=list)
    output: dict[str, Any] = Field(default_factory=dict)
    """What the suite extracted from the responses (parsed answer, citation, parse failure...)."""
    scores: dict[str, ScoreValue] = Field(default_factory=dict)
    verdicts: list[Verdict] = Field(default_factory=list)
    """Per-metric verdicts (:meth:`knowgap.Suite.verdicts`); empty in runs recorded before knowgap stored them."""
    case_tags: dict[str, TagValue] | None = None
    """What the suite's groups and intervals read of the trial's case, as its dataset said when the trial ran
    (:meth:`knowgap.Suite.case_tags`: partial's restriction dimensions and family, the cluster...), so a stored run's
    metrics count each trial where it ran whatever the dataset says today. None in runs recorded before knowgap
    stored them: the suite reads them from today's dataset (:func:`knowgap.engine.case_tags.dataset_note` says so)."""
    started_at: str = ""
    duration_s: float = 0.0


class ModelUsage(BaseModel):
    calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = None


class MetricValue(BaseModel):
    """One metric for one group of trials, with its 95% confidence interval (clustered: see
    :mod:`knowgap.stats`)."""

    name: str
    group: str
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0
    """Trials (observations) behind the value; for a count, the count."""
    n_cases: int | None = None
    """The independent units the interval counts: the clusters (cases, or the source that cases share, as the
    suite documents). None for a count, and in metrics stored before knowgap counted clusters (read: n)."""
    n_eff: float | None = None
    """A clustered proportion's effective sample size (Kish; :func:`knowgap.stats.effective_n`), the n its
    interval uses; None when it is n (every trial its own cluster) and for means and counts."""
    kind: Literal["proportion", "mean", "count"] = "proportion"
    description: str = ""

    @property
    def cases(self) -> int:
        """The clusters behind the interval: ``n_cases``, or ``n`` for a metric stored without it."""
        return self.n if self.n_cases is None else self.n_cases

    def n_text(self) -> str:
        """"n cases / n trials" (e.g. ``24 / 72``) when clusters hold several trials, else n alone."""
        if self.kind == "count" or self.n_cases is None or self.n_cases == self.n:
            return str(self.n)
        return f"{self.n_cases} / {self.n}"

    @classmethod
    def proportion(cls, name: str, group: str, k: int, n: int, description: str = "",
                   clusters: ClusterCounts | None = None) -> MetricValue:
        """k of n, with a Wilson 95% CI (value and CI None when n is 0). ``clusters``, (successes, trials) per
        cluster summing to k and n, makes it the clustered Wilson interval; without it every trial is its own
        cluster."""
        if clusters is not None and (sum(c[0] for c in clusters), sum(c[1] for c in clusters)) != (k, n):
            raise ValueError(f"{name}: the clusters hold {sum(c[0] for c in clusters)} of "
                             f"{sum(c[1] for c in clusters)}, not {k} of {n}")
        lo, hi = (wilson(k, n) if clusters is None else clustered_wilson(clusters)) if n else (None, None)
        n_eff = effective_n(clusters) if clusters is not None and n else None
        return cls(name=name, group=group, value=k / n if n else None, ci_low=lo, ci_high=hi, n=n,
                   n_cases=n if clusters is None else len(clusters), n_eff=None if n_eff == n else n_eff,
                   kind="proportion", description=description)

    @classmethod
    def proportion_of(cls, name: str, group: str, outcomes: Sequence[bool], keys: Sequence[Hashable] | None = None,
                      description: str = "") -> MetricValue:
        """The share of true ``outcomes``; ``keys[i]`` is outcome i's cluster (None: each its own)."""
        clusters = cluster_counts(outcomes, keys) if keys is not None else None
        return cls.proportion(name, group, sum(map(bool, outcomes)), len(outcomes), description, clusters)

    @classmethod
    def mean(cls, name: str, group: str, values: Sequence[float], description: str = "",
             seed: int = 0, keys: Sequence[Hashable] | None = None, unbounded: bool = False) -> MetricValue:
        """The mean of ``values``, with a seeded bootstrap 95% CI (value and CI None when there are none);
        ``keys[i]`` is value i's cluster and the bootstrap resamples clusters (None: each value its own). Where
        the clusters show no spread the CI is Wilson's for scores in [0, 1] and None otherwise, or always None
        for a quantity that is not a [0, 1] score (``unbounded``) (:func:`~knowgap.stats.mean_interval`),
        never a zero-width interval."""
        n = len(values)
        keys = list(range(n)) if keys is None else keys
        lo, hi = mean_interval(values, keys, seed=seed, unbounded=unbounded) or (None, None)
        return cls(name=name, group=group, value=sum(values) / n if n else None, ci_low=lo, ci_high=hi, n=n,
                   n_cases=len(set(keys)), kind="mean", description=description)

    @classmethod
    def count(cls, name: str, group: str, k: int, description: str = "") -> MetricValue:
        return cls(name=name, group=group, value=float(k), n=k, kind="count", description=description)


class RunSettings(BaseModel):
    """How a run calls its models and repeats its trials: shared by a run's configuration and evaluation files."""

    models: dict[str, str] = Field(default_factory=dict,
                                   description="Model spec per role (target, judge, generator).")
    repeats: int = Field(default=1, ge=1, description="Repeats per (case, configuration).")
    seed: int = Field(default=0, description="Seed for sampling and model calls.")
    concurrency: int | None = Field(default=None, ge=1, description="Trials in flight at once; null lets each "
                                                                      "model's default decide.")
    use_cache: bool = Field(default=True, description="Reuse cached responses from other runs.")
    timeout_s: float = Field(default=300.0, gt=0, description="Seconds per model call before a retry.")
    max_retries: int = Field(default=6, ge=0, description="Retries of a transient model error.")
    rpm: int | None = Field(default=None, ge=1, description="Requests per minute, a limit for each model on its "
                                                            "own; null: none.")
    tpm: int | None = Field(default=None, ge=1, description="Tokens (prompt + completion) per minute, a limit for "
                                                            "each model on its own; null: none.")
    prices: dict[str, tuple[float, float]] = Field(default_factory=dict,
                                                   description="USD per 1M (prompt, completion) tokens by spec.")


class RunConfig(RunSettings):
    """The whole configuration of a run: enough to resume it or run it again."""

    suite: str
    options: dict[str, Any] = Field(default_factory=dict)
    executor: Executor = Field(
        default="local", description="Where trials run: local (this process) or ray (a Ray cluster's workers; "
                                     "the run store and the response cache stay with this process).")
    ray_address: str | None = Field(default=None, description="The Ray cluster to join with executor ray "
                                                               "(HOST:PORT or auto); none: start or join a local Ray.")
    stopping: StoppingRule | None = Field(default=None, description="Run the cases in a seeded random order and stop "
                                                                    "when the rule says (--until); none: every case, "
                                                                    "in plan order.")


class ErrorCause(BaseModel):
    """Errored trials that share one cause: how many, and the first such trial's message."""

    trials: int
    message: str


class MetricJudge(BaseModel):
    """The judge that decided a metric in a run: catalogue name, version, judge model (model-backed judges) and
    whether the metric is a proportion of its positive or negative verdicts."""

    judge: str
    version: str
    judge_model: str | None = None
    counts: Literal["positive", "negative"] | None = None


class Manifest(BaseModel):
    run_id: str
    knowgap_version: str
    git_commit: str | None = None
    config: RunConfig
    dataset_hashes: dict[str, str] = Field(default_factory=dict)
    judges: dict[str, str] | None = None
    """Version of each judge prompt or spec the run uses (e.g. ``{"factuality": "factuality_v1"}``); None in
    manifests written before knowgap recorded them."""
    metric_judges: dict[str, MetricJudge] | None = None
    """The judge of each judged metric, by metric name; None in manifests written before knowgap recorded them."""
    computed_metrics: list[str] | None = None
    """The metric names no judge decides; None when the suite does not say (or an older manifest)."""
    models: dict[str, dict[str, str]] = Field(default_factory=dict)
    """Facts about each role's model (spec, backend, sha256 of a pack...)."""
    status: RunStatus = "running"
    started_at: str = Field(default_factory=utcnow)
    ended_at: str | None = None
    resumed_at: list[str] = Field(default_factory=list)
    trials_total: int = 0
    trials_ok: int = 0
    trials_error: int = 0
    usage: dict[str, dict[str, ModelUsage]] = Field(default_factory=dict)
    """Usage by role, then by model spec: the sum over every call stored in trials.jsonl (resumes included)."""
    error_causes: list[ErrorCause] = Field(default_factory=list)
    """Why trials errored: the most frequent causes, most frequent first."""
    sequential: StopRecord | None = None
    """A run with a stopping rule (``--until``): each gated metric's confidence sequence, where it stopped and why;
    None for a run of every case in plan order."""
    repaired: str | None = None
    """How ``knowgap repair`` rebuilt this manifest (when, from what, and what the old one was), or None."""
    damage: str | None = None
    """What reading the run found wrong with its files (a torn last line in trials.jsonl), or None. Set when the run
    is read (``RunStore.current_manifest``), never written to the file."""
