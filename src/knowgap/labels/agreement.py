"""The agreement report of one judge field of a run: judges against people and against the people's
majority, people among themselves, and each binary judge's calibration (see calibration.py).

Judges are the run's own stored verdict (``run:FIELD``) and every judge spec version run on the labelled
set (``name@version``, see judge_spec.py). People are the annotators of the label store.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import combinations
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from knowgap.engine.records import ScoreValue
from knowgap.judges.cards import ValidityCard, sha256_files
from knowgap.labels.calibration import JudgeCalibration, calibrate
from knowgap.labels.records import verdict_key
from knowgap.labels.stats import cohen_kappa, confusion, fleiss_kappa, krippendorff_alpha_nominal, percent_agreement
from knowgap.labels.store import LabelStore
from knowgap.labels.validity import judge_card, judge_of_field, majority_labels, run_judge_version
from knowgap.stats import bootstrap_ci

__all__ = ["MAJORITY", "AgreementReport", "agreement_for_run", "agreement_report", "majority_labels"]

MAJORITY = "majority"


class Estimate(BaseModel):
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None

    @classmethod
    def of(cls, value: float, ci: tuple[float, float]) -> Estimate:
        def clean(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 6)
        return cls(value=clean(value), ci_low=clean(ci[0]), ci_high=clean(ci[1]))


class PairAgreement(BaseModel):
    kind: Literal["judge-person", "judge-majority", "person-person"]
    a: str
    b: str
    n: int
    percent: Estimate
    kappa: Estimate
    confusion: list[list[int]]
    """Rows: a's category, columns: b's category (in the report's ``categories`` order)."""


class GroupAgreement(BaseModel):
    n_items: int
    raters: list[str]
    value: Estimate


class AgreementReport(BaseModel):
    run_id: str
    field: str
    categories: list[str]
    """Category keys (JSON text of each value: true, false, "refuse"...)."""
    annotators: list[str]
    judges: list[str]
    labelled_items: int
    majority_items: int
    """Items with a majority label (ties are left out)."""
    pairs: list[PairAgreement] = Field(default_factory=list)
    fleiss: GroupAgreement | None = None
    """Among people, on the items every annotator labelled (needs >= 2 annotators)."""
    krippendorff: GroupAgreement | None = None
    """Among people, nominal, on every item with >= 2 labels (missing labels allowed)."""
    calibration: list[JudgeCalibration] = Field(default_factory=list)
    cards: list[ValidityCard] = Field(default_factory=list)
    """Each judge's validity card against the people's majority (unweighted: the labelled sample as drawn), with
    its screen / reportable status; see validity.py."""
    reps: int
    seed: int


def _pair(kind: Literal["judge-person", "judge-majority", "person-person"], a_name: str, a: dict[str, str],
          b_name: str, b: dict[str, str], categories: list[str], reps: int, seed: int) -> PairAgreement:
    items = sorted(set(a) & set(b))
    pairs = [(a[i], b[i]) for i in items]

    def stat(fn: Callable[[Sequence[str], Sequence[str]], float]) -> Callable[[Sequence[tuple[str, str]]], float]:
        return lambda ps: fn([p[0] for p in ps], [p[1] for p in ps]) if ps else math.nan

    pa, ka = stat(percent_agreement), stat(cohen_kappa)
    return PairAgreement(kind=kind, a=a_name, b=b_name, n=len(items),
                         percent=Estimate.of(pa(pairs), bootstrap_ci(pairs, pa, reps=reps, seed=seed)),
                         kappa=Estimate.of(ka(pairs), bootstrap_ci(pairs, ka, reps=reps, seed=seed)),
                         confusion=confusion([p[0] for p in pairs], [p[1] for p in pairs], categories))


def agreement_report(store: LabelStore, field: str, *, reps: int = 1000, seed: int = 0,
                     positive: ScoreValue = True, by: str | None = None) -> AgreementReport:
    records = store.records()
    humans_raw = store.human_labels(field)
    humans = {a: {t: verdict_key(v) for t, v in labels.items() if t in records} for a, labels in humans_raw.items()}
    judges: dict[str, dict[str, str]] = {
        f"run:{field}": {t: verdict_key(r.scores[field]) for t, r in records.items()
                         if r.status == "ok" and r.scores.get(field) is not None}}
    for ref, raw in store.judge_verdicts(field).items():
        judges[ref] = {t: verdict_key(v) for t, v in raw.items() if v is not None}
    majority = majority_labels({a: {t: v for t, v in humans_raw[a].items() if t in records} for a in humans_raw})
    labelled = set().union(*humans.values()) if humans else set()
    categories = sorted({k for h in humans.values() for k in h.values()}
                        | {k for t in labelled for j in judges.values() if t in j for k in [j[t]]})
    report = AgreementReport(run_id=store.run_id, field=field, categories=categories,
                             annotators=sorted(humans), judges=list(judges), labelled_items=len(labelled),
                             majority_items=len(majority), reps=reps, seed=seed)
    for judge, verdicts in judges.items():
        for person in sorted(humans):
            report.pairs.append(_pair("judge-person", judge, verdicts, person, humans[person], categories, reps, seed))
        report.pairs.append(_pair("judge-majority", judge, verdicts, MAJORITY, majority, categories, reps, seed))
    for p, q in combinations(sorted(humans), 2):
        report.pairs.append(_pair("person-person", p, humans[p], q, humans[q], categories, reps, seed))
    people = sorted(humans)
    if len(people) >= 2:
        full = [[humans[p][t] for p in people] for t in sorted(labelled) if all(t in humans[p] for p in people)]
        fk = (lambda rows: fleiss_kappa(rows) if rows else math.nan)  # noqa: E731
        report.fleiss = GroupAgreement(n_items=len(full), raters=people,
                                       value=Estimate.of(fk(full), bootstrap_ci(full, fk, reps=reps, seed=seed)))
        units = [[humans[p][t] for p in people if t in humans[p]] for t in sorted(labelled)]
        units = [u for u in units if len(u) >= 2]
        ka = (lambda us: krippendorff_alpha_nominal(us) if us else math.nan)  # noqa: E731
        report.krippendorff = GroupAgreement(n_items=len(units), raters=people,
                                             value=Estimate.of(ka(units), bootstrap_ci(units, ka, reps=reps,
                                                                                        seed=seed)))
    pos = verdict_key(positive)
    if majority:
        strata = judges[f"run:{field}"]
        for judge, verdicts in judges.items():
            observed = None
            if judge == f"run:{field}":
                observed = {t: (records[t].config_id if by is None else
                                f"{records[t].config_id} {by}={verdict_key(records[t].scores.get(by))}")
                            for t in verdicts}
            report.calibration.append(calibrate(judge, verdicts, majority, strata, pos, observed_groups=observed,
                                                reps=reps, seed=seed))
        report.cards = _cards(store, field, judges, majority, pos)
    return report


def _cards(store: LabelStore, field: str, judges: dict[str, dict[str, str]], majority: dict[str, str],
           positive: str) -> list[ValidityCard]:
    """Each judge's card on the labelled items with a majority label. The run's own verdicts are named after the
    catalogue judge that gave them, with the version and judge model the run recorded (so the card is the one
    ``knowgap judges`` and reports look up for that judge version), else ``run:FIELD`` with the run's judge
    versions; a spec version carries its own."""
    run_judge = f"run:{field}"
    manifest = store.run_store().current_manifest()
    versions = manifest.judges or {}
    own = judge_of_field(manifest, field)
    sha = sha256_files([store.file])
    people = len({a for (_t, _f, a) in store.current(field)})
    method = (f"labels of run {store.run_id}: the people's majority ({people} annotator{'s' if people != 1 else ''}"
              f", ties left out)")
    cards = []
    for judge, verdicts in judges.items():
        name, version, model = judge, judge.partition("@")[2], None
        if judge == run_judge:
            name, version, model = ((own.judge, own.version, own.judge_model) if own
                                    else (judge, run_judge_version(versions), None))
        cards.append(judge_card(name, version, {t: key == positive for t, key in verdicts.items()}, majority,
                                positive, dataset=str(store.file), dataset_sha256=sha, judge_model=model,
                                method=method))
    return cards


def agreement_for_run(run: str, field: str, *, runs_root: str | Path | None = None, reps: int = 1000,
                      seed: int = 0, positive: ScoreValue = True, by: str | None = None) -> AgreementReport:
    return agreement_report(LabelStore.open(run, runs_root), field, reps=reps, seed=seed, positive=positive, by=by)
