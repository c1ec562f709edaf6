"""The metric-identity check: every interval knowgap reports, recomputed from stored runs, against a snapshot.

Stored runs (``tests/fixtures/metric_identity/runs/NAME/``: ``manifest.json`` and ``trials.jsonl.gz``) of every
built-in suite were made by the real engine with :mod:`tests.stats.identity_system` as every role's model, plus
the one run knowgap ships in its tests (``tests/fixtures/extract/takeover``). :func:`measure` recomputes, through
the public API, every number with an interval that a report of them shows:

- each run's ``suite.metrics`` on all its trials and on 12 seeded subsets of its clusters (value, CI, n, n_cases,
  n_eff of every metric);
- the judge-corrected rate (Rogan-Gladen with the judge's card) of every metric that has one;
- ``knowgap compare`` of two runs of one suite (paired cluster bootstrap, McNemar), the defence table's paired
  bootstrap (``report.injection``), ``knowgap plan`` from a run (power, ICC, design effect);
- the label tools on labels stored with a run (agreement with bootstrap CIs, rubric kappa / alpha / Spearman
  with Fisher's interval) and the judge calibration (Rogan-Gladen with stratified bootstrap CIs);
- the judges' card measures (Jeffreys draws), the faithfulness pick accuracy (document bootstrap) and the
  extract calibration's balanced accuracy (class bootstrap).

``tests/stats/test_metric_identity.py`` holds the numbers to ``snapshot.json``; a change that moves any of them
must say so and write the snapshot again::

    python -m tests.stats.metric_identity make       # re-make the stored runs (rarely: new suites or options)
    python -m tests.stats.metric_identity snapshot   # write snapshot.json from the stored runs
    python -m tests.stats.metric_identity diff A.json B.json   # what moved between two snapshots
"""

from __future__ import annotations

import gzip
import json
import math
import os
import random
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "metric_identity"
SNAPSHOT = FIXTURES / "snapshot.json"
SYSTEM = "python:tests/stats/identity_system.py:reply"
SUBSETS = 12
SUBSET_SHARE = 0.6
BOOT_REPS = 200
"""Resamples of compare's and the defence table's bootstraps (each recomputes a suite's metrics)."""

Number = float | int | None


@dataclass(frozen=True)
class Plan:
    name: str
    suite: str
    options: dict[str, Any] = field(default_factory=dict)
    repeats: int = 1
    seed: int = 0


PLANS = [
    Plan("starter", "starter", {"prompts": ["plain", "grounded"]}, repeats=3),
    Plan("starter-b", "starter", {"prompts": ["plain", "grounded"]}, repeats=3, seed=1),
    Plan("starter-inject", "starter", {"inject": True, "defences": ["none", "sandwich"]}, repeats=2),
    Plan("abstain-loo", "abstain", {"sample": 14, "retrieval": ["direct", "rag", "hyde"],
                                    "prompts": ["basic", "conservative"]}, repeats=2),
    Plan("abstain-context", "abstain", {"scenario": "unanswerable-context", "sample": 40}, repeats=2),
    Plan("abstain-false-premise", "abstain", {"scenario": "false-premise", "sample": 30}),
    Plan("clarify", "clarify", {"sample": 16}, repeats=2),
    Plan("clarify-turns", "clarify", {"sample": 8, "turns": 2, "prompts": ["clarify-first"]}),
    Plan("partial", "partial", {"sample": 30}, repeats=2),
    Plan("partial-budget", "partial", {"sample": 16, "budget": 40, "no_rubric": True}),
    Plan("extract", "extract", {"sample": 24}),
    Plan("extract-defences", "extract", {"sample": 12, "kinds": ["normal", "adversarial"], "runs": 2,
                                         "defences": ["none", "datamark"]}),
]
COMPARED = [("starter", "starter-b")]
LABELLED = {"starter": ("abstained", None), "clarify": ("asked_question", "clarify")}
"""Runs that get synthetic labels from three annotators: the field labelled (and the rubric rated)."""


# --- making the stored runs ---------------------------------------------------------------------------------


def make(dest: Path = FIXTURES) -> None:
    """Run every plan with the identity system (no cache) and store its manifest and gzipped trials."""
    import knowgap

    runs_dir = dest / "runs"
    with tempfile.TemporaryDirectory() as tmp:
        for plan in PLANS:
            result = knowgap.run(plan.suite, models={"target": SYSTEM}, options=plan.options,
                                 repeats=plan.repeats, seed=plan.seed, runs_root=tmp, use_cache=False)
            print(f"{plan.name}: {result.manifest.trials_ok} ok, {result.manifest.trials_error} errors",
                  file=sys.stderr)
            out = runs_dir / plan.name
            if out.exists():
                shutil.rmtree(out)
            out.mkdir(parents=True)
            shutil.copy(result.path / "manifest.json", out / "manifest.json")
            with (result.path / "trials.jsonl").open("rb") as src, gzip.open(out / "trials.jsonl.gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            if plan.name in LABELLED:
                _label(result.path, out, *LABELLED[plan.name])


def _label(run_path: Path, out: Path, field_name: str, rubric: str | None) -> None:
    """Three annotators label ``field_name`` of the run's trials (agreeing with the judge 85%, 80%, 70% of the
    time) and, for a suite with a rubric, rate its dimensions 1-5 near the judge's; stored with the run."""
    from knowgap.labels.store import LabelStore

    store = LabelStore(run_path)
    rng = random.Random(7)
    records = sorted(store.records().values(), key=lambda r: r.trial_id)
    for record in records:
        said = record.scores.get(field_name)
        if not isinstance(said, bool):
            continue
        for annotator, agree in (("ann", 0.85), ("bo", 0.8), ("cy", 0.7)):
            store.add(record, field_name, annotator, said if rng.random() < agree else not said)
    if rubric is not None:
        from knowgap.labels.rubric import pick_rubric

        spec = pick_rubric(store.run_store(), rubric)
        for record in [r for r in records if r.status == "ok"][:40]:
            for annotator in ("ann", "bo"):
                for dimension in spec.weights:
                    if dimension in record.scores:
                        store.add(record, dimension, annotator, rng.randint(1, 5), kind="number")
    (out / "labels").mkdir(exist_ok=True)
    with (run_path / "labels" / "labels.jsonl").open("rb") as src, \
            gzip.open(out / "labels" / "labels.jsonl.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)


# --- loading them -------------------------------------------------------------------------------------------


@contextmanager
def stored_runs(source: Path = FIXTURES) -> Iterator[Path]:
    """A temporary runs folder holding every stored run (trials unzipped), one folder per plan name, with an
    empty KNOWGAP_HOME meanwhile (judge cards measured on this machine would replace the shipped ones)."""
    with tempfile.TemporaryDirectory() as tmp, _empty_home():
        root = Path(tmp)
        for run in sorted((source / "runs").iterdir()):
            target = root / run.name
            target.mkdir()
            shutil.copy(run / "manifest.json", target / "manifest.json")
            with gzip.open(run / "trials.jsonl.gz", "rb") as src, (target / "trials.jsonl").open("wb") as dst:
                shutil.copyfileobj(src, dst)
            if (run / "labels").is_dir():
                (target / "labels").mkdir()
                with gzip.open(run / "labels" / "labels.jsonl.gz", "rb") as src, \
                        (target / "labels" / "labels.jsonl").open("wb") as dst:
                    shutil.copyfileobj(src, dst)
        yield root


@contextmanager
def _empty_home() -> Iterator[None]:
    before = os.environ.get("KNOWGAP_HOME")
    with tempfile.TemporaryDirectory() as home:
        os.environ["KNOWGAP_HOME"] = home
        try:
            yield
        finally:
            if before is None:
                del os.environ["KNOWGAP_HOME"]
            else:
                os.environ["KNOWGAP_HOME"] = before


def _load(path: Path) -> Any:
    """The stored run with its metrics computed by this code (also written to its metrics.json, which
    ``knowgap plan`` reads)."""
    from knowgap.engine.store import RunStore
    from knowgap.report.data import held, load_run_data

    run = held(load_run_data(path))
    assert run.suite is not None, f"{path}: the suite could not be loaded"
    metrics = run.suite.metrics(run.records)
    RunStore(path).write_metrics(metrics)
    return replace(run, metrics=metrics)


def _shipped_takeover() -> tuple[Any, list[Any]]:
    from knowgap.engine.records import TrialRecord
    from knowgap.suites.extract import ExtractSuite

    folder = REPO / "tests" / "fixtures" / "extract" / "takeover"
    suite = ExtractSuite(ExtractSuite.Options.model_validate({"data": str(folder / "cases.jsonl")}))
    lines = (folder / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    return suite, [TrialRecord.model_validate_json(line) for line in lines if line.strip()]


# --- measuring ----------------------------------------------------------------------------------------------


def _num(x: Any) -> Number:
    if x is None or isinstance(x, bool):
        return None if x is None else int(x)
    if isinstance(x, int):
        return x
    x = float(x)
    return None if math.isnan(x) else x


def _metric(m: Any) -> list[Number]:
    return [_num(m.value), _num(m.ci_low), _num(m.ci_high), m.n, m.n_cases, _num(m.n_eff)]


def _metrics(out: dict[str, Any], prefix: str, metrics: Sequence[Any]) -> None:
    for m in metrics:
        key = f"{prefix}/{m.group}/{m.name}"
        assert key not in out, f"two metrics {key}"
        out[key] = _metric(m)


def _subsets(suite: Any, records: list[Any]) -> Iterator[tuple[int, list[Any]]]:
    """SUBSETS seeded subsets of the run's clusters (SUBSET_SHARE of them, at least one), all their trials."""
    clusters = suite.clusters(records)
    key_of = {r.case_id: clusters.get(r.case_id, r.case_id) for r in records}
    keys = sorted(set(key_of.values()))
    for i in range(SUBSETS):
        chosen = set(random.Random(i).sample(keys, max(1, int(len(keys) * SUBSET_SHARE))))
        yield i, [r for r in records if key_of[r.case_id] in chosen]


def _corrected(out: dict[str, Any], prefix: str, run: Any) -> None:
    from knowgap.report.judging import Judgements

    judgements = Judgements(run.manifest)
    for m in run.metrics:
        c = judgements.of(m).corrected
        if c is not None:
            out[f"{prefix}/{m.group}/{m.name}"] = [_num(c.value), _num(c.ci_low), _num(c.ci_high)]


def _compare(out: dict[str, Any], a: Any, b: Any) -> None:
    from knowgap.report.compare import compare_runs

    result = compare_runs(a, b, reps=BOOT_REPS, budget_s=1e9)
    prefix = f"compare/{a.run_id}~{b.run_id}"
    for c in result.changes:
        out[f"{prefix}/{c.group}/{c.name}"] = [_num(c.delta), _num(c.ci_low), _num(c.ci_high), _num(c.p_value)]
    for t in result.mcnemar:
        out[f"{prefix}/mcnemar/{t.group}"] = [t.fixed, t.regressed, t.clusters_fixed, t.clusters_regressed,
                                              _num(t.p_value)]


def _defences(out: dict[str, Any], run: Any) -> None:
    from knowgap.report.injection import RunMetrics, defence_rows

    for row in defence_rows([RunMetrics.of(run)], reps=BOOT_REPS, budget_s=1e9):
        for what, diff in (("gain", row.gain), ("cost", row.cost)):
            if diff is not None:
                out[f"defences/{run.run_id}/{row.group}/{row.defence}/{what}"] = [
                    _num(diff.value), _num(diff.ci_low), _num(diff.ci_high)]


def _plan(out: dict[str, Any], root: Path) -> None:
    from knowgap.report.plan import make_plan

    for name, metric, group, versus in (("starter", "accuracy", "prompt=plain", "prompt=grounded"),
                                        ("partial", "decision_accuracy", "view=authorized", "view=full")):
        plan = make_plan(name, detect=0.15, repeats=3, runs=[name], metric=metric, group=group, versus=versus,
                         runs_root=root)
        out[f"plan/{name}/{metric}"] = [_num(plan.baseline_rate), _num(plan.icc), _num(plan.phi),
                                        _num(plan.discordance), plan.paired.cases_one_repeat,
                                        plan.paired.cases_with_repeats, _num(plan.paired.smallest_detectable),
                                        plan.independent.cases_one_repeat, plan.independent.cases_with_repeats,
                                        _num(plan.independent.smallest_detectable)]


def _estimate(e: Any) -> list[Number]:
    return [_num(e.value), _num(e.ci_low), _num(e.ci_high)]


def _labels(out: dict[str, Any], root: Path) -> None:
    from knowgap.labels.agreement import agreement_for_run
    from knowgap.labels.rubric import rubric_for_run

    for name, (field_name, rubric) in LABELLED.items():
        report = agreement_for_run(name, field_name, runs_root=root, reps=BOOT_REPS)
        for p in report.pairs:
            out[f"labels/{name}/{field_name}/{p.kind}/{p.a}~{p.b}"] = [*_estimate(p.percent), *_estimate(p.kappa)]
        for statistic, group in (("fleiss", report.fleiss), ("krippendorff", report.krippendorff)):
            if group is not None:
                out[f"labels/{name}/{field_name}/{statistic}"] = _estimate(group.value)
        for cal in report.calibration:
            out[f"labels/{name}/{field_name}/calibration/{cal.judge}"] = [
                _num(cal.sensitivity), *map(_num, cal.sensitivity_ci), _num(cal.specificity),
                *map(_num, cal.specificity_ci)]
        for card in report.cards:
            out[f"labels/{name}/{field_name}/card/{card.judge}"] = _estimate(card.balanced_accuracy)
        if rubric is not None:
            rub = rubric_for_run(name, rubric, runs_root=str(root), reps=BOOT_REPS)
            for d in rub.dimensions:
                for o in d.pairs:
                    out[f"rubric/{name}/{d.field}/{o.a}~{o.b}"] = _estimate(o.kappa)
                for which, alpha in (("people", d.alpha_people), ("with_judge", d.alpha_with_judge)):
                    if alpha is not None:
                        out[f"rubric/{name}/{d.field}/alpha_{which}"] = _estimate(alpha)
            for c in rub.totals:
                out[f"rubric/{name}/rho/{c.a}~{c.b}"] = _estimate(c.rho)


def _calibration(out: dict[str, Any]) -> None:
    from knowgap.labels.calibration import calibrate

    rng = random.Random(3)
    items = [f"t{i}" for i in range(120)]
    truth = {t: "yes" if rng.random() < 0.4 else "no" for t in items}
    verdicts = {t: truth[t] if rng.random() < 0.82 else ("no" if truth[t] == "yes" else "yes") for t in items}
    strata = {t: verdicts[t] for t in items}
    groups = {t: f"g{i % 3}" for i, t in enumerate(items)}
    c = calibrate("demo", verdicts, truth, strata, "yes", observed_groups=groups, reps=BOOT_REPS)
    out["calibration/sensitivity"] = [_num(c.sensitivity), *map(_num, c.sensitivity_ci)]
    out["calibration/specificity"] = [_num(c.specificity), *map(_num, c.specificity_ci)]
    for r in c.corrected:
        out[f"calibration/corrected/{r.group}"] = [_num(r.observed), _num(r.corrected), _num(r.ci_low),
                                                   _num(r.ci_high)]


def _judge_measures(out: dict[str, Any]) -> None:
    import numpy as np

    from knowgap.judges.cards import Confusion, binary_measures
    from knowgap.judges.faithfulness_validity import pick_accuracy
    from knowgap.suites.extract.calibration import bootstrap_ba

    for tp, fn, fp, tn in ((14, 0, 1, 20), (30, 6, 4, 41), (9, 3, 5, 11)):
        for name, e in binary_measures(Confusion(tp=tp, fn=fn, fp=fp, tn=tn)).items():
            out[f"card/{tp}-{fn}-{fp}-{tn}/{name}"] = _estimate(e)
    rng = random.Random(5)
    scores = [rng.random() for _ in range(80)]
    pairs = [(2 * i, 2 * i + 1) for i in range(40)]
    groups = [f"doc{i // 6}" for i in range(80)]
    out["faithfulness/pick_accuracy"] = _estimate(pick_accuracy(scores, pairs, groups))
    values = np.array([rng.random() for _ in range(90)])
    labels = np.array([v + rng.gauss(0, 0.3) > 0.5 for v in values])
    out["extract/bootstrap_ba"] = [_num(x) for x in bootstrap_ba(values, labels, 0.5)]


def measure(source: Path = FIXTURES) -> dict[str, Any]:
    """Every number of the check, keyed ``what/run/group/metric``."""
    out: dict[str, Any] = {}
    with stored_runs(source) as root:
        runs = {path.name: _load(path) for path in sorted(root.iterdir())}
        for name, run in runs.items():
            _metrics(out, f"metrics/{name}/all", run.metrics)
            for i, subset in _subsets(run.suite, list(run.records)):
                _metrics(out, f"metrics/{name}/subset{i}", run.suite.metrics(subset))
            _corrected(out, f"corrected/{name}", run)
        for a, b in COMPARED:
            _compare(out, runs[a], runs[b])
        for name in ("starter-inject", "extract-defences"):
            _defences(out, runs[name])
        _plan(out, root)
        _labels(out, root)
    suite, records = _shipped_takeover()
    _metrics(out, "metrics/shipped-takeover/all", suite.metrics(records))
    _calibration(out)
    _judge_measures(out)
    return out


def write_snapshot(path: Path = SNAPSHOT) -> dict[str, Any]:
    """The numbers as a JSON object, one key a line (so a diff shows what moved)."""
    values = measure()
    lines = [f"{json.dumps(k, ensure_ascii=False)}: {json.dumps(values[k])}" for k in sorted(values)]
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    return values


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(key, old, new) of every number that is not the same, or only in one of the two."""
    return [(k, old.get(k), new.get(k)) for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)]


def main(argv: Sequence[str]) -> int:
    command = argv[0] if argv else ""
    if command == "make":
        make()
    elif command == "snapshot":
        values = write_snapshot()
        print(f"{len(values)} entries written to {SNAPSHOT}")
    elif command == "diff" and len(argv) == 3:
        old, new = (json.loads(Path(p).read_text(encoding="utf-8")) for p in argv[1:])
        for key, a, b in differences(old, new):
            print(f"{key}: {a} -> {b}")
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
