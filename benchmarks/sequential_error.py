"""Wrong gate decisions of ``--until decided``, by simulation: the anytime-valid sequence against a fixed-n interval
stopped the same way (peeking).

Each simulated run is a suite of G cases (units) with 1 to 5 trials each (uniform), outcomes drawn with an
intra-cluster correlation (a case's rate from a Beta of mean ``rate`` and ICC ``icc``, then its trials binomial),
run in a random order. The gate is ``metric >= threshold``; the truth is what the full run's value says (the
finite set's k / n, the number the gate compares after a full run). After every ``batch`` cases each rule looks:

- ``sequence``: :func:`knowgap.stats.sequential.wor_betting_cs` (the product's rule), decided at level alpha;
- ``wilson``: the clustered Wilson interval of the cases so far (the fixed-n interval every report shows),
  stopping when it lies wholly above or below the threshold: what stopping a fixed-n run "when it looks decided"
  does.

A rule that reaches the last case has the exact value and decides right. A wrong decision is a stop on the wrong
side. ::

    python benchmarks/sequential_error.py                       # every scenario, 10,000 runs each
    python benchmarks/sequential_error.py --runs 2000 --cases 60
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass

import numpy as np

from knowgap.stats import clustered_wilson
from knowgap.stats.sequential import decide, wor_betting_cs


@dataclass(frozen=True)
class Scenario:
    rate: float
    """The rate the cases are drawn around (the realised full-set value varies about it)."""
    threshold: float
    icc: float
    cases: int = 100
    batch: int = 1
    alpha: float = 0.05


@dataclass
class Outcome:
    scenario: Scenario
    runs: int
    wrong_sequence: int
    wrong_wilson: int
    cases_sequence: float
    """Mean share of the cases the sequence ran before it stopped."""
    cases_wilson: float
    undecided_sequence: int
    """Runs the sequence took to the last case."""

    def line(self) -> str:
        s = self.scenario
        return (f"rate {s.rate:.2f} vs {s.threshold:.2f}  icc {s.icc:.1f}  G {s.cases:4d}  batch {s.batch}: "
                f"wrong sequence {self.wrong_sequence / self.runs:.4f}, wilson {self.wrong_wilson / self.runs:.4f}; "
                f"cases run {self.cases_sequence:.2f} vs {self.cases_wilson:.2f}; "
                f"to the end {self.undecided_sequence / self.runs:.3f}")


def population(rng: np.random.Generator, s: Scenario) -> tuple[np.ndarray, np.ndarray]:
    """(successes, trials) of each of the scenario's cases."""
    sizes = rng.integers(1, 6, s.cases)
    if s.icc <= 0:
        rates = np.full(s.cases, s.rate)
    else:
        total = (1 - s.icc) / s.icc
        rates = rng.beta(s.rate * total, (1 - s.rate) * total, s.cases)
    return rng.binomial(sizes, rates), sizes


def first_decision(lows: list[float], highs: list[float], batch: int, threshold: float) -> tuple[str, int]:
    """The first look (after every ``batch`` cases, and after the last) whose interval decides ``>= threshold``:
    (decision, cases run); ``undecided`` with every case when none does."""
    last = len(lows)
    for end in [*range(batch, last, batch), last]:
        verdict = decide(lows[end - 1], highs[end - 1], ">=", threshold)
        if verdict != "undecided":
            return verdict, end
    return "undecided", last


def wilson_path(successes: np.ndarray, sizes: np.ndarray) -> tuple[list[float], list[float]]:
    lows, highs = [], []
    for t in range(1, len(sizes) + 1):
        if t == len(sizes):  # the whole set: its exact value, as the full run reports it
            value = float(successes.sum() / sizes.sum())
            lows.append(value)
            highs.append(value)
            continue
        lo, hi = clustered_wilson(list(zip(successes[:t].tolist(), sizes[:t].tolist(), strict=True)))
        lows.append(lo)
        highs.append(hi)
    return lows, highs


def simulate(s: Scenario, runs: int, seed: int = 0) -> Outcome:
    rng = np.random.default_rng(seed)
    wrong_seq = wrong_wil = undecided = 0
    used_seq = used_wil = 0.0
    for _ in range(runs):
        successes, sizes = population(rng, s)
        truth = "pass" if successes.sum() / sizes.sum() >= s.threshold else "fail"
        order = rng.permutation(s.cases)
        k, n = successes[order], sizes[order]
        path = wor_betting_cs(k.tolist(), n.tolist(), s.cases, alpha=s.alpha, bound=5)
        verdict, used = first_decision(path.low, path.high, s.batch, s.threshold)
        wrong_seq += verdict not in ("undecided", truth)
        undecided += used == s.cases
        used_seq += used / s.cases
        lows, highs = wilson_path(k, n)
        verdict, used = first_decision(lows, highs, s.batch, s.threshold)
        wrong_wil += verdict not in ("undecided", truth)
        used_wil += used / s.cases
    return Outcome(s, runs, wrong_seq, wrong_wil, used_seq / runs, used_wil / runs, undecided)


SCENARIOS = [Scenario(rate, 0.7, icc) for icc in (0.0, 0.4, 0.8) for rate in (0.7, 0.72, 0.6, 0.8, 0.95)]
"""At the threshold, near it (+0.02), 0.10 below and above, and far above (+0.25); ICC 0, 0.4 and 0.8."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--json", help="write the outcomes here too")
    parser.add_argument("--only", help="scenarios RATE:ICC, comma-separated (default: every one)")
    args = parser.parse_args()
    chosen = SCENARIOS
    if args.only:
        wanted = {tuple(float(x) for x in item.split(":")) for item in args.only.split(",")}
        chosen = [s for s in SCENARIOS if (s.rate, s.icc) in wanted]
    outcomes = []
    for base in chosen:
        s = Scenario(base.rate, base.threshold, base.icc, cases=args.cases, batch=args.batch)
        started = time.perf_counter()
        outcome = simulate(s, args.runs, seed=args.seed + SCENARIOS.index(base))
        outcomes.append(outcome)
        print(f"{outcome.line()}  ({time.perf_counter() - started:.0f} s)", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump([{**asdict(o.scenario), **{k: v for k, v in asdict(o).items() if k != "scenario"}}
                       for o in outcomes], f, indent=1)
    sys.exit(0)


if __name__ == "__main__":
    main()
