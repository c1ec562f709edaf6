"""Sample sizes for comparing two proportions, and what repeats of a case are worth (``knowgap plan``).

Pure functions on plain numbers (no numpy), normal approximations as the textbooks give them:

- two independent groups: n per group = [z(1-a/2)·sqrt(2·p̄q̄) + z(power)·sqrt(p1q1 + p2q2)]² / δ², the equation
  R's ``power.prop.test`` solves (Fleiss, *Statistical Methods for Rates and Proportions*, without continuity
  correction);
- the same cases under both configurations (paired, McNemar's test): n = [z(1-a/2)·sqrt(ψ) + z(power)·sqrt(ψ -
  δ²)]² / δ² with ψ the discordance rate, the share of cases whose verdict differs between the two (Connor 1987,
  *Biometrics* 43:207-211);
- R repeats of a case whose trials correlate by ICC: design effect 1 + (R - 1)·ICC (Kish), so the cases needed
  shrink by (1 + (R - 1)·ICC) / R: by R when repeats are independent (ICC 0), not at all when they are copies
  (ICC 1, what temperature 0 gives).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import NormalDist

_NORMAL = NormalDist()


def z(q: float) -> float:
    """The standard normal quantile of ``q``."""
    return _NORMAL.inv_cdf(q)


def _check(alpha: float, power: float, *rates: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power}")
    for p in rates:
        if not 0 <= p <= 1:
            raise ValueError(f"a rate must be in [0, 1], got {p}")


def n_independent(p1: float, p2: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Trials per group to tell ``p1`` from ``p2`` with two independent groups (two-sided test at ``alpha``)."""
    _check(alpha, power, p1, p2)
    delta = abs(p2 - p1)
    if delta == 0:
        return math.inf
    mean = (p1 + p2) / 2
    root = z(1 - alpha / 2) * math.sqrt(2 * mean * (1 - mean)) + z(power) * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return root * root / (delta * delta)


def power_independent(n: float, p1: float, p2: float, *, alpha: float = 0.05) -> float:
    """The power of the two-sided two-group test with ``n`` trials per group (the inverse of :func:`n_independent`)."""
    _check(alpha, 0.5, p1, p2)
    mean = (p1 + p2) / 2
    spread = math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    if spread == 0:
        return 1.0 if p1 != p2 else alpha
    return _NORMAL.cdf((math.sqrt(n) * abs(p2 - p1) - z(1 - alpha / 2) * math.sqrt(2 * mean * (1 - mean))) / spread)


def discordance(p1: float, p2: float, phi: float = 0.0) -> float:
    """The share of cases whose verdicts differ under two configurations with rates ``p1`` and ``p2`` whose
    verdicts on one case correlate by ``phi`` (0: independent, the most discordance short of negative
    correlation). Both-positive is p1·p2 + phi·sqrt(p1q1·p2q2), kept where a 2x2 table can have it."""
    both = p1 * p2 + phi * math.sqrt(p1 * (1 - p1) * p2 * (1 - p2))
    both = min(max(both, max(0.0, p1 + p2 - 1), 0.0), min(p1, p2))
    return p1 + p2 - 2 * both


def n_paired(p1: float, p2: float, *, psi: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Cases to tell ``p1`` from ``p2`` when every case runs under both configurations (McNemar's test), with
    discordance rate ``psi``; inf when ``psi`` is smaller than the difference (no 2x2 table has that)."""
    _check(alpha, power, p1, p2, psi)
    delta = abs(p2 - p1)
    if delta == 0 or psi < delta:
        return math.inf
    root = z(1 - alpha / 2) * math.sqrt(psi) + z(power) * math.sqrt(max(psi - delta * delta, 0.0))
    return root * root / (delta * delta)


def design_effect(repeats: int, icc: float) -> float:
    """How much R correlated trials of one case count for less than R independent ones: 1 + (R - 1)·ICC."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    if not 0 <= icc <= 1:
        raise ValueError(f"ICC must be in [0, 1], got {icc}")
    return 1 + (repeats - 1) * icc


def cases_with_repeats(cases_one_repeat: float, repeats: int, icc: float) -> float:
    """Cases needed with ``repeats`` trials each, given the cases needed with one: n·(1 + (R - 1)·ICC) / R."""
    return cases_one_repeat * design_effect(repeats, icc) / repeats


def icc_binary(clusters: Sequence[tuple[int, int]]) -> float | None:
    """The one-way ANOVA intraclass correlation of 0/1 outcomes, from (successes, trials) per case, clipped to
    [0, 1]; None when it cannot be told: fewer than two cases, no case with two trials, or no variation at all."""
    clusters = [(k, n) for k, n in clusters if n > 0]
    groups = len(clusters)
    total = sum(n for _, n in clusters)
    if groups < 2 or total <= groups:
        return None
    mean = sum(k for k, _ in clusters) / total
    between = sum(n * (k / n - mean) ** 2 for k, n in clusters) / (groups - 1)
    within = sum(k * (n - k) / n for k, n in clusters) / (total - groups)
    size = (total - sum(n * n for _, n in clusters) / total) / (groups - 1)
    denominator = between + (size - 1) * within
    if denominator <= 0:
        return None
    return min(1.0, max(0.0, (between - within) / denominator))


def phi_paired(rates: Sequence[tuple[float, float]]) -> float | None:
    """The correlation of one trial's verdict under configuration A with one under B on the same case, from each
    case's rate under A and under B; None when either configuration never varies."""
    n = len(rates)
    if n < 2:
        return None
    pa = sum(a for a, _ in rates) / n
    pb = sum(b for _, b in rates) / n
    spread = pa * (1 - pa) * pb * (1 - pb)
    if spread <= 0:
        return None
    both = sum(a * b for a, b in rates) / n
    return max(-1.0, min(1.0, (both - pa * pb) / math.sqrt(spread)))


def smallest_detectable(cases: int, needed: Callable[[float], float], *, step: float = 0.01) -> float | None:
    """The smallest difference (a multiple of ``step``) that ``cases`` suffice for, by ``needed(delta)`` (cases
    needed to detect ``delta``); None when no difference up to 1 is within reach."""
    for i in range(1, int(round(1 / step)) + 1):
        delta = round(i * step, 10)
        if needed(delta) <= cases:
            return delta
    return None
