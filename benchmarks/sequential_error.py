"""Wrong gate decisions of ``--until decided``, by simulation: the anytime-valid sequence against a fixed-n interval
stopped the same way (peeking).

Each simulated run is a suite of G cases (units) with 1 to 5 trials each (uniform), outcomes drawn with an
intra-cluster correlation (a case's rate from a Beta of mean ``rate`` and ICC ``icc``, then its trials binomial),
run in a random order. The gate is ``metric >= threshold``; the truth is what the full run's value says (the
finite set's k / n, the number the gate compares after a full run). After every ``batch`` cases each rule looks:

- ``sequence``: :func:`knowgap.stats.sequential.wor_betting_cs` with the product's decision rule
  (:data:`knowgap.engine.stopping.DECISION`: each end one-sided at 1 - alpha, aGRAPA bets), decided at level alpha;
  ``--old``: the rule before it (the two-sided hedged interval at alpha, predictable-mixture bets);
- ``wilson``: the clustered Wilson interval of the cases so far (the fixed-n interval every report shows),
  stopping when it lies wholly above or below the threshold: what stopping a fixed-n run "when it looks decided"
  does.

A rule that reaches the last case has the exact value and decides right. A wrong decision is a stop on the wrong
side.

**Judge error with a known card** (``--judged``): the trials' true outcomes are drawn as above, and a judge of
sensitivity ``se`` and specificity ``sp`` labels each one (its verdicts are what the run observes); its card is a
labelled set of ``card_n`` items, half positive, drawn afresh for each run (so the card's own error counts). The
gate ``corrected >= threshold`` is on the rate a perfect judge would give; the truth is the set's true rate. Rules:

- ``corrected``: the product's rule (``use: corrected``): the observed rate's sequence at alpha/2 (each end
  one-sided, as the decision rule's) and the card's box
  (Wilson, alpha/4 each for se and sp), the Rogan-Gladen range over both (:mod:`knowgap.stats.judge_correction`);
- ``uncorrected``: the observed rate's sequence at alpha gated on the same threshold (a gate on the judged value);
- ``plug-in``: the observed rate's sequence at alpha corrected with the card's point se and sp (no box).

::

    python benchmarks/sequential_error.py                       # every scenario, 10,000 runs each
    python benchmarks/sequential_error.py --runs 2000 --cases 60
    python benchmarks/sequential_error.py --judged              # judge error with a known card, 10,000 runs each
    python benchmarks/sequential_error.py --judged --only 0.7,0.95
    python benchmarks/sequential_error.py --old                 # the rule before (two-sided, predmix bets)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass

import numpy as np

from knowgap.engine.stopping import DECISION, TWO_SIDED
from knowgap.stats import clustered_wilson
from knowgap.stats.judge_correction import CardBox, alpha_split, card_box, corrected_range
from knowgap.stats.sequential import Bets, Sides, decide, wor_betting_cs

RULE: dict[str, tuple[Bets, Sides]] = {"product": DECISION, "old": TWO_SIDED}
"""The sequence's bets and sides by rule: the product's decision rule, or the one before it."""


@dataclass(frozen=True)
class Scenario:
    rate: float
    """The rate the cases are drawn around (the realised full-set value varies about it)."""
    threshold: float
    icc: float
    cases: int = 100
    batch: int = 1
    alpha: float = 0.05
    rule: str = "product"


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
        bets, sides = RULE[s.rule]
        path = wor_betting_cs(k.tolist(), n.tolist(), s.cases, alpha=s.alpha, bound=5, bets=bets, sides=sides)
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


@dataclass(frozen=True)
class JudgedScenario:
    rate: float
    """The true rate the cases are drawn around (the set's realised true rate varies about it)."""
    threshold: float
    icc: float
    se: float = 0.9
    sp: float = 0.85
    card_n: int = 100
    cases: int = 100
    alpha: float = 0.05
    rule: str = "product"


@dataclass
class JudgedOutcome:
    scenario: JudgedScenario
    runs: int
    wrong_corrected: int
    wrong_uncorrected: int
    wrong_plugin: int
    decided_corrected: int
    """Runs the corrected sequence decided (before or at the last case)."""
    cases_corrected: float
    """Mean share of the cases the corrected sequence ran before it stopped."""
    cases_uncorrected: float

    def line(self) -> str:
        s, r = self.scenario, self.runs
        return (f"true {s.rate:.2f} (judged {s.rate * s.se + (1 - s.rate) * (1 - s.sp):.3f}) vs {s.threshold:.2f}  "
                f"icc {s.icc:.1f}  se {s.se} sp {s.sp} card n={s.card_n}: wrong corrected "
                f"{self.wrong_corrected / r:.4f}, uncorrected {self.wrong_uncorrected / r:.4f}, plug-in "
                f"{self.wrong_plugin / r:.4f}; corrected decided {self.decided_corrected / r:.3f}; cases run "
                f"{self.cases_corrected:.2f} vs {self.cases_uncorrected:.2f}")


def first_corrected(lows: list[float], highs: list[float], box: CardBox, threshold: float) -> tuple[str, int]:
    """The first case after which the corrected range over ``box`` decides ``>= threshold``; ``undecided`` with
    every case when none does (the card's box keeps the range open even at the exact observed value)."""
    for end in range(1, len(lows) + 1):
        found = corrected_range(lows[end - 1], highs[end - 1], box)
        if found is None:
            return "undecided", len(lows)
        verdict = decide(found[0], found[1], ">=", threshold)
        if verdict != "undecided":
            return verdict, end
    return "undecided", len(lows)


def simulate_judged(s: JudgedScenario, runs: int, seed: int = 0) -> JudgedOutcome:
    rng = np.random.default_rng(seed)
    wrong = {"corrected": 0, "uncorrected": 0, "plugin": 0}
    decided = 0
    used_corrected = used_uncorrected = 0.0
    base = Scenario(s.rate, s.threshold, s.icc, cases=s.cases, alpha=s.alpha)
    alpha_observed, alpha_card = alpha_split(s.alpha)
    positives = s.card_n // 2
    for _ in range(runs):
        true_k, sizes = population(rng, base)
        truth = "pass" if true_k.sum() / sizes.sum() >= s.threshold else "fail"
        judged = rng.binomial(true_k, s.se) + rng.binomial(sizes - true_k, 1 - s.sp)
        tp = int(rng.binomial(positives, s.se))
        tn = int(rng.binomial(s.card_n - positives, s.sp))
        box = card_box(tp, positives - tp, s.card_n - positives - tn, tn, alpha_card)
        se_hat, sp_hat = tp / positives, tn / (s.card_n - positives)
        point = CardBox((se_hat, se_hat), (sp_hat, sp_hat), alpha=0.0)
        order = rng.permutation(s.cases)
        k, n = judged[order].tolist(), sizes[order].tolist()
        bets, sides = RULE[s.rule]
        half = wor_betting_cs(k, n, s.cases, alpha=alpha_observed, bound=5, bets=bets, sides=sides)
        whole = wor_betting_cs(k, n, s.cases, alpha=s.alpha, bound=5, bets=bets, sides=sides)
        verdict, used = first_corrected(half.low, half.high, box, s.threshold)
        wrong["corrected"] += verdict not in ("undecided", truth)
        decided += verdict != "undecided"
        used_corrected += used / s.cases
        verdict, used = first_decision(whole.low, whole.high, 1, s.threshold)
        wrong["uncorrected"] += verdict not in ("undecided", truth)
        used_uncorrected += used / s.cases
        verdict, _ = first_corrected(whole.low, whole.high, point, s.threshold)
        wrong["plugin"] += verdict not in ("undecided", truth)
    return JudgedOutcome(s, runs, wrong["corrected"], wrong["uncorrected"], wrong["plugin"], decided,
                         used_corrected / runs, used_uncorrected / runs)


JUDGED = [JudgedScenario(rate, 0.7, 0.4) for rate in (0.7, 0.72, 0.8, 0.95, 0.45)]
"""se 0.9, sp 0.85, a card of 100 items: the true rate at the threshold, near it (+0.02: the judged rate, 0.69, lies
below it), 0.10 above, far above and far below; ICC 0.4."""


def main_judged(args: argparse.Namespace) -> None:
    outcomes = []
    wanted = None if not args.only else {float(x) for x in args.only.split(",")}
    for s in JUDGED:
        if wanted is not None and s.rate not in wanted:
            continue
        s = JudgedScenario(s.rate, s.threshold, s.icc, cases=args.cases, rule=args.rule)
        started = time.perf_counter()
        outcome = simulate_judged(s, args.runs, seed=args.seed + 100 + [j.rate for j in JUDGED].index(s.rate))
        outcomes.append(outcome)
        print(f"{outcome.line()}  ({time.perf_counter() - started:.0f} s)", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump([{**asdict(o.scenario), **{k: v for k, v in asdict(o).items() if k != "scenario"}}
                       for o in outcomes], f, indent=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--json", help="write the outcomes here too")
    parser.add_argument("--only", help="scenarios RATE:ICC, comma-separated (default: every one); with --judged: "
                                       "RATE,RATE")
    parser.add_argument("--judged", action="store_true", help="the judge-error scenarios (a judge of se 0.9, sp 0.85 "
                                                              "with a card of 100 items) instead")
    parser.add_argument("--old", dest="rule", action="store_const", const="old", default="product",
                        help="the sequence of the rule before (two-sided at alpha, predmix bets)")
    args = parser.parse_args()
    print(f"rule: {args.rule} {RULE[args.rule]}", flush=True)
    if args.judged:
        main_judged(args)
        sys.exit(0)
    chosen = SCENARIOS
    if args.only:
        wanted = {tuple(float(x) for x in item.split(":")) for item in args.only.split(",")}
        chosen = [s for s in SCENARIOS if (s.rate, s.icc) in wanted]
    outcomes = []
    for base in chosen:
        s = Scenario(base.rate, base.threshold, base.icc, cases=args.cases, batch=args.batch, rule=args.rule)
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
