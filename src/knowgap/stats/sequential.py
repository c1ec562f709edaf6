"""Anytime-valid confidence sequences for the value a whole run would report, from units drawn in a random order
without replacement (``knowgap run --until decided``; docs/statistics.md, "Stopping when the gate is decided").

The population is the run's planned set of G units (cases, or the cases that share a source, run together).
Unit u holds ``n_u`` observations of a metric (trials, or a trial's parts) whose values lie in [0, 1] and sum
to ``s_u`` (a proportion: its k successes). The full run reports the ratio ``p = sum s_u / sum n_u``. The units
run in a uniformly random order; after the first t of them, :func:`wor_betting_cs` gives an interval that holds
p with probability at least 1 - alpha **at every t at once**, so a run may stop the moment the interval decides
a threshold, without the error of peeking at a fixed-n interval.

The construction, for one candidate value m of p:

- the ratio estimator's transform (one unit, one bounded draw): ``w_u(m) = (s_u - m n_u) / B + m``, with B an
  upper bound of every ``n_u`` known before the run. Each ``w_u(m)`` lies in [0, 1], and their mean over the G
  units is exactly m when p = m (the sum of ``s_u - m n_u`` is then 0); with every unit of one size B,
  ``w_u(m)`` is the unit's own rate ``s_u / B`` whatever m is;
- sampling without replacement (Waudby-Smith and Ramdas 2020, "Confidence sequences for sampling without
  replacement", NeurIPS; arXiv:2006.04347): given the first t-1 draws, the next draw's mean under p = m is
  ``mu_t(m) = (G m - sum_{i<t} w_i(m)) / (G - t + 1)``; a ``mu_t`` outside [0, 1] rules m out by logic;
- betting (Waudby-Smith and Ramdas 2023, "Estimating means of bounded random variables by betting", JRSS B;
  arXiv:2010.09686): the hedged capital process ``K_t(m) = max(theta K+_t, (1 - theta) K-_t)`` with
  ``K+-_t = prod_i (1 +- lambda+-_i (w_i(m) - mu_i(m)))``, bets ``lambda_i`` the predictable plug-in of their
  predictable-mixture empirical-Bernstein rule (``sqrt(2 log(1 / (alpha theta)) / (sigma2_{i-1} i log(1 + i)))``
  on a regularised running variance) truncated at ``1/2 / mu_i`` and ``1/2 / (1 - mu_i)``, theta = 1/2. Under
  p = m it is a nonnegative martingale starting at 1, so by Ville's inequality it ever reaches 1/alpha with
  probability at most alpha (Howard, Ramdas, McAuliffe and Sekhon 2021, "Time-uniform, nonparametric,
  nonasymptotic confidence sequences", Ann. Statist.);
- the sequence is ``{m : max_{s<=t} K_s(m) < 1/alpha}`` (the running intersection: a value ruled out stays out),
  computed on a grid of m and widened by one grid step each side, as the authors' ``confseq`` package does;
  once every unit has run it is the exact value, [p, p].

With every unit of one observation (B = 1) the capital process is the authors' ``confseq.betting.betting_mart``
with ``N = G`` bit for bit (``tests/stats/test_sequential.py`` holds it to values that package computed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

Decision = Literal["pass", "fail", "undecided"]
THETA = 0.5
TRUNCATION = 0.5
GRID = 1000
"""Grid steps over [0, 1]: the sequence's ends are at most one step (0.001) wider than on a continuous grid."""


@dataclass(frozen=True)
class SequencePath:
    """A confidence sequence after each unit: ``low[t]``, ``high[t]`` and the running ratio ``estimate[t]`` after
    units 0..t (0-based)."""

    low: list[float]
    high: list[float]
    estimate: list[float | None]


def predmix_bets(x: np.ndarray, alpha: float) -> np.ndarray:
    """The predictable-mixture empirical-Bernstein bets of Waudby-Smith and Ramdas (2023) for draws ``x`` (rows are
    separate sequences, columns time): bet t uses draws before t only (a prior mean 1/2 and variance 1/4 counted
    as one draw)."""
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    mu_hat = np.minimum((0.5 + np.cumsum(x, axis=-1)) / (t + 1), 1.0)
    sigma2 = (0.25 + np.cumsum((x - mu_hat) ** 2, axis=-1)) / (t + 1)
    sigma2_before = np.concatenate([np.full(x.shape[:-1] + (1,), 0.25), sigma2[..., :-1]], axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        bets = np.sqrt(2 * math.log(1 / alpha) / (t * np.log1p(t) * sigma2_before))
    return np.nan_to_num(bets, nan=0.0, posinf=np.inf)


def wor_log_capital(w: np.ndarray, m: np.ndarray, population: int, alpha: float) -> np.ndarray:
    """log K_t(m) of the hedged capital process for draws ``w`` (rows: candidate means ``m``, columns: time) from a
    population of ``population`` units without replacement; +inf where ``mu_t(m)`` leaves [0, 1] (m impossible)."""
    steps = w.shape[-1]
    t = np.arange(1, steps + 1, dtype=float)
    before = np.cumsum(w, axis=-1) - w
    mu = (population * m[:, None] - before) / (population - t + 1)
    bets = predmix_bets(w, alpha * THETA)
    same = THETA == 0.5  # both sides bet alike (their alpha is split evenly)
    other = bets if same else predmix_bets(w, alpha * (1 - THETA))
    excess = w - mu
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.minimum(bets, np.where(mu > 0, TRUNCATION / mu, np.inf))
        down = np.minimum(other, np.where(mu < 1, TRUNCATION / (1 - mu), np.inf))
        log_up = np.cumsum(np.log(np.maximum(1 + up * excess, 0.0)), axis=-1)
        log_down = np.cumsum(np.log(np.maximum(1 - down * excess, 0.0)), axis=-1)
    log_k = np.maximum(math.log(THETA) + log_up, math.log(1 - THETA) + log_down)
    impossible = (mu < 0) | (mu > 1)
    return np.where(impossible, np.inf, np.nan_to_num(log_k, nan=np.inf))


def wor_betting_cs(sums: Sequence[float], sizes: Sequence[float], population: int, *, alpha: float = 0.05,
                   bound: float | None = None, grid: int = GRID) -> SequencePath:
    """The confidence sequence for ``p = sum(sums) / sum(sizes)`` over a population of ``population`` units, after
    each of the units given (in the random order they ran): unit t has ``sizes[t]`` observations in [0, 1]
    summing to ``sums[t]``. ``bound`` is an upper bound of every unit's size known before the run (default: the
    largest size given). The units given are the first of the population; once all ``population`` have run the
    interval is [p, p]."""
    steps = len(sums)
    if steps != len(sizes):
        raise ValueError(f"{steps} unit sums but {len(sizes)} unit sizes")
    if steps > population:
        raise ValueError(f"{steps} units run of a population of {population}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if steps == 0:
        return SequencePath([], [], [])
    s = np.asarray(sums, dtype=float)
    n = np.asarray(sizes, dtype=float)
    if (n < 0).any() or (s < -1e-9).any() or (s > n + 1e-9).any():
        raise ValueError("every unit's sum must lie in [0, its size]: the metric is not a score in [0, 1]")
    scale = float(bound if bound is not None else n.max())
    if scale < n.max():
        raise ValueError(f"a unit has {n.max():g} observations, more than the bound {scale:g}")
    scale = max(scale, 1.0)
    m = np.linspace(0.0, 1.0, grid + 1)
    w = np.clip((s[None, :] - m[:, None] * n[None, :]) / scale + m[:, None], 0.0, 1.0)
    log_k = np.maximum.accumulate(wor_log_capital(w, m, population, alpha), axis=-1)
    kept = log_k < math.log(1 / alpha)
    step = 1.0 / grid
    total_s, total_n = np.cumsum(s), np.cumsum(n)
    low: list[float] = []
    high: list[float] = []
    estimate: list[float | None] = []
    last = (0.0, 1.0)
    for t in range(steps):
        point = float(total_s[t] / total_n[t]) if total_n[t] > 0 else None
        estimate.append(point)
        if t == population - 1 and point is not None:
            last = (point, point)
        else:
            where = np.flatnonzero(kept[:, t])
            if where.size:  # else the grid lost the value between two points: keep the last interval
                last = (max(0.0, max(last[0], m[where[0]] - step)), min(1.0, min(last[1], m[where[-1]] + step)))
        low.append(last[0])
        high.append(last[1])
    return SequencePath(low, high, estimate)


def decide(low: float, high: float, op: str, value: float) -> Decision:
    """A threshold ``p OP value`` on a value known to lie in [low, high]: ``pass`` when every value there
    satisfies it, ``fail`` when none does, else ``undecided``."""
    if op == ">=":
        return "pass" if low >= value else "fail" if high < value else "undecided"
    if op == ">":
        return "pass" if low > value else "fail" if high <= value else "undecided"
    if op == "<=":
        return "pass" if high <= value else "fail" if low > value else "undecided"
    if op == "<":
        return "pass" if high < value else "fail" if low >= value else "undecided"
    if op == "==":
        return "pass" if low == high == value else "fail" if value < low or value > high else "undecided"
    if op == "!=":
        return "fail" if low == high == value else "pass" if value < low or value > high else "undecided"
    raise ValueError(f"unknown comparison {op!r}")
