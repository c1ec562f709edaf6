"""Stop a run when its gate is decided: cases in a seeded random order, a unit at a time, and after each batch an
anytime-valid confidence sequence per gated metric (``knowgap run --until decided``; docs/statistics.md).

A **unit** is a case, or the cases built on one base case (extract's variants of a review), which run together:
the run draws units without replacement from its planned set, in the order ``random.Random(order_seed)`` shuffles
them into, so its first t units are a uniformly random sample of t. The trials are exactly the ones the run plans
without a rule (same ids, so ``--resume`` and the cache work as before); only their order changes.

After each batch, each gated metric's value per unit comes from the suite's own :meth:`Suite.metrics` on that
unit's trials (a proportion's k of n, a mean's sum and count), and :func:`knowgap.stats.sequential.wor_betting_cs`
gives the ends that bound the full run's value at every stop, each one-sided at 1 - alpha (:data:`DECISION`: a
threshold's decision is then wrong with probability at most alpha; under ``--until width=W`` the two-sided interval
at 1 - alpha, :data:`TWO_SIDED`). A metric that is no
pooled mean of its units (its value over the trials so far differs from the pooled units: an F1, a calibration
error) or a mean outside [0, 1] cannot be decided early: it is decided when every case has run. A count (errors)
only grows: ``errors == 0`` fails at the first error and passes when every case has run.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from knowgap.engine.records import MetricValue, TrialRecord
from knowgap.engine.sampling import base_case
from knowgap.engine.stopping_rule import (
    ComparedMetric,
    CorrectedBy,
    Decision,
    GatedMetric,
    JudgeCorrection,
    MetricSequence,
    SequencePoint,
    StoppingRule,
    StopReason,
    StopRecord,
)
from knowgap.engine.suite import Suite, Trial
from knowgap.engine.usage import usage_from_trials
from knowgap.stats.judge_correction import alpha_split, card_box, corrected_point, corrected_range
from knowgap.stats.sequential import Bets, Sides, decide, wor_betting_cs

log = logging.getLogger("knowgap.run")
TOLERANCE = 1e-6
"""How far a metric's value over the trials so far may be from its pooled units (float rounding) and still count
as their pooled mean."""
DECISION: tuple[Bets, Sides] = ("agrapa", "each")
"""The bets and sides a threshold or a comparison is decided with: each end of the sequence a one-sided bound at
1 - alpha (a decision is wrong only when the end on its side excludes the value), bets aimed at the running mean
(docs/statistics.md, "Stopping when the gate is decided")."""
TWO_SIDED: tuple[Bets, Sides] = ("predmix", "two")
"""The bets and sides of ``--until width=W``: an interval holding the value with probability 1 - alpha, whose width
is the stopping rule."""


def unit_key(case: object) -> str:
    """The unit a case runs in: its base case (extract's adversarial variants of a review), else itself."""
    return base_case(case) or str(getattr(case, "id", ""))


@dataclass
class Unit:
    key: str
    trials: list[Trial] = field(default_factory=list)

    @property
    def case_ids(self) -> set[str]:
        return {t.case.id for t in self.trials}


def ordered_units(trials: Iterable[Trial], seed: int) -> list[Unit]:
    """The planned trials grouped by unit, the units in the random order ``seed`` gives (the trials of a unit in
    plan order)."""
    units: dict[str, Unit] = {}
    for trial in trials:
        key = unit_key(trial.case)
        units.setdefault(key, Unit(key)).trials.append(trial)
    keys = sorted(units)
    random.Random(seed).shuffle(keys)
    return [units[k] for k in keys]


def _passes(op: str, actual: float, value: float) -> bool:
    return {">=": actual >= value, "<=": actual <= value, ">": actual > value, "<": actual < value,
            "==": actual == value, "!=": actual != value}[op]


@dataclass
class _Pair:
    """What is known of one (metric, group): each run unit's (sum, size) in order, or why it is not sequential."""

    metric: str
    group: str
    kind: str
    sums: list[float] = field(default_factory=list)
    sizes: list[float] = field(default_factory=list)
    why: str = ""


class Sequencer:
    """The state of a run under a stopping rule: which units ran (a prefix of the order), each one's metric values,
    and each gated metric's sequence."""

    def __init__(self, rule: StoppingRule, units: Sequence[Unit], suite: Suite,
                 baseline: dict[str, dict[tuple[str, str], MetricValue]] | None = None) -> None:
        self.rule, self.units, self.suite = rule, list(units), suite
        self.baseline = baseline or {}
        """The baseline run's metrics per unit key (``--against``)."""
        self.done = 0
        """Units run so far: the first ``done`` of the order."""
        self.values: list[dict[tuple[str, str], MetricValue]] = []
        self.paths: dict[tuple[str, str], list[SequencePoint]] = {}
        self.bound = max((len(u.trials) for u in self.units), default=1)
        self._bounds: dict[str, int] = {}
        self.calls = 0
        self.cost: float | None = None
        self.sequences: list[MetricSequence] = []

    # which units ran -------------------------------------------------------------------------------
    def complete(self, ran: set[str], records: Iterable[TrialRecord]) -> None:
        """Advance over the units whose every trial ran (``ran``: trial ids stored ok, or run in this process)
        and read their metrics from ``records`` (the run's records)."""
        end = self.done
        while end < len(self.units) and all(t.trial_id in ran for t in self.units[end].trials):
            end += 1
        if end == self.done:
            return
        wanted = {case_id: i for i in range(self.done, end) for case_id in self.units[i].case_ids}
        by_unit: dict[int, list[TrialRecord]] = {i: [] for i in range(self.done, end)}
        for record in records:
            if record.case_id in wanted:
                by_unit[wanted[record.case_id]].append(record)
        for i in range(self.done, end):
            self.values.append(self._unit_metrics(by_unit[i]))
        self.done = end

    def _unit_metrics(self, records: list[TrialRecord]) -> dict[tuple[str, str], MetricValue]:
        try:
            return {(m.name, m.group): m for m in self.suite.metrics(records)}
        except Exception as exc:  # a suite whose metrics need more than one unit: decided at the end
            log.warning("the suite's metrics of one unit failed (%s): gated metrics are decided at the end", exc)
            return {("\0failed", ""): MetricValue(name="\0failed", group="", value=None)}

    def next_batch(self, workers: int) -> list[Unit]:
        """The next units to run: enough trials to keep ``workers`` busy, fewer when a call budget is near."""
        left = self.units[self.done:]
        if self.rule.until == "all":
            return left
        per_unit = max(1.0, sum(len(u.trials) for u in left) / max(1, len(left)))
        count = max(1, math.ceil(workers / per_unit))
        if self.rule.max_calls is not None and self.done:
            calls_per_unit = max(self.calls / self.done, 1e-9)
            count = min(count, max(1, int((self.rule.max_calls - self.calls) / calls_per_unit)))
        return left[:count]

    # sequences -------------------------------------------------------------------------------------
    @property
    def method(self) -> tuple[Bets, Sides]:
        """How this run's sequences are made: two-sided under ``--until width=W`` (the width is what stops it), else
        the decision rule's one-sided ends (:data:`DECISION`)."""
        return TWO_SIDED if self.rule.width is not None else DECISION

    def _bound(self, group: str) -> int:
        """The most trials a unit has in ``group`` (a configuration, or a breakdown ``CONFIG · ...`` of one),
        known before the run: the bound on a unit's observations a metric counts once per trial (a metric that
        counts a trial's parts several times raises it to the most seen). A group that is no configuration: the
        most trials of a unit."""
        if group not in self._bounds:
            most = max((sum(t.config.id == group or group.startswith(t.config.id + " · ") for t in u.trials)
                        for u in self.units), default=0)
            self._bounds[group] = most or self.bound
        return self._bounds[group]

    def _pairs(self, metrics: list[MetricValue]) -> dict[tuple[str, str], _Pair]:
        gated = self.rule.thresholds
        pairs: dict[tuple[str, str], _Pair] = {}
        for m in metrics:
            wanted = (any(t.metric == m.name and t.group in (None, m.group) for t in gated) if gated
                      else self.rule.width is not None and m.kind in ("proportion", "mean") and m.value is not None)
            if wanted:
                pairs[(m.name, m.group)] = _Pair(m.name, m.group, m.kind)
        failed = any(("\0failed", "") in v for v in self.values)
        for key, pair in pairs.items():
            if failed:
                pair.why = "the suite's metrics cannot be computed on one case at a time"
                continue
            for unit in self.values:
                got = unit.get(key)
                value = got.value if got is not None else None
                n = float(got.n) if got is not None and value is not None else 0.0
                total = float(value) * n if value is not None else 0.0
                if pair.kind == "count":
                    n, total = 1.0, float(value) if value is not None else 0.0
                pair.sums.append(round(total) if pair.kind == "proportion" else total)
                pair.sizes.append(n)
        return pairs

    def _check(self, pair: _Pair, now: MetricValue) -> None:
        """Mark ``pair`` not sequential when its value over the trials so far is not its pooled units'."""
        if pair.why:
            return
        if pair.kind == "count":
            if now.value is not None and abs(sum(pair.sums) - now.value) > TOLERANCE:
                pair.why = "a count that is not the sum of its cases' counts"
            return
        if any(s < -TOLERANCE or s > n + TOLERANCE for s, n in zip(pair.sums, pair.sizes, strict=True)):
            pair.why = "a mean of values outside [0, 1]"
            return
        size = sum(pair.sizes)
        pooled = sum(pair.sums) / size if size else None
        if (pooled is None) != (now.value is None) or (
                pooled is not None and now.value is not None and abs(pooled - now.value) > TOLERANCE):
            pair.why = "not a pooled mean of its trials (a statistic over the whole set, such as an F1)"

    def evaluate(self, metrics: list[MetricValue]) -> None:
        """Each gated metric's sequence and decision, from the units run so far and ``metrics`` (the suite's
        metrics over every trial run so far)."""
        now = {(m.name, m.group): m for m in metrics}
        complete = self.done == len(self.units)
        sequences = []
        for key, pair in self._pairs(metrics).items():
            current = now[key]
            self._check(pair, current)
            correction = self._correction(key)
            if correction is not None:
                sequences.append(self._corrected(pair, current, correction, complete))
            if not self._on_value(key):
                continue
            seq = MetricSequence(metric=pair.metric, group=pair.group, kind=pair.kind, estimate=current.value)
            if complete and current.value is not None:
                seq.low = seq.high = float(current.value)
            elif pair.why:
                seq.sequential, seq.why = False, pair.why
            elif pair.kind == "count":
                seq.low, seq.high = float(sum(pair.sums)), math.inf
            elif self.done:
                bound = max([float(self._bound(pair.group)), *pair.sizes])
                bets, sides = self.method
                path = wor_betting_cs(pair.sums, pair.sizes, len(self.units), alpha=self.rule.alpha, bound=bound,
                                      bets=bets, sides=sides)
                seq.low, seq.high = path.low[-1], path.high[-1]
            if seq.low is not None and seq.high is not None and math.isfinite(seq.high):
                points = self.paths.setdefault(key, [])
                if not points or points[-1].units != self.done:
                    points.append(SequencePoint(units=self.done, low=seq.low, high=seq.high, estimate=current.value))
            seq.path = list(self.paths.get(key, []))
            sequences.append(seq)
        sequences += self._differences(now, complete)
        self.sequences = sequences
        for t in self.rule.thresholds:
            for seq in sequences:
                if seq.metric == t.metric and t.group in (None, seq.group) and _same_use(t, seq):
                    seq.threshold = t.label
                    seq.decision = self._decide(t, seq)

    def _on_value(self, key: tuple[str, str]) -> bool:
        """Whether (metric, group) gets a sequence of its value: without thresholds, or with one on its value."""
        gated = self.rule.thresholds
        return not gated or any(t.metric == key[0] and t.group in (None, key[1]) and t.use == "value"
                                for t in gated)

    def _correction(self, key: tuple[str, str]) -> JudgeCorrection | None:
        """The card of a threshold on the corrected rate of (metric, group), if one has one."""
        return next((t.correction for t in self.rule.thresholds if t.use == "corrected" and t.correction is not None
                     and t.metric == key[0] and t.group in (None, key[1])), None)

    def _corrected(self, pair: _Pair, current: MetricValue, card: JudgeCorrection, complete: bool) -> MetricSequence:
        """The sequence of the judge-corrected rate (:mod:`knowgap.stats.judge_correction`): the observed rate's
        sequence at alpha_1 and the card's box at alpha_2, the Rogan-Gladen transform's range over both."""
        alpha_observed, alpha_card = alpha_split(self.rule.alpha)
        box = card_box(card.tp, card.fn, card.fp, card.tn, alpha_card)
        by = CorrectedBy(card=card, alpha_observed=alpha_observed, alpha_card=alpha_card, sensitivity=box.sensitivity,
                         specificity=box.specificity, observed=current.value)
        se, sp = card.tp / max(1, card.tp + card.fn), card.tn / max(1, card.tn + card.fp)
        estimate = None if current.value is None else corrected_point(float(current.value), se, sp, card.counts)
        seq = MetricSequence(metric=pair.metric, group=pair.group, kind=pair.kind, estimate=estimate, corrected=by)
        observed: tuple[float, float] | None = None
        if complete and current.value is not None:
            observed = (float(current.value), float(current.value))
        elif pair.kind != "proportion":
            seq.sequential, seq.why = False, "a corrected rate is a proportion of the judge's verdicts"
        elif pair.why:
            seq.sequential, seq.why = False, pair.why
        elif self.done:
            bound = max([float(self._bound(pair.group)), *pair.sizes])
            bets, sides = self.method  # each end one-sided at alpha_observed: the union bound with the box holds
            path = wor_betting_cs(pair.sums, pair.sizes, len(self.units), alpha=alpha_observed, bound=bound,
                                  bets=bets, sides=sides)
            observed = (path.low[-1], path.high[-1])
        if observed is not None:
            by.observed_low, by.observed_high = observed
            found = corrected_range(observed[0], observed[1], box, card.counts)
            if found is None:
                seq.sequential, seq.why = False, "the judge's card allows a judge no better than chance"
            else:
                seq.low, seq.high = found
                points = self.paths.setdefault((f"\0corrected:{pair.metric}", pair.group), [])
                if not points or points[-1].units != self.done:
                    points.append(SequencePoint(units=self.done, low=seq.low, high=seq.high, estimate=estimate))
        seq.path = list(self.paths.get((f"\0corrected:{pair.metric}", pair.group), []))
        return seq

    def _differences(self, now: dict[tuple[str, str], MetricValue], complete: bool) -> list[MetricSequence]:
        """Each compared metric's paired difference from the baseline, this run minus it, unit by unit: unit u with
        ``n`` observations in the baseline and rates ``a`` there and ``b`` here adds ``(n (b - a) + n) / 2`` of
        ``n`` to a ratio in [0, 1], whose sequence maps back to the difference by ``2 x - 1``. The target is the
        difference of the pooled rates when both runs observed the same trials (the same plan, nothing left
        unscored in one run alone); a unit one run did not observe adds nothing."""
        out = []
        for c in self.rule.compare:
            for key in sorted(k for k in now if k[0] == c.metric and c.group in (None, k[1])):
                sums: list[float] = []
                sizes: list[float] = []
                for unit, values in zip(self.units, self.values, strict=False):
                    a, b = self.baseline.get(unit.key, {}).get(key), values.get(key)
                    if a is None or b is None or a.value is None or b.value is None or not a.n:
                        sums.append(0.0)
                        sizes.append(0.0)
                        continue
                    n = float(a.n)
                    sums.append(min(n, max(0.0, (n * (float(b.value) - float(a.value)) + n) / 2)))
                    sizes.append(n)
                seq = MetricSequence(metric=key[0], group=key[1], kind="difference",
                                     threshold=f"{c.label} against {Path(self.rule.against or '').name}"
                                               f"{f' (margin {self.rule.margin:g})' if self.rule.margin else ''}")
                total = sum(sizes)
                if now[key].kind not in ("proportion", "mean") or any(s > n for s, n in zip(
                        sums, sizes, strict=True)) or (now[key].kind == "mean" and any(
                        v.get(key) is not None and not 0 <= (v[key].value or 0) <= 1 for v in self.values)):
                    seq.sequential, seq.why = False, "not a proportion or a mean of [0, 1] scores"
                elif total:
                    seq.estimate = 2 * sum(sums) / total - 1
                    if complete:
                        seq.low = seq.high = seq.estimate
                    else:
                        bound = max([float(self._bound(key[1])), *sizes])
                        bets, sides = self.method
                        path = wor_betting_cs(sums, sizes, len(self.units), alpha=self.rule.alpha, bound=bound,
                                              bets=bets, sides=sides)
                        seq.low, seq.high = 2 * path.low[-1] - 1, 2 * path.high[-1] - 1
                    points = self.paths.setdefault((f"\0diff:{key[0]}", key[1]), [])
                    if not points or points[-1].units != self.done:
                        points.append(SequencePoint(units=self.done, low=seq.low, high=seq.high,
                                                    estimate=seq.estimate))
                    seq.path = list(points)
                    seq.comparison, seq.decision = self._compared(c, seq.low, seq.high)
                out.append(seq)
        return out

    def _compared(self, c: ComparedMetric, low: float, high: float) -> tuple[
            Literal["higher", "lower", "within margin"] | None, Decision]:
        """What the difference's sequence decides: its sign, or its lying within the margin; and whether that
        passes (not worse than the baseline, or within the margin) or fails."""
        margin = self.rule.margin
        if low > 0 or (low == high and low > margin):
            found: Literal["higher", "lower", "within margin"] = "higher"
        elif high < 0 or (low == high and low < -margin):
            found = "lower"
        elif (margin and -margin <= low and high <= margin) or low == high:
            found = "within margin"
        else:
            return None, "undecided"
        worse = "higher" if c.lower_is_better else "lower"
        return found, "fail" if found == worse else "pass"

    @staticmethod
    def _decide(t: GatedMetric, seq: MetricSequence) -> Decision:
        if seq.low is None or seq.high is None:
            return "undecided"
        if seq.low == seq.high:
            return "pass" if _passes(t.op, seq.low, t.value) else "fail"
        return decide(seq.low, seq.high, t.op, t.value)

    def threshold_decisions(self) -> list[tuple[GatedMetric, Decision]]:
        """Each threshold's decision: fail when a group fails, pass when every group it covers passes."""
        out: list[tuple[GatedMetric, Decision]] = []
        for t in self.rule.thresholds:
            mine = [s.decision for s in self.sequences
                    if s.metric == t.metric and t.group in (None, s.group) and _same_use(t, s)]
            out.append((t, "fail" if "fail" in mine else "pass" if mine and all(d == "pass" for d in mine)
                        else "undecided"))
        return out

    def count_usage(self, records: Iterable[TrialRecord], prices: dict[str, tuple[float, float]]) -> None:
        """The model calls made (not from the cache, failed ones included) and their cost, over every resume."""
        calls, cost = 0, None
        for by_spec in usage_from_trials(records, prices).values():
            for u in by_spec.values():
                calls += u.calls - u.cached_calls + u.failed_calls
                if u.cost_usd is not None:
                    cost = (cost or 0.0) + u.cost_usd
        self.calls, self.cost = calls, cost

    def reason(self) -> StopReason | None:
        """Why the run stops now, or None to go on."""
        if self.done == len(self.units):
            return "every case ran"
        if self.rule.until == "all":
            return None
        compared = [s for s in self.sequences if s.kind == "difference"]
        if self.rule.until == "decided" and (self.rule.thresholds or self.rule.compare) and all(
                d != "undecided" for _, d in self.threshold_decisions()) and all(
                s.decision != "undecided" for s in compared) and (compared or not self.rule.compare):
            return "decided"
        width = self.rule.width
        if width is not None and self.sequences and all(
                s.sequential and s.low is not None and s.high is not None and s.high - s.low <= width
                for s in self.sequences):
            return "narrow"
        if self.rule.max_calls is not None and self.calls >= self.rule.max_calls:
            return "max calls"
        if self.rule.max_cost is not None and (self.cost or 0.0) >= self.rule.max_cost:
            return "max cost"
        return None

    def record(self, reason: StopReason | None) -> StopRecord:
        bets, sides = self.method
        return StopRecord(rule=self.rule, bets=bets, sides=sides, units_total=len(self.units), units_run=self.done,
                          trials_run=sum(len(u.trials) for u in self.units[:self.done]), reason=reason,
                          calls=self.calls, cost_usd=self.cost, sequences=self.sequences)


def _same_use(t: GatedMetric, seq: MetricSequence) -> bool:
    """A threshold on the corrected rate is decided by the corrected sequence, one on the value by the value's."""
    return (t.use == "corrected") == (seq.corrected is not None)


def baseline_values(path: str, units: Sequence[Unit], suite: Suite) -> dict[str, dict[tuple[str, str], MetricValue]]:
    """The baseline run's (``--against``) metrics per unit of this run's plan, from its stored trials (the suite's own
    metrics on each unit's trials). Refused when it is another suite's run, or lacks a unit this run plans."""
    from knowgap.engine.store import RunStore
    from knowgap.errors import KnowgapError

    store = RunStore(Path(path))
    manifest = store.read_manifest()
    if manifest.config.suite != suite.name:
        raise KnowgapError(f"--against {manifest.run_id} is a run of suite '{manifest.config.suite}', not "
                           f"'{suite.name}'")
    unit_of = {t.case.id: u.key for u in units for t in u.trials}
    by_unit: dict[str, list[TrialRecord]] = {}
    for record in store.iter_records():
        if record.case_id in unit_of:
            by_unit.setdefault(unit_of[record.case_id], []).append(record)
    missing = [u.key for u in units if u.key not in by_unit]
    if missing:
        raise KnowgapError(f"--against {manifest.run_id} has no trial of {len(missing)} of the {len(units)} units this "
                           f"run plans (for example {missing[0]}): compare runs of the same plan (suite options, "
                           "sample, seed)")
    out = {}
    for key, records in by_unit.items():
        try:
            out[key] = {(m.name, m.group): m for m in suite.metrics(records)}
        except Exception as exc:  # the suite's metrics need more than one unit: nothing to compare unit by unit
            raise KnowgapError(f"--against: the suite's metrics cannot be computed one case at a time "
                               f"({exc})") from None
    return out
