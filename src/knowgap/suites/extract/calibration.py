"""Calibrate the offline faithfulness checker on SummEdits and AggreFact (read at calibration time).

The benchmarks have no licence we could find, so they are not shipped: :func:`load_benchmarks` reads them
from ``/work/shared/data/faithfulness`` (or any folder with the same layout), and a few rows live in
``tests/fixtures`` for the tests. :func:`calibrate` scores every pair, splits the pairs in two halves with
the seed (stratified by benchmark and label), chooses the threshold with the best balanced accuracy on the
first half and reports the balanced accuracy (with a bootstrap 95% CI) on the second half, per benchmark
and overall, plus the score distributions of faithful and unfaithful summaries and the gap between them.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from knowgap.errors import InputError
from knowgap.jsonl import read_objects
from knowgap.judges.faithfulness import OfflineFaithfulness
from knowgap.judges.faithfulness_data import DEFAULT_DATA, CalibrationPair, load_benchmarks
from knowgap.stats import percentile_interval

__all__ = ["DEFAULT_DATA", "CalibrationPair", "CalibrationReport", "calibrate", "load_benchmarks",
           "report_from_scores"]

class BalancedAccuracy(BaseModel):
    benchmark: str
    n: int
    n_faithful: int
    n_unfaithful: int
    balanced_accuracy: float | None
    ci_low: float | None
    ci_high: float | None


class ScoreDistribution(BaseModel):
    label: str
    n: int
    quantiles: dict[str, float] = Field(default_factory=dict)
    """p10, p25, p50, p75, p90 of the checker's score."""


class CalibrationReport(BaseModel):
    data: str
    seed: int
    limit: int | None
    threshold: float
    """Chosen on the tuning half (best balanced accuracy)."""
    threshold_in_use: float
    """The checker's current default threshold."""
    held_out: list[BalancedAccuracy]
    """Balanced accuracy at the chosen threshold on the held-out half, per benchmark and 'all'."""
    at_default: list[BalancedAccuracy]
    """Balanced accuracy at the default threshold on all pairs."""
    distributions: list[ScoreDistribution]
    gap: float
    """faithful p25 minus unfaithful p75: positive means the middle halves do not overlap."""
    empty_or_refusal: int
    """Pairs the checker left unscored: empty, refusal or (since version ``+lang1``) other-language summaries."""
    seconds: float


def _stratified(pairs: Sequence[CalibrationPair], limit: int | None, seed: int) -> list[CalibrationPair]:
    if not limit:
        return list(pairs)
    rng = random.Random(seed)
    out: list[CalibrationPair] = []
    for bench in sorted({p.benchmark for p in pairs}):
        for label in (True, False):
            group = [p for p in pairs if p.benchmark == bench and p.faithful == label]
            out += rng.sample(group, min(len(group), limit // 2))
    rng.shuffle(out)  # interleaved, so a partial scoring (see report_from_scores) is still balanced
    return out


def balanced_accuracy(scores: np.ndarray, labels: np.ndarray, threshold: float) -> float | None:
    pos, neg = labels, ~labels
    if not pos.any() or not neg.any():
        return None
    tpr = float(np.mean(scores[pos] >= threshold))
    tnr = float(np.mean(scores[neg] < threshold))
    return (tpr + tnr) / 2


def bootstrap_ba(scores: np.ndarray, labels: np.ndarray, threshold: float, *, reps: int = 2000,
                 seed: int = 0) -> tuple[float | None, float | None]:
    """Percentile bootstrap 95% CI of the balanced accuracy (resampling within each class)."""
    rng = np.random.default_rng(seed)
    pos, neg = scores[labels], scores[~labels]
    if not len(pos) or not len(neg):
        return None, None
    tpr = (rng.choice(pos, (reps, len(pos))) >= threshold).mean(axis=1)
    tnr = (rng.choice(neg, (reps, len(neg))) < threshold).mean(axis=1)
    return percentile_interval(((tpr + tnr) / 2).tolist())


def best_threshold(scores: np.ndarray, labels: np.ndarray) -> float:
    """The threshold with the best balanced accuracy (midpoint between adjacent distinct scores)."""
    values = np.unique(scores)
    candidates = np.concatenate([[values[0]], (values[:-1] + values[1:]) / 2, [values[-1] + 1e-6]])
    best, best_t = -1.0, 0.5
    for t in candidates:
        ba = balanced_accuracy(scores, labels, float(t)) or 0.0
        if ba > best + 1e-12:
            best, best_t = ba, float(t)
    return round(best_t, 4)


def _ba_rows(pairs: Sequence[CalibrationPair] | Sequence[ScoredPair], scores: np.ndarray, threshold: float,
             seed: int) -> list[BalancedAccuracy]:
    rows = []
    labels_all = np.array([p.faithful for p in pairs])
    for bench in sorted({p.benchmark for p in pairs}) + ["all"]:
        mask = np.array([bench in ("all", p.benchmark) for p in pairs])
        s, lab = scores[mask], labels_all[mask]
        ba = balanced_accuracy(s, lab, threshold)
        lo, hi = bootstrap_ba(s, lab, threshold, seed=seed)
        rows.append(BalancedAccuracy(benchmark=bench, n=int(mask.sum()), n_faithful=int(lab.sum()),
                                     n_unfaithful=int((~lab).sum()),
                                     balanced_accuracy=None if ba is None else round(ba, 4),
                                     ci_low=None if lo is None else round(lo, 4),
                                     ci_high=None if hi is None else round(hi, 4)))
    return rows


def _quantiles(values: np.ndarray) -> dict[str, float]:
    if not len(values):
        return {}
    return {f"p{q}": round(float(np.quantile(values, q / 100)), 4) for q in (10, 25, 50, 75, 90)}


def calibrate(data: Path = DEFAULT_DATA, *, limit: int | None = 200, seed: int = 0,
              checker: OfflineFaithfulness | None = None,
              progress: Callable[[int, int], None] | None = None,
              pairs_out: Path | None = None) -> CalibrationReport:
    """Score the benchmarks, choose a threshold on one half, report balanced accuracy on the other."""
    started = time.perf_counter()
    checker = checker or OfflineFaithfulness()
    pairs = _stratified(load_benchmarks(data), limit, seed)
    kept: list[CalibrationPair] = []
    values: list[float] = []
    skipped = 0
    sink = pairs_out.open("w", encoding="utf-8") if pairs_out else None
    for i, pair in enumerate(pairs):
        result = checker.check(pair.source, pair.summary)
        if sink:
            row = {"benchmark": pair.benchmark, "subset": pair.subset, "id": pair.id, "faithful": pair.faithful,
                   "score": result.score, "verdict": result.verdict,
                   "claims": [c.model_dump(exclude={"evidence"}) for c in result.claims]}
            sink.write(json.dumps(row, ensure_ascii=False) + "\n")
            sink.flush()
        if result.score is None:
            skipped += 1
        else:
            kept.append(pair)
            values.append(result.score)
        if progress:
            progress(i + 1, len(pairs))
    if sink:
        sink.close()
    return build_report([ScoredPair(benchmark=p.benchmark, faithful=p.faithful, score=v) for p, v in zip(kept, values,
                                                                                                       strict=True)],
                        data=str(data), seed=seed, limit=limit, threshold_in_use=checker.threshold,
                        skipped=skipped, seconds=time.perf_counter() - started)


class ScoredPair(BaseModel):
    benchmark: str
    faithful: bool
    score: float


def report_from_scores(path: Path, *, seed: int = 0, threshold_in_use: float | None = None) -> CalibrationReport:
    """The report from a scores file written by ``calibrate(pairs_out=...)`` (complete or partial)."""
    from knowgap.judges.faithfulness import DEFAULT_THRESHOLD

    rows, skipped = [], 0
    for number, row in read_objects(path, what="scored pairs"):
        if row.get("score") is None:
            skipped += 1
            continue
        try:
            rows.append(ScoredPair.model_validate(row))
        except ValidationError as exc:
            raise InputError.from_validation(str(path), exc, line=number) from None
    if not rows:
        raise InputError(str(path), "holds no scored pairs")
    return build_report(rows, data=str(path), seed=seed, limit=None, skipped=skipped, seconds=0.0,
                        threshold_in_use=DEFAULT_THRESHOLD if threshold_in_use is None else threshold_in_use)


def build_report(rows: Sequence[ScoredPair], *, data: str, seed: int, limit: int | None, threshold_in_use: float,
                 skipped: int, seconds: float) -> CalibrationReport:
    scores = np.array([r.score for r in rows])
    labels = np.array([r.faithful for r in rows])
    rng = random.Random(seed)
    tune_idx: list[int] = []
    for key in sorted({(r.benchmark, r.faithful) for r in rows}):
        idx = [i for i, r in enumerate(rows) if (r.benchmark, r.faithful) == key]
        rng.shuffle(idx)
        tune_idx += idx[: len(idx) // 2]
    tune = np.zeros(len(rows), dtype=bool)
    tune[tune_idx] = True
    threshold = best_threshold(scores[tune], labels[tune])
    held = [r for r, t in zip(rows, tune, strict=True) if not t]
    dists = [ScoreDistribution(label="faithful", n=int(labels.sum()), quantiles=_quantiles(scores[labels])),
             ScoreDistribution(label="unfaithful", n=int((~labels).sum()), quantiles=_quantiles(scores[~labels]))]
    gap = dists[0].quantiles.get("p25", 0.0) - dists[1].quantiles.get("p75", 0.0)
    return CalibrationReport(data=data, seed=seed, limit=limit, threshold=threshold, threshold_in_use=threshold_in_use,
                             held_out=_ba_rows(held, scores[~tune], threshold, seed),
                             at_default=_ba_rows(rows, scores, threshold_in_use, seed),
                             distributions=dists, gap=round(gap, 4), empty_or_refusal=skipped,
                             seconds=round(seconds, 1))
