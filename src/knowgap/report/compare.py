"""Compare two runs: per metric the change (B - A), its 95% CI and whether it is significant, plus the
trials that flipped.

- Both runs of one installed suite: a bootstrap over clusters that recomputes the suite's own metrics on each
  resample. A cluster is a case, or the source cases share (``Suite.clusters``: an extract review, a partial
  task, a clarify LawBench row), and a resample takes all its trials at once (repeats, runs). Paired when the
  runs share cases: every trial of the shared cases in both runs, their clusters resampled in both, so a
  run with 3 repeats pairs with a run of 1 per case (works for any metric a suite defines); independent
  otherwise.
- Otherwise (a suite that is not installed, or two different suites): from the stored metrics alone,
  Newcombe's interval and a two-proportion z-test for unclustered proportions, a normal approximation from
  the (clustered) CIs for means and for proportions whose trials share cases; counts get the change only.
- Flipped trials: matched trials whose pass/fail verdict (``Suite.trial_failed``) changed, with a clustered
  McNemar test per group (:func:`knowgap.stats.clustered_mcnemar`: the exact McNemar test on clusters, a
  cluster counting as fixed or regressed by the sign of its trials' net change; the plain exact McNemar test when
  every cluster holds one matched trial); trials whose scores changed when the suite gives no verdict.
"""

from __future__ import annotations

import math
import random
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from knowgap.engine.records import Manifest, MetricJudge, MetricValue, ScoreValue, TrialRecord
from knowgap.engine.suite import Suite
from knowgap.report.data import RunData, held
from knowgap.report.examples import paired_responses
from knowgap.report.judging import Judgements, judge_of
from knowgap.stats import (
    clustered_mcnemar,
    difference_from_intervals,
    newcombe,
    percentile_test,
    two_proportion_p,
)

Key = tuple[str, str]  # (group, metric name)
MIN_REPS = 200
"""Fewer affordable bootstrap resamples than this: no bootstrap (the analytic fallback)."""


class MetricChange(BaseModel):
    group: str
    name: str
    kind: str
    a: float | None
    b: float | None
    n_a: int = 0
    n_b: int = 0
    delta: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    significant: bool | None = None
    method: str = ""
    judge_changed: str | None = None
    """The metric's judge in A and in B when they differ (``answer-match 1 → answer-match 2``): the change then
    mixes the model's with the judge's. None when they are the same, or a run did not record its judges."""
    screen: str | None = None
    """Why the metric is a SCREEN in A and/or B (``B: no card for zh: ...``), each run's languages checked against
    its judge's card (:meth:`knowgap.report.judging.Judgements.for_run`); None when it is reportable or computed in
    both."""


class Flip(BaseModel):
    trial_id: str
    case_id: str
    config_id: str
    direction: Literal["regressed", "fixed", "changed"]
    scores_a: dict[str, ScoreValue] = Field(default_factory=dict)
    scores_b: dict[str, ScoreValue] = Field(default_factory=dict)
    response_a: str = ""
    response_b: str = ""


class McNemar(BaseModel):
    """Flipped trials of one group and the clustered McNemar test on them
    (:func:`knowgap.stats.clustered_mcnemar`)."""

    group: str
    fixed: int
    """Matched trials that went from failed to passed."""
    regressed: int
    """Matched trials that went from passed to failed."""
    p_value: float
    """Exact McNemar p-value over the clusters (over the trials when every cluster holds one)."""
    clusters_fixed: int | None = None
    """Clusters whose trials fixed more than they regressed (None in comparisons stored before: read ``fixed``)."""
    clusters_regressed: int | None = None
    """Clusters whose trials regressed more than they fixed."""
    clusters: int = 0
    """Clusters with at least one matched trial with a verdict in both runs."""
    trials: int = 0
    """Matched trials with a verdict in both runs."""

    @property
    def clustered(self) -> bool:
        """Whether some cluster holds several matched trials (so the test counts clusters, not trials)."""
        return self.clusters < self.trials

    @property
    def net_fixed(self) -> int:
        """The units the test counts as fixed: clusters (trials when they are one per cluster)."""
        return self.fixed if self.clusters_fixed is None else self.clusters_fixed

    @property
    def net_regressed(self) -> int:
        return self.regressed if self.clusters_regressed is None else self.clusters_regressed

    def text(self) -> str:
        """One line: the flips and the test (with the cluster counts when clusters hold several trials)."""
        units = (f"; by cluster {self.net_fixed} fixed, {self.net_regressed} regressed of {self.clusters}"
                 if self.clustered else "")
        return f"{self.fixed} fixed, {self.regressed} regressed{units} (McNemar p={self.p_value:.3g})"


class Comparison(BaseModel):
    run_a: str
    run_b: str
    suite_a: str
    suite_b: str
    paired_trials: int
    method: str
    changes: list[MetricChange]
    flips: list[Flip]
    mcnemar: list[McNemar] = Field(default_factory=list)
    only_a: list[str] = Field(default_factory=list)
    only_b: list[str] = Field(default_factory=list)
    dataset_notes: list[str] = Field(default_factory=list)
    """One line per run whose trials were stored without their cases' tags: the groups its metrics are counted in
    again here come from today's dataset (:func:`knowgap.engine.case_tags.dataset_note`)."""

    @property
    def significant_changes(self) -> list[MetricChange]:
        return [c for c in self.changes if c.significant]

    def judge_notes(self) -> list[str]:
        """One line per judge that differs between the runs, with the metrics it decides."""
        by_change: dict[str, list[str]] = defaultdict(list)
        for c in self.changes:
            if c.judge_changed is not None and c.name not in by_change[c.judge_changed]:
                by_change[c.judge_changed].append(c.name)
        return [f"judge changed between the runs: {change} ({', '.join(names)}): these metrics' changes mix the "
                "model's with the judge's" for change, names in by_change.items()]

    def screen_notes(self) -> list[str]:
        """One line per reason a compared metric is a SCREEN (in A, B or both), with the metrics it holds for."""
        by_reason: dict[str, list[str]] = defaultdict(list)
        for c in self.changes:
            if c.screen is not None and c.name not in by_reason[c.screen]:
                by_reason[c.screen].append(c.name)
        return [f"SCREEN ({', '.join(names)}): {reason}" for reason, names in by_reason.items()]


def judge_change(a: Manifest, b: Manifest, metric: str) -> str | None:
    """``A's judge → B's judge`` of ``metric`` when the two runs recorded different ones (name, version or judge
    model), else None."""
    ja, jb = judge_of(a, metric), judge_of(b, metric)
    if ja is None or jb is None:
        return None
    if (ja.judge, ja.version, ja.judge_model) == (jb.judge, jb.version, jb.judge_model):
        return None
    return f"{_judge_label(ja)} → {_judge_label(jb)}"


def _screen(judged: tuple[Judgements, Judgements], a: MetricValue, b: MetricValue) -> str | None:
    """``A: reason; B: reason`` for the runs in which the metric is a SCREEN (or its judge unknown); None else."""
    found = [(side, j.of(m)) for side, j, m in (("A", judged[0], a), ("B", judged[1], b))]
    screens = [(side, j.reason) for side, j in found if j.status in ("screen", "unknown")]
    if len(screens) == 2 and screens[0][1] == screens[1][1]:
        return f"A and B: {screens[0][1]}"
    return "; ".join(f"{side}: {reason}" for side, reason in screens) or None


def _judge_label(judge: MetricJudge) -> str:
    return f"{judge.judge} {judge.version}" + (f" ({judge.judge_model})" if judge.judge_model else "")


def _analytic(a: MetricValue, b: MetricValue) -> MetricChange:
    change = _base(a, b)
    if a.value is None or b.value is None:
        return change
    if a.kind == "proportion" and a.n and b.n and a.cases == a.n and b.cases == b.n:
        ka, kb = round(a.value * a.n), round(b.value * b.n)
        change.ci_low, change.ci_high = newcombe(ka, a.n, kb, b.n)
        change.p_value = two_proportion_p(ka, a.n, kb, b.n)
        change.method = "two-proportion z (unpaired)"
    elif (a.kind in ("mean", "proportion") and a.ci_low is not None and a.ci_high is not None
          and b.ci_low is not None and b.ci_high is not None):
        change.ci_low, change.ci_high, change.p_value = difference_from_intervals(
            a.value, (a.ci_low, a.ci_high), b.value, (b.ci_low, b.ci_high))
        change.method = "normal approximation from the CIs (unpaired)"
    else:
        change.method = "change only"
    if change.p_value is not None:
        change.significant = change.p_value < 0.05
    return change


def _base(a: MetricValue, b: MetricValue) -> MetricChange:
    delta = b.value - a.value if a.value is not None and b.value is not None else None
    return MetricChange(group=a.group, name=a.name, kind=a.kind, a=a.value, b=b.value, n_a=a.n, n_b=b.n,
                        delta=delta)


def _by_cluster(records: Iterable[TrialRecord], clusters: dict[str, str] | None) -> dict[str, list[TrialRecord]]:
    out: dict[str, list[TrialRecord]] = defaultdict(list)
    for r in records:
        out[(clusters or {}).get(r.case_id, r.case_id)].append(r)
    return out


def _values(suite: Suite, records: list[TrialRecord]) -> dict[Key, float]:
    return {(m.group, m.name): m.value for m in suite.metrics(records) if m.value is not None
            and math.isfinite(m.value)}


def bootstrap_changes(suite: Suite, a: Sequence[TrialRecord], b: Sequence[TrialRecord], *, paired: bool,
                      reps: int = 1000, seed: int = 0, clusters: dict[str, str] | None = None
                      ) -> dict[Key, tuple[float, float, float]]:
    """(ci_low, ci_high, p) of each metric's change B - A, resampling clusters (``clusters``: case id -> cluster
    key; all their trials at once). Paired: the same clusters in both runs (every cluster must be in both)."""
    cases_a, cases_b = _by_cluster(a, clusters), _by_cluster(b, clusters)
    ids_a, ids_b = sorted(cases_a), sorted(cases_b)
    if paired and ids_a != ids_b:
        raise ValueError("a paired bootstrap needs the same clusters in both runs")
    rng = random.Random(seed)
    deltas: dict[Key, list[float]] = defaultdict(list)
    for _ in range(reps):
        pick_a = rng.choices(ids_a, k=len(ids_a))
        pick_b = pick_a if paired else rng.choices(ids_b, k=len(ids_b))
        va = _values(suite, [r for c in pick_a for r in cases_a[c]])
        vb = _values(suite, [r for c in pick_b for r in cases_b[c]])
        for key in va.keys() & vb.keys():
            deltas[key].append(vb[key] - va[key])
    return {key: percentile_test(ds) for key, ds in deltas.items()}


def bootstrap_within(suite: Suite, records: Sequence[TrialRecord], pairs: Sequence[tuple[Key, Key]], *,
                     reps: int = 1000, seed: int = 0, budget_s: float = 10.0
                     ) -> dict[tuple[Key, Key], tuple[float, float, float]]:
    """(ci_low, ci_high, p) of the difference A - B of each pair of metrics (A, B) of one run, e.g. the same
    metric under two configurations: a paired bootstrap over the run's clusters (``Suite.clusters``; a resample
    takes all trials of a cluster, under every configuration, so each configuration sees the same cases).
    Empty when the suite's metrics are too slow for :data:`MIN_REPS` resamples within ``budget_s``."""
    records = list(records)
    if not records or not pairs:
        return {}
    t0 = time.perf_counter()
    suite.metrics(records)
    per_rep = time.perf_counter() - t0
    reps = reps if per_rep <= 0 else min(reps, int(budget_s / per_rep))
    if reps < MIN_REPS:
        return {}
    by_cluster = _by_cluster(records, suite.clusters(records))
    ids = sorted(by_cluster)
    rng = random.Random(seed)
    deltas: dict[tuple[Key, Key], list[float]] = defaultdict(list)
    for _ in range(reps):
        values = _values(suite, [r for c in rng.choices(ids, k=len(ids)) for r in by_cluster[c]])
        for a, b in pairs:
            if a in values and b in values:
                deltas[(a, b)].append(values[a] - values[b])
    return {pair: percentile_test(ds) for pair, ds in deltas.items() if len(ds) >= MIN_REPS}


def _flips(run_a: RunData, run_b: RunData, matched: list[str],
           clusters: dict[str, str] | None = None) -> tuple[list[Flip], list[McNemar]]:
    """The flipped trials and, per group, the clustered McNemar test (``clusters``: case id -> cluster key;
    a case without one is its own cluster)."""
    ra = {r.trial_id: r for r in run_a.records}
    rb = {r.trial_id: r for r in run_b.records}
    flips: list[Flip] = []
    tallies: dict[str, dict[str, list[int]]] = {}  # group -> cluster -> [fixed, regressed, matched]
    for tid in matched:
        x, y = ra[tid], rb[tid]
        fa, fb = run_a.trial_failed(x), run_b.trial_failed(y)
        if fa is not None and fb is not None:
            counts = tallies.setdefault(x.config_id, {}).setdefault((clusters or {}).get(x.case_id, x.case_id),
                                                                     [0, 0, 0])
            counts[2] += 1
            if fa == fb:
                continue
            direction: Literal["regressed", "fixed", "changed"] = "regressed" if fb else "fixed"
            counts[0 if direction == "fixed" else 1] += 1
        elif x.scores != y.scores or x.status != y.status:
            direction = "changed"
        else:
            continue
        response_a, response_b = paired_responses(run_a, x, run_b, y)  # each run's answer to the same part
        flips.append(Flip(trial_id=tid, case_id=x.case_id, config_id=x.config_id, direction=direction,
                          scores_a=x.scores, scores_b=y.scores, response_a=response_a, response_b=response_b))
    order = {"regressed": 0, "fixed": 1, "changed": 2}
    flips.sort(key=lambda f: (order[f.direction], f.config_id, f.trial_id))
    tests = []
    for group, by_cluster in sorted(tallies.items()):
        cf, cr, p = clustered_mcnemar((f, r) for f, r, _ in by_cluster.values())
        tests.append(McNemar(group=group, fixed=sum(c[0] for c in by_cluster.values()),
                             regressed=sum(c[1] for c in by_cluster.values()), p_value=p, clusters_fixed=cf,
                             clusters_regressed=cr, clusters=len(by_cluster),
                             trials=sum(c[2] for c in by_cluster.values())))
    return flips, tests



def _affordable_reps(suite: Suite, a: list[TrialRecord], b: list[TrialRecord], reps: int, budget_s: float
                     ) -> tuple[int, list[MetricValue], list[MetricValue]]:
    """As many resamples (up to ``reps``) as fit in ``budget_s``, timed on one metrics pass of both runs (a suite
    whose metrics bootstrap their own CIs is slow; below MIN_REPS the caller falls back to analytic tests), and
    the metrics of that pass."""
    t0 = time.perf_counter()
    metrics_a, metrics_b = suite.metrics(a), suite.metrics(b)
    per_rep = time.perf_counter() - t0
    return (reps if per_rep <= 0 else min(reps, int(budget_s / per_rep))), metrics_a, metrics_b


def compare_runs(run_a: RunData, run_b: RunData, *, reps: int = 1000, seed: int = 0,
                 budget_s: float = 60.0) -> Comparison:
    run_a, run_b = held(run_a), held(run_b)  # the bootstrap resamples them and pairs trials: read them once
    ma = {(m.group, m.name): m for m in run_a.metrics}
    mb = {(m.group, m.name): m for m in run_b.metrics}
    ids_b = {r.trial_id for r in run_b.records}
    matched = [r.trial_id for r in run_a.records if r.trial_id in ids_b]
    same_suite = run_a.manifest.config.suite == run_b.manifest.config.suite
    suite = run_b.suite or run_a.suite if same_suite else None
    boot: dict[Key, tuple[float, float, float]] = {}
    on_shared: dict[Key, tuple[MetricValue, MetricValue]] = {}
    """Paired on a part of the runs' cases: each metric over the shared cases (the change its interval is of)."""
    method = "analytic from the stored metrics (unpaired)"
    paired = False
    clusters = suite.clusters([*run_a.records, *run_b.records]) if suite is not None else None
    if suite is not None and clusters is not None and run_a.records and run_b.records:
        shared_cases = {r.case_id for r in run_a.records} & {r.case_id for r in run_b.records}
        paired = len(shared_cases) > 0
        if paired:
            rec_a = [r for r in run_a.records if r.case_id in shared_cases]
            rec_b = [r for r in run_b.records if r.case_id in shared_cases]
        else:
            rec_a, rec_b = list(run_a.records), list(run_b.records)
        reps, metrics_a, metrics_b = _affordable_reps(suite, rec_a, rec_b, reps, budget_s)
        if reps >= MIN_REPS:
            cases = len({r.case_id for r in rec_a} | {r.case_id for r in rec_b})
            shared = len({clusters.get(c, c) for c in shared_cases})
            units = f"{cases} cases" if shared == cases else f"{shared} clusters of {cases} cases"
            method = (f"paired bootstrap over {units} ({len(rec_a)} + {len(rec_b)} trials, {len(matched)} matched, "
                      f"{reps} resamples)" if paired else f"independent bootstrap over clusters ({reps} resamples)")
            boot = bootstrap_changes(suite, rec_a, rec_b, paired=paired, reps=reps, seed=seed, clusters=clusters)
            if paired and (len(rec_a) < len(run_a.records) or len(rec_b) < len(run_b.records)):
                sub_a = {(m.group, m.name): m for m in metrics_a}
                sub_b = {(m.group, m.name): m for m in metrics_b}
                on_shared = {k: (sub_a[k], sub_b[k]) for k in sub_a.keys() & sub_b.keys()}
                method += (f"; the changes are of the {len(shared_cases)} cases both runs ran (A ran "
                           f"{len({r.case_id for r in run_a.records})}, B {len({r.case_id for r in run_b.records})})")
        else:
            method += ": the suite's metrics are too slow to bootstrap within the time budget"
    changes = []
    judged = (Judgements.for_run(run_a.manifest), Judgements.for_run(run_b.manifest))
    for key in [k for k in ma if k in mb]:
        a, b = ma[key], mb[key]
        if key in boot and a.value is not None and b.value is not None:
            change = _base(*on_shared.get(key, (a, b)))
            change.ci_low, change.ci_high, change.p_value = boot[key]
            change.significant = change.p_value < 0.05 and not (change.ci_low <= 0 <= change.ci_high)
            change.method = "paired cluster bootstrap" if paired else "cluster bootstrap (unpaired)"
        else:
            change = _analytic(a, b)
        change.judge_changed = judge_change(run_a.manifest, run_b.manifest, change.name)
        change.screen = _screen(judged, a, b)
        changes.append(change)
    flips, tests = _flips(run_a, run_b, matched, clusters)
    return Comparison(run_a=run_a.run_id, run_b=run_b.run_id, suite_a=run_a.manifest.config.suite,
                      suite_b=run_b.manifest.config.suite, paired_trials=len(matched), method=method,
                      changes=changes, flips=flips, mcnemar=tests,
                      only_a=[f"{g}/{n}" for g, n in ma if (g, n) not in mb],
                      only_b=[f"{g}/{n}" for g, n in mb if (g, n) not in ma],
                      dataset_notes=[note for run in (run_a, run_b) if (note := run.dataset_note()) is not None])
