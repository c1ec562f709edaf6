"""Seeded stratified samples of a run's trials for labelling: strata are (configuration, judge verdict).

``equal`` allocation gives every stratum the same share of the sample (capped at its size, the rest handed
to the others): rare verdicts get enough labels to measure the judge's errors on them. ``proportional``
follows the run's own mix (largest remainders). Agreement and calibration re-weight by the strata, so
either allocation gives unbiased sensitivity and specificity (see calibration.py).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from pathlib import Path
from typing import Literal

from knowgap.engine.records import TrialRecord
from knowgap.errors import KnowgapError
from knowgap.labels.records import Sample, Stratum, verdict_key
from knowgap.labels.store import LabelStore


def labelable(records: list[TrialRecord], field: str) -> list[TrialRecord]:
    """Trials that finished and carry a judge verdict on ``field``."""
    return [r for r in records if r.status == "ok" and r.scores.get(field) is not None]


def _allocate(sizes: list[int], n: int, allocation: str) -> list[int]:
    total = sum(sizes)
    if n >= total:
        return list(sizes)
    if allocation == "proportional":
        exact = [n * s / total for s in sizes]
        take = [math.floor(x) for x in exact]
        order = sorted(range(len(sizes)), key=lambda i: (-(exact[i] - take[i]), i))
        for i in order[: n - sum(take)]:
            take[i] += 1
        return take
    take = [0] * len(sizes)
    left = n
    open_ = [i for i, s in enumerate(sizes) if s > 0]
    while left > 0 and open_:
        share, extra = divmod(left, len(open_))
        for rank, i in enumerate(open_):
            add = min(sizes[i] - take[i], share + (1 if rank < extra else 0))
            take[i] += add
            left -= add
        open_ = [i for i in open_ if take[i] < sizes[i]]
    return take


def draw_sample(records: list[TrialRecord], run_id: str, field: str, *, n: int | None = None,
                share: float | None = None, seed: int = 0,
                allocation: Literal["equal", "proportional"] = "equal", name: str | None = None) -> Sample:
    pool = labelable(records, field)
    if not pool:
        fields = sorted({k for r in records for k in r.scores})
        raise KnowgapError(f"run {run_id}: no finished trial has a verdict on '{field}' "
                           f"(judge fields in this run: {', '.join(fields) or 'none'})")
    if (n is None) == (share is None):
        raise KnowgapError("give the sample size as --n COUNT or --share FRACTION (one of them)")
    if share is not None:
        if not 0 < share <= 1:
            raise KnowgapError(f"--share must be in (0, 1], got {share}")
        n = max(1, round(share * len(pool)))
    assert n is not None
    if n < 1:
        raise KnowgapError(f"--n must be at least 1, got {n}")
    strata: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in pool:
        strata[(r.config_id, verdict_key(r.scores[field]))].append(r.trial_id)
    keys = sorted(strata)
    rng = random.Random(seed)
    take = _allocate([len(strata[k]) for k in keys], n, allocation)
    chosen: list[str] = []
    out_strata = []
    for key, k in zip(keys, take, strict=True):
        members = sorted(strata[key])
        chosen += rng.sample(members, k)
        out_strata.append(Stratum(config_id=key[0], verdict=key[1], population=len(members), drawn=k))
    rng.shuffle(chosen)
    return Sample(name=name or field, run_id=run_id, field=field, seed=seed, allocation=allocation, requested=n,
                  strata=out_strata, trial_ids=chosen)


def sample_run(run: str, field: str, *, runs_root: str | Path | None = None, n: int | None = None,
               share: float | None = None, seed: int = 0, allocation: Literal["equal", "proportional"] = "equal",
               name: str | None = None) -> tuple[Sample, Path]:
    """Draw a sample of ``run`` and store it in the run's label store; returns it and its file."""
    store = LabelStore.open(run, runs_root)
    records = list(store.records().values())
    sample = draw_sample(records, store.run_id, field, n=n, share=share, seed=seed, allocation=allocation,
                         name=name)
    return sample, store.write_sample(sample)
