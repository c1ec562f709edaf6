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

What a threshold's decision uses (``sides="each"``, ``bets="agrapa"``; :data:`knowgap.engine.stopping.DECISION`):
each end on its own side's process, the lower end ``K+`` alone reaching 1/alpha and the upper end ``K-`` alone, so
each end is a one-sided bound at 1 - alpha (a decision ``p >= c`` is wrong only when the end on its side excludes
p, so it is wrong with probability at most alpha); and the same paper's aGRAPA bets (its section on testing), aimed
at the running mean rather than shrinking like ``1/sqrt(t log t)``. Any predictable bet keeps each side a
nonnegative martingale under p = m, so the bets change the power, not the guarantee.

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
Bets = Literal["predmix", "agrapa"]
Sides = Literal["two", "each"]
"""two: the interval holds p with probability 1 - alpha (the hedged process, alpha/2 a side); each: each end is a
one-sided bound at 1 - alpha (its own side's process), which is what a threshold's decision needs."""
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


def agrapa_bets(x: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The approximate growth-rate-adaptive bets (aGRAPA) of Waudby-Smith and Ramdas (2023, the section on testing)
    against the null means ``mu`` (the next draw's mean under each candidate value, same shape as ``x``): bet t is
    ``(mu_hat - mu_t) / (sigma2_hat + (mu_hat - mu_t)^2)`` with ``mu_hat`` and ``sigma2_hat`` the regularised
    running mean and variance of the draws before t (as :func:`predmix_bets`' prior: mean 1/2 and variance 1/4
    counted as one draw). Returns the raw bets of ``K+`` (the positive part) and of ``K-`` (the negative part),
    before truncation."""
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    mu_hat = np.minimum((0.5 + np.cumsum(x, axis=-1)) / (t + 1), 1.0)
    sigma2 = (0.25 + np.cumsum((x - mu_hat) ** 2, axis=-1)) / (t + 1)
    mu_before = np.concatenate([np.full(x.shape[:-1] + (1,), 0.5), mu_hat[..., :-1]], axis=-1)
    sigma2_before = np.concatenate([np.full(x.shape[:-1] + (1,), 0.25), sigma2[..., :-1]], axis=-1)
    gap = mu_before - mu
    with np.errstate(divide="ignore", invalid="ignore"):
        bet = np.nan_to_num(gap / (sigma2_before + gap * gap), nan=0.0)
    return np.maximum(bet, 0.0), np.maximum(-bet, 0.0)


def wor_log_capitals(w: np.ndarray, m: np.ndarray, population: int, alpha: float, *, bets: Bets = "predmix",
                     sides: Sides = "two") -> tuple[np.ndarray, np.ndarray]:
    """``(log K+_t(m), log K-_t(m))``, each side's own capital process, for draws ``w`` (rows: candidate means
    ``m``, columns: time) from a population of ``population`` units without replacement; +inf where ``mu_t(m)``
    leaves [0, 1] (m impossible). ``K+`` grows when the draws run above ``mu_t(m)`` (it rules out values of p too
    low), ``K-`` when they run below. ``bets``: predmix (sized for the level each side is tested at: ``alpha
    theta`` when ``sides`` is two, ``alpha`` when each) or agrapa (aimed at the running mean, whatever the level)."""
    steps = w.shape[-1]
    t = np.arange(1, steps + 1, dtype=float)
    before = np.cumsum(w, axis=-1) - w
    mu = (population * m[:, None] - before) / (population - t + 1)
    if bets == "predmix":
        level = alpha * THETA if sides == "two" else alpha
        up_bets = predmix_bets(w, level)
        same = THETA == 0.5 or sides == "each"  # both sides bet alike (their alpha is split evenly)
        down_bets = up_bets if same else predmix_bets(w, alpha * (1 - THETA))
    elif bets == "agrapa":
        up_bets, down_bets = agrapa_bets(w, mu)
    else:
        raise ValueError(f"unknown bets {bets!r}: expected predmix or agrapa")
    excess = w - mu
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.minimum(up_bets, np.where(mu > 0, TRUNCATION / mu, np.inf))
        down = np.minimum(down_bets, np.where(mu < 1, TRUNCATION / (1 - mu), np.inf))
        log_up = np.cumsum(np.log(np.maximum(1 + up * excess, 0.0)), axis=-1)
        log_down = np.cumsum(np.log(np.maximum(1 - down * excess, 0.0)), axis=-1)
    impossible = (mu < 0) | (mu > 1)
    return (np.where(impossible, np.inf, np.nan_to_num(log_up, nan=np.inf)),
            np.where(impossible, np.inf, np.nan_to_num(log_down, nan=np.inf)))


def wor_log_capital(w: np.ndarray, m: np.ndarray, population: int, alpha: float, *,
                    bets: Bets = "predmix") -> np.ndarray:
    """log K_t(m) of the hedged capital process ``max(theta K+, (1 - theta) K-)`` (the two-sided sequence at
    ``alpha``); +inf where ``mu_t(m)`` leaves [0, 1] (m impossible)."""
    log_up, log_down = wor_log_capitals(w, m, population, alpha, bets=bets, sides="two")
    return np.maximum(math.log(THETA) + log_up, math.log(1 - THETA) + log_down)


def wor_betting_cs(sums: Sequence[float], sizes: Sequence[float], population: int, *, alpha: float = 0.05,
                   bound: float | None = None, grid: int = GRID, bets: Bets = "predmix",
                   sides: Sides = "two") -> SequencePath:
    """The confidence sequence for ``p = sum(sums) / sum(sizes)`` over a population of ``population`` units, after
    each of the units given (in the random order they ran): unit t has ``sizes[t]`` observations in [0, 1]
    summing to ``sums[t]``. ``bound`` is an upper bound of every unit's size known before the run (default: the
    largest size given). The units given are the first of the population; once all ``population`` have run the
    interval is [p, p].

    ``sides`` two (default): ``[low, high]`` holds p at every t at once with probability 1 - alpha (the hedged
    process). each: ``low`` is a lower bound of p at every t with probability 1 - alpha (``K+`` alone reaching
    1/alpha rules a value out), ``high`` an upper bound with probability 1 - alpha (``K-`` alone): a threshold
    ``p >= c`` decided pass when ``low >= c`` and fail when ``high < c`` is wrong with probability at most alpha,
    since each wrong decision needs the one end on its side to exclude p (the interval as a whole holds p with
    probability 1 - 2 alpha). ``bets``: predmix (the default) or agrapa (:func:`agrapa_bets`)."""
    steps = len(sums)
    if steps != len(sizes):
        raise ValueError(f"{steps} unit sums but {len(sizes)} unit sizes")
    if steps > population:
        raise ValueError(f"{steps} units run of a population of {population}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if sides not in ("two", "each"):
        raise ValueError(f"unknown sides {sides!r}: expected two or each")
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
    limit = math.log(1 / alpha)
    if sides == "two":
        kept_low = kept_high = np.maximum.accumulate(
            wor_log_capital(w, m, population, alpha, bets=bets), axis=-1) < limit
    else:
        log_up, log_down = wor_log_capitals(w, m, population, alpha, bets=bets, sides="each")
        kept_low = np.maximum.accumulate(log_up, axis=-1) < limit
        kept_high = np.maximum.accumulate(log_down, axis=-1) < limit
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
            lows, highs = np.flatnonzero(kept_low[:, t]), np.flatnonzero(kept_high[:, t])
            # an empty side: the grid lost the value between two points; keep that end where it was
            lo = max(last[0], m[lows[0]] - step) if lows.size else last[0]
            hi = min(last[1], m[highs[-1]] + step) if highs.size else last[1]
            if lo > hi:  # the ends crossed (each side excluded the other's values): their middle decides as they do
                lo = hi = (lo + hi) / 2
            last = (max(0.0, lo), min(1.0, hi))
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
