"""Calls saved by ``--until decided`` on stored runs: each run replayed in many random orders, against thresholds
at several distances from its full-run value. Prints, per run and metric, the mean share of the full run's model
calls used and the share of orders whose decision is the full run's, by distance (the curve in benchmarks/README.md).

A replay makes no model call: a run's stored trials are what a deterministic system answers again (the stored
runs of ``tests/fixtures/metric_identity/`` were made by ``python:tests/stats/identity_system.py:reply``, whose
replies are a function of the request and its seed, so the engine replays them exactly; ``--check`` runs the real
engine with ``--until decided`` on a few orders and holds it to the replay's stopping point). For each order the
replay takes the engine's units in the engine's order (:func:`knowgap.engine.stopping.ordered_units`' rule: the
sorted unit keys shuffled by ``random.Random(seed)``), its batch sizes (``Sequencer.next_batch``: enough trials to
keep ``--concurrency`` workers busy) and its sequence (:func:`knowgap.stats.sequential.wor_betting_cs`, the bound a
unit's trials in the group, the engine's decision rule :data:`knowgap.engine.stopping.DECISION`: each end one-sided
at 1 - alpha, aGRAPA bets; ``--old``: the rule before it, two-sided at alpha with predmix bets), read at each
batch's end.

    python benchmarks/sequential_replay.py                                   # the 12 stored identity runs
    python benchmarks/sequential_replay.py --make /tmp/replay                # + larger identity runs (>= 300 trials)
    python benchmarks/sequential_replay.py --runs /tmp/replay --orders 200 --check 3
    python benchmarks/sequential_replay.py --runs /tmp/replay --old                # the rule before
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from knowgap.engine.records import MetricValue, TrialRecord  # noqa: E402
from knowgap.engine.stopping import DECISION, TWO_SIDED, unit_key  # noqa: E402
from knowgap.stats.sequential import Bets, Sides, decide, wor_betting_cs  # noqa: E402

SYSTEM = "python:tests/stats/identity_system.py:reply"
DISTANCES = (0.02, 0.05, 0.10, 0.15, 0.20, 0.30)
LARGER = {  # name: (suite, options, repeats): identity runs of at least 300 trials
    "clarify-full": ("clarify", {}, 2),
    "partial-full": ("partial", {}, 1),
    "starter-r10": ("starter", {}, 10),
    "extract-full": ("extract", {"runs": 2}, 2),
}


@dataclass
class Replayable:
    name: str
    records: list[TrialRecord]
    units: dict[str, list[TrialRecord]]
    unit_metrics: dict[str, dict[tuple[str, str], MetricValue]]
    full: list[MetricValue]


def load(path: Path) -> Replayable:
    from knowgap.report.data import held, load_run_data

    run = held(load_run_data(path))
    assert run.suite is not None, path
    cases = {c.id: c for c in run.suite.cases()}
    records = [r for r in run.records if isinstance(r, TrialRecord)]
    units: dict[str, list[TrialRecord]] = defaultdict(list)
    for r in records:  # a case the suite no longer has (a stored run of older data): its own unit
        units[unit_key(cases[r.case_id]) if r.case_id in cases else r.case_id].append(r)
    unit_metrics = {k: {(m.name, m.group): m for m in run.suite.metrics(rs)} for k, rs in units.items()}
    return Replayable(path.name, records, dict(units), unit_metrics, run.suite.metrics(records))


def pooled(rep: Replayable, key: tuple[str, str]) -> tuple[dict[str, tuple[float, float]], bool]:
    """Each unit's (sum, size) of metric ``key`` and whether the full value is their pooled mean."""
    out = {}
    for unit, ms in rep.unit_metrics.items():
        m = ms.get(key)
        n = float(m.n) if m is not None and m.value is not None else 0.0
        s = float(m.value) * n if m is not None and m.value is not None else 0.0
        out[unit] = (float(round(s)), n)
    full = next(m for m in rep.full if (m.name, m.group) == key)
    size = sum(n for _, n in out.values())
    return out, size > 0 and full.value is not None and abs(sum(s for s, _ in out.values()) / size - full.value) < 1e-6


def calls_of(records: list[TrialRecord]) -> int:
    return sum(1 for r in records for c in r.calls if not c.cached)


def batches(units: list[str], trials: dict[str, int], workers: int) -> list[int]:
    """The number of units run at each look (``Sequencer.next_batch``)."""
    ends, done = [], 0
    while done < len(units):
        left = units[done:]
        per_unit = max(1.0, sum(trials[u] for u in left) / len(left))
        done += min(len(left), max(1, math.ceil(workers / per_unit)))
        ends.append(done)
    return ends


def engine_order(keys: list[str], seed: int) -> list[str]:
    order = sorted(keys)
    random.Random(seed).shuffle(order)
    return order


class Replay:
    """A run's metric ``key`` ready to replay: each unit's (sum, size), calls and trials, and the bound."""

    def __init__(self, rep: Replayable, key: tuple[str, str], workers: int, alpha: float = 0.05,
                 method: tuple[Bets, Sides] = DECISION) -> None:
        self.rep, self.key, self.workers, self.alpha, self.method = rep, key, workers, alpha, method
        self.values, _ = pooled(rep, key)
        self.full = sum(s for s, _ in self.values.values()) / sum(n for _, n in self.values.values())
        group = key[1]
        planned = max(sum(1 for r in rs if r.config_id == group or group.startswith(r.config_id + " · "))
                      for rs in rep.units.values()) or max(len(rs) for rs in rep.units.values())
        self.bound = max([float(planned), *(n for _, n in self.values.values())])  # as the engine: parts raise it
        self.calls = {u: calls_of(rs) for u, rs in rep.units.items()}
        self.trials = {u: len(rs) for u, rs in rep.units.items()}

    def stops(self, seed: int, thresholds: list[float]) -> list[tuple[int, str]]:
        """For the order ``seed`` gives: (units run, decision) at each threshold ``>= t``."""
        order = engine_order(list(self.rep.units), seed)
        path = wor_betting_cs([self.values[u][0] for u in order], [self.values[u][1] for u in order], len(order),
                              alpha=self.alpha, bound=self.bound, bets=self.method[0], sides=self.method[1])
        looks = batches(order, self.trials, self.workers)
        out = []
        for t in thresholds:
            truth = "pass" if self.full >= t else "fail"
            for end in looks:
                verdict = decide(path.low[end - 1], path.high[end - 1], ">=", t) if end < len(order) else truth
                if verdict != "undecided":
                    break
            out.append((end, verdict))
        return out

    def share_of_calls(self, seed: int, units: int) -> float:
        order = engine_order(list(self.rep.units), seed)
        return sum(self.calls[u] for u in order[:units]) / sum(self.calls.values())


def replay(rep: Replayable, key: tuple[str, str], orders: int, workers: int,
           method: tuple[Bets, Sides] = DECISION) -> dict[tuple[str, float], tuple[float, float]]:
    """(side, distance) -> (mean share of calls used, share of orders deciding as the full run)."""
    r = Replay(rep, key, workers, method=method)
    cells = [(side, d, r.full - d if side == "above" else r.full + d) for d in DISTANCES
             for side in ("above", "below") if 0 < (r.full - d if side == "above" else r.full + d) < 1]
    used: dict[tuple[str, float], list[float]] = defaultdict(list)
    right: dict[tuple[str, float], list[bool]] = defaultdict(list)
    for seed in range(orders):
        for (side, d, t), (end, verdict) in zip(cells, r.stops(seed, [t for _, _, t in cells]), strict=True):
            used[(side, d)].append(r.share_of_calls(seed, end))
            right[(side, d)].append(verdict == ("pass" if r.full >= t else "fail"))
    return {k: (sum(v) / len(v), sum(right[k]) / len(right[k])) for k, v in used.items()}


def replay_pair(candidate: Replayable, baseline: Replayable, key: tuple[str, str], orders: int, workers: int,
                method: tuple[Bets, Sides] = DECISION) -> tuple[float, float, float]:
    """A paired comparison (``--against BASELINE --compare METRIC[GROUP]``, margin 0) replayed: the candidate's units
    in each order, the engine's paired transform (``Sequencer._differences``: unit u with n observations in the
    baseline adds ``(n (b - a) + n) / 2`` of n), decided when the difference's sequence excludes 0. Returns the full
    difference, the mean share of the candidate's calls used and the share of orders deciding the full run's
    sign."""
    sums: dict[str, tuple[float, float]] = {}
    for unit in candidate.units:
        a, b = baseline.unit_metrics.get(unit, {}).get(key), candidate.unit_metrics[unit].get(key)
        if a is None or b is None or a.value is None or b.value is None or not a.n:
            sums[unit] = (0.0, 0.0)
            continue
        n = float(a.n)
        sums[unit] = (min(n, max(0.0, (n * (float(b.value) - float(a.value)) + n) / 2)), n)
    full = 2 * sum(x for x, _ in sums.values()) / sum(n for _, n in sums.values()) - 1
    truth = "higher" if full > 0 else "lower" if full < 0 else "within margin"
    bound = max(n for _, n in sums.values())
    calls = {u: calls_of(rs) for u, rs in candidate.units.items()}
    trials = {u: len(rs) for u, rs in candidate.units.items()}
    used, right = [], []
    for seed in range(orders):
        order = engine_order(list(candidate.units), seed)
        path = wor_betting_cs([sums[u][0] for u in order], [sums[u][1] for u in order], len(order), alpha=0.05,
                              bound=bound, bets=method[0], sides=method[1])
        verdict = truth
        for end in batches(order, trials, workers):
            low, high = 2 * path.low[end - 1] - 1, 2 * path.high[end - 1] - 1
            verdict = truth if end == len(order) else "higher" if low > 0 else "lower" if high < 0 else ""
            if verdict:
                break
        used.append(sum(calls[u] for u in order[:end]) / sum(calls.values()))
        right.append(verdict == truth)
    return full, sum(used) / orders, sum(right) / orders


def make(folder: Path) -> None:
    import knowgap

    folder.mkdir(parents=True, exist_ok=True)
    for name, (suite, options, repeats) in LARGER.items():
        result = knowgap.run(suite, models={"target": SYSTEM}, options=options, repeats=repeats, use_cache=False,
                             runs_root=folder / name, progress=False)
        print(f"made {name}: {result.manifest.trials_ok} trials ok, {result.manifest.trials_error} errors",
              flush=True)


def check(path: Path, key: tuple[str, str], distance: float, seeds: range, workers: int) -> None:
    """The real engine with --until decided on the run's own plan and system, in the orders ``seeds`` give (its
    trial seeds unchanged): each must stop where the replay says, with the replay's decision."""
    import knowgap
    from knowgap.report.data import load_run_data

    cfg = load_run_data(path).manifest.config
    settings: dict[str, Any] = {"models": dict(cfg.models), "options": cfg.options, "repeats": cfg.repeats,
                                "seed": cfg.seed, "use_cache": False, "concurrency": workers}
    with tempfile.TemporaryDirectory() as tmp:  # the full run by this code, the one the replay replays
        full = knowgap.run(cfg.suite, runs_root=tmp, **settings)
        r = Replay(load(full.path), key, workers)
    threshold = round(r.full - distance, 4)
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            result = knowgap.run(cfg.suite, runs_root=tmp, until="decided", order_seed=seed,
                                 thresholds=[f"{key[0]}[{key[1]}] >= {threshold}"], **settings)
        record = result.manifest.sequential
        assert record is not None
        [(units, verdict)] = r.stops(seed, [threshold])
        [seq] = [s for s in record.sequences if (s.metric, s.group) == key]
        same = (record.units_run, seq.decision) == (units, verdict)
        print(f"  check {path.name} {key[0]}[{key[1]}] >= {threshold}, order {seed}: engine {record.units_run} units "
              f"{seq.decision}, replay {units} units {verdict}: {'same' if same else 'DIFFERENT'}", flush=True)
        if not same:
            raise SystemExit(1)


def headline(rep: Replayable) -> list[tuple[str, str]]:
    """The replayable proportions of a run with the most observations: up to two (metric, group) pairs."""
    keys: list[tuple[str, str]] = []
    for m in sorted(rep.full, key=lambda m: -m.n):
        if m.kind != "proportion" or not m.n or m.value is None or not 0.05 < m.value < 0.95:
            continue
        if pooled(rep, (m.name, m.group))[1] and m.name not in {k[0] for k in keys}:
            keys.append((m.name, m.group))
        if len(keys) == 2:
            break
    return keys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, action="append", help="a folder of run folders (repeatable)")
    parser.add_argument("--make", type=Path, help="make the larger identity runs here first")
    parser.add_argument("--orders", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--check", type=int, default=0, help="run the real engine on N orders of each run and "
                                                             "hold it to the replay")
    parser.add_argument("--pair", type=Path, nargs=2, metavar=("CANDIDATE", "BASELINE"),
                        help="replay a paired comparison of two finished runs of one plan instead (with --compare)")
    parser.add_argument("--compare", help="METRIC[GROUP] of --pair")
    parser.add_argument("--old", action="store_true", help="replay the rule before (two-sided at alpha, predmix "
                                                               "bets) instead of the engine's")
    args = parser.parse_args()
    method = TWO_SIDED if args.old else DECISION
    print(f"rule: {method[0]} bets, {'each end one-sided' if method[1] == 'each' else 'two-sided'}", flush=True)
    if args.pair:
        if not args.compare or "[" not in args.compare:
            parser.error("--pair needs --compare METRIC[GROUP]")
        key = (args.compare.split("[", 1)[0], args.compare.split("[", 1)[1].rstrip("]"))
        candidate, baseline = load(args.pair[0]), load(args.pair[1])
        difference, share, right = replay_pair(candidate, baseline, key, args.orders, args.concurrency, method)
        print(f"{candidate.name} against {baseline.name}: {len(candidate.units)} units, {args.compare} "
              f"difference {difference:+.3f}: mean share of the candidate's calls {share:.2f}, orders deciding its "
              f"sign {right:.3f}")
        return
    from tests.stats.metric_identity import stored_runs

    if args.make:
        make(args.make)
    folders = list(args.runs or [])
    if args.make:
        folders += [args.make / name for name in LARGER]
    with stored_runs() as fixtures:
        for folder in [fixtures, *folders]:
            for path in sorted(p for p in folder.iterdir() if (p / "manifest.json").exists()):
                rep = load(path)
                trials, calls = len(rep.records), calls_of(rep.records)
                for key in headline(rep):
                    full = next(m for m in rep.full if (m.name, m.group) == key)
                    curve = replay(rep, key, args.orders, args.concurrency, method)
                    cells = "  ".join(f"{side[0]}{d:.2f}: {u:.2f}/{r:.2f}" for (side, d), (u, r) in
                                      sorted(curve.items(), key=lambda kv: (kv[0][1], kv[0][0])))
                    print(f"{rep.name:22} {len(rep.units):4d} units {trials:5d} trials {calls:5d} calls  "
                          f"{key[0]}[{key[1]}] = {full.value:.3f}  {cells}", flush=True)
                    if args.check:
                        check(path, key, 0.10, range(args.check), args.concurrency)


if __name__ == "__main__":
    main()
