"""Rubric labels: people score each rubric dimension 1-5 (an ordinal label per dimension field), and the rubric
report compares them with the judge and with the automatic metrics.

- Per dimension: quadratic-weighted Cohen's kappa of the judge against each person and of each pair of people,
  Krippendorff's alpha (ordinal) among the people and with the judge as one more coder; the judge's score is
  put on 1-5 (:attr:`RubricSpec.scale`) and rounded for kappa and alpha.
- Totals: each person's weighted total (the rubric's weights, e.g. clarify 0.3 / 0.3 / 0.25 / 0.15) on the
  trials where they scored every dimension, averaged over people per trial, against the judge's weighted total
  and against every automatic score of the trials (numbers and true/false): Spearman's rho with a Fisher z 95%
  interval.

Kappa and alpha carry seeded percentile bootstrap 95% CIs (trials resampled).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, Field

from knowgap.engine.records import ScoreValue, TrialRecord
from knowgap.engine.store import RunStore
from knowgap.engine.suite import RubricSpec
from knowgap.errors import KnowgapError
from knowgap.labels.agreement import Estimate
from knowgap.labels.ordinal import (
    krippendorff_alpha_ordinal,
    quadratic_weighted_kappa,
    to_scale,
    weighted_total,
)
from knowgap.labels.store import LabelStore
from knowgap.report.data import load_suite
from knowgap.stats import bootstrap_ci, fisher_z_interval, spearman

POINTS = (1, 2, 3, 4, 5)
JUDGE = "judge"


class OrdinalPair(BaseModel):
    a: str
    b: str
    n: int
    kappa: Estimate
    """Quadratic-weighted Cohen's kappa."""


class DimensionAgreement(BaseModel):
    field: str
    weight: float
    labelled_items: int
    pairs: list[OrdinalPair] = Field(default_factory=list)
    alpha_people: Estimate | None = None
    """Krippendorff's alpha (ordinal) among people, on items with >= 2 labels (needs >= 2 annotators)."""
    alpha_with_judge: Estimate | None = None
    """The same with the judge as one more coder."""


class Correlation(BaseModel):
    a: str
    b: str
    n: int
    rho: Estimate
    """Spearman's rho with a Fisher z 95% interval."""


class RubricReport(BaseModel):
    run_id: str
    rubric: RubricSpec
    annotators: list[str]
    dimensions: list[DimensionAgreement]
    totals: list[Correlation]
    """The people's weighted total against the judge's and against each automatic score."""
    reps: int
    seed: int


def run_rubrics(run: RunStore) -> tuple[RubricSpec, ...]:
    """The rubrics the run's suite declares (none when the suite cannot be loaded)."""
    suite = load_suite(run.current_manifest())
    return suite.rubrics if suite is not None else ()


def rubric_of_field(run: RunStore, field: str) -> RubricSpec | None:
    """The rubric whose dimension ``field`` is, if any."""
    return next((r for r in run_rubrics(run) if field in r.weights), None)


def check_rubric_label(field: str, value: ScoreValue) -> None:
    """A rubric label is a whole number from 1 to 5 (None withdraws a label)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or value not in POINTS:
        raise KnowgapError(f"label for '{field}': a rubric dimension takes a score 1 to 5, not {value!r}")


def pick_rubric(run: RunStore, name: str | None) -> RubricSpec:
    rubrics = run_rubrics(run)
    if not rubrics:
        raise KnowgapError(f"run {run.path.name}: its suite ({run.current_manifest().config.suite}) declares no rubric")
    if name is None:
        return rubrics[0]
    for r in rubrics:
        if r.name == name:
            return r
    raise KnowgapError(f"run {run.path.name} has no rubric '{name}' (rubrics: {', '.join(r.name for r in rubrics)})")


def judge_points(record: TrialRecord, field: str, rubric: RubricSpec) -> float | None:
    """The judge's score of ``field`` on the 1-5 scale (None: no score, e.g. a parse failure)."""
    value = record.scores.get(field)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return to_scale(float(value), rubric.scale)


def _kappa_pair(a_name: str, a: dict[str, float], b_name: str, b: dict[str, float], reps: int,
                seed: int) -> OrdinalPair:
    items = sorted(set(a) & set(b))
    pairs = [(a[i], b[i]) for i in items]

    def stat(ps: Sequence[tuple[float, float]]) -> float:
        return quadratic_weighted_kappa([p[0] for p in ps], [p[1] for p in ps]) if ps else math.nan

    return OrdinalPair(a=a_name, b=b_name, n=len(items),
                       kappa=Estimate.of(stat(pairs), bootstrap_ci(pairs, stat, reps=reps, seed=seed)))


def _alpha(coders: dict[str, dict[str, float]], reps: int, seed: int) -> Estimate:
    items = sorted(set().union(*coders.values())) if coders else []
    units = [[c[t] for c in coders.values() if t in c] for t in items]
    units = [u for u in units if len(u) >= 2]

    def stat(us: Sequence[list[float]]) -> float:
        return krippendorff_alpha_ordinal(us) if us else math.nan

    return Estimate.of(stat(units), bootstrap_ci(units, stat, reps=reps, seed=seed))


def _correlation(a_name: str, a: dict[str, float], b_name: str, b: dict[str, float]) -> Correlation:
    items = sorted(set(a) & set(b))
    rho = spearman([a[t] for t in items], [b[t] for t in items]) if len(items) >= 2 else math.nan
    return Correlation(a=a_name, b=b_name, n=len(items), rho=Estimate.of(rho, fisher_z_interval(rho, len(items))))


def rubric_report(store: LabelStore, rubric: RubricSpec | str | None = None, *, reps: int = 1000,
                  seed: int = 0) -> RubricReport:
    run = store.run_store()
    spec = rubric if isinstance(rubric, RubricSpec) else pick_rubric(run, rubric)
    records = {t: r for t, r in store.records().items() if r.status == "ok"}
    people: dict[str, dict[str, dict[str, float]]] = {}  # field -> annotator -> trial -> 1..5
    for (trial_id, field, annotator), event in store.current().items():
        if field in spec.weights and trial_id in records and isinstance(event.value, int | float):
            people.setdefault(field, {}).setdefault(annotator, {})[trial_id] = float(event.value)
    annotators = sorted({a for by in people.values() for a in by})
    if not annotators:
        raise KnowgapError(f"run {store.run_id}: no rubric labels on {', '.join(spec.weights)} yet; label them: "
                           f"knowgap label sample {store.run_id} --judge-field {next(iter(spec.weights))} --n 30, "
                           f"then knowgap label {store.run_id} --annotator NAME")
    judge = {f: {t: pts for t, r in records.items() if (pts := judge_points(r, f, spec)) is not None}
             for f in spec.weights}
    dimensions = []
    for field, weight in spec.weights.items():
        humans = people.get(field, {})
        dim = DimensionAgreement(field=field, weight=weight, labelled_items=len(set().union(*humans.values()))
                                 if humans else 0)
        rounded = {t: float(round(v)) for t, v in judge[field].items()}
        for person in sorted(humans):
            dim.pairs.append(_kappa_pair(JUDGE, rounded, person, humans[person], reps, seed))
        names = sorted(humans)
        for i, p in enumerate(names):
            for q in names[i + 1:]:
                dim.pairs.append(_kappa_pair(p, humans[p], q, humans[q], reps, seed))
        if len(names) >= 2:
            dim.alpha_people = _alpha(humans, reps, seed)
        if names:
            labelled = set().union(*humans.values())
            dim.alpha_with_judge = _alpha({**humans, JUDGE: {t: v for t, v in rounded.items() if t in labelled}},
                                          reps, seed)
        dimensions.append(dim)
    human_total = _human_totals(people, spec)
    judge_total = {t: total for t in records
                   if (total := weighted_total({f: judge[f].get(t) for f in spec.weights}, spec.weights)) is not None}
    totals = [_correlation("people's total", human_total, "judge's total", judge_total)]
    for score, values in sorted(_automatic_scores(records, spec, set(human_total)).items()):
        totals.append(_correlation("people's total", human_total, score, values))
    return RubricReport(run_id=store.run_id, rubric=spec, annotators=annotators, dimensions=dimensions,
                        totals=totals, reps=reps, seed=seed)


def _human_totals(people: dict[str, dict[str, dict[str, float]]], spec: RubricSpec) -> dict[str, float]:
    """trial -> the mean over people of each person's weighted total (people who scored every dimension)."""
    per_trial: dict[str, list[float]] = {}
    for person in {a for by in people.values() for a in by}:
        trials = set().union(*(people.get(f, {}).get(person, {}).keys() for f in spec.weights))
        for t in trials:
            scores = {f: people.get(f, {}).get(person, {}).get(t) for f in spec.weights}
            total = weighted_total(scores, spec.weights)
            if total is not None:
                per_trial.setdefault(t, []).append(total)
    return {t: sum(v) / len(v) for t, v in per_trial.items()}


def _automatic_scores(records: dict[str, TrialRecord], spec: RubricSpec,
                      trials: set[str]) -> dict[str, dict[str, float]]:
    """Every other numeric or true/false score of the labelled trials (the rubric's own fields and its judge's
    total and parse failures left out), as numbers."""
    skip = set(spec.weights) | {f"{spec.name}_total", "rubric_total", "rubric_parse_failure"}
    out: dict[str, dict[str, float]] = {}
    for t in trials:
        for name, value in records[t].scores.items():
            if name in skip or value is None or isinstance(value, str):
                continue
            out.setdefault(name, {})[t] = float(value)
    return out


def rubric_for_run(run: str, rubric: str | None = None, *, runs_root: str | None = None, reps: int = 1000,
                   seed: int = 0) -> RubricReport:
    return rubric_report(LabelStore.open(run, runs_root), rubric, reps=reps, seed=seed)
