"""A binary judge against human truth: sensitivity, specificity, and the judge's rate corrected for them.

Truth is the people's majority label. Items are weighted by the sampling strata (the run's stored verdict
on the field): weight N_h / n_h, with N_h trials in the run and n_h labelled items in stratum h. So a sample
that over-draws rare verdicts (equal allocation) still estimates the judge's sensitivity and specificity on
the run's own mix. The corrected rate is Rogan-Gladen (:func:`knowgap.stats.rogan_gladen`): (p_obs + spec - 1) /
(sens + spec - 1), clipped to [0, 1] -- the rate a perfect judge would report. All CIs: seeded bootstrap
(labelled items resampled within their strata, each group's observed rate resampled as a binomial), read off by
:func:`knowgap.stats.interval_of_draws`.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
from pydantic import BaseModel, Field

from knowgap.stats import interval_of_draws, rogan_gladen


class CorrectedRate(BaseModel):
    group: str
    n: int
    observed: float
    corrected: float | None
    ci_low: float | None = None
    ci_high: float | None = None


class JudgeCalibration(BaseModel):
    judge: str
    positive: str
    n: int
    """Labelled items with a majority label and a verdict of this judge."""
    counts: dict[str, int]
    """Unweighted tp, fp, fn, tn."""
    sensitivity: float | None
    sensitivity_ci: tuple[float | None, float | None] = (None, None)
    specificity: float | None
    specificity_ci: tuple[float | None, float | None] = (None, None)
    corrected: list[CorrectedRate] = Field(default_factory=list)
    """Per group of the run (configuration, or configuration x --by field), and ``all``."""


def _sens_spec(judge_pos: np.ndarray, true_pos: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    pos_w, neg_w = w[true_pos].sum(), w[~true_pos].sum()
    sens = float(w[judge_pos & true_pos].sum() / pos_w) if pos_w > 0 else math.nan
    spec = float(w[~judge_pos & ~true_pos].sum() / neg_w) if neg_w > 0 else math.nan
    return sens, spec


def _clean(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)


def _interval(values: list[float], reps: int) -> tuple[float | None, float | None]:
    ci = interval_of_draws(values, reps)
    return (None, None) if ci is None else (_clean(ci[0]), _clean(ci[1]))


def calibrate(judge: str, verdicts: dict[str, str], truth: dict[str, str], strata: dict[str, str], positive: str,
              *, observed_groups: dict[str, str] | None = None, reps: int = 1000, seed: int = 0) -> JudgeCalibration:
    items = sorted(set(verdicts) & set(truth))
    population = Counter(strata.values())
    stratum = [strata.get(t, "?") for t in items]
    drawn = Counter(stratum)
    w = np.array([population.get(h, drawn[h]) / drawn[h] for h in stratum], dtype=float)
    jp = np.array([verdicts[t] == positive for t in items], dtype=bool)
    tp = np.array([truth[t] == positive for t in items], dtype=bool)
    counts = {"tp": int((jp & tp).sum()), "fp": int((jp & ~tp).sum()), "fn": int((~jp & tp).sum()),
              "tn": int((~jp & ~tp).sum())}
    sens, spec = _sens_spec(jp, tp, w) if items else (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    index_by_stratum = {h: np.array([i for i, s in enumerate(stratum) if s == h]) for h in drawn}
    boot: list[tuple[float, float]] = []
    for _ in range(reps if items else 0):
        idx = np.concatenate([rng.choice(ix, size=len(ix), replace=True) for ix in index_by_stratum.values()])
        boot.append(_sens_spec(jp[idx], tp[idx], w[idx]))
    result = JudgeCalibration(judge=judge, positive=positive, n=len(items), counts=counts,
                              sensitivity=_clean(sens), sensitivity_ci=_interval([b[0] for b in boot], reps),
                              specificity=_clean(spec), specificity_ci=_interval([b[1] for b in boot], reps))
    if observed_groups:
        groups: dict[str, list[str]] = {"all": sorted(observed_groups)}
        for t, g in sorted(observed_groups.items()):
            groups.setdefault(g, []).append(t)
        for g in sorted(groups, key=lambda g: (g != "all", g)):
            members = groups[g]
            n = len(members)
            k = sum(verdicts[t] == positive for t in members)
            p_obs = k / n
            draws: list[float] = list(rng.binomial(n, p_obs, size=len(boot)) / n) if boot else []
            values = [rogan_gladen(float(p), b[0], b[1]) for p, b in zip(draws, boot, strict=True)]
            lo, hi = _interval(values, reps)
            result.corrected.append(CorrectedRate(group=g, n=n, observed=round(p_obs, 6),
                                                  corrected=_clean(rogan_gladen(p_obs, sens, spec)),
                                                  ci_low=lo, ci_high=hi))
    return result
