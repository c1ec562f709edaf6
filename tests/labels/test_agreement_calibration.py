"""Agreement and calibration on synthetic stored runs whose right answers are worked out by hand."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from knowgap.engine.records import Manifest, RunConfig, TrialRecord
from knowgap.engine.store import RunStore
from knowgap.labels.agreement import agreement_report, majority_labels
from knowgap.labels.calibration import calibrate
from knowgap.labels.records import JudgeVerdict
from knowgap.labels.store import LabelStore
from knowgap.stats import rogan_gladen


def stored_run(root: Path, records: list[TrialRecord], run_id: str = "synthetic-1") -> LabelStore:
    store = RunStore.create(root, Manifest(run_id=run_id, knowgap_version="test", config=RunConfig(suite="synthetic"),
                                           status="finished", trials_total=len(records)))
    for r in records:
        store.append(r)
    store.close()
    return LabelStore(store.path)


def test_calibration_weights_by_strata_and_rogan_gladen_by_hand() -> None:
    # 100 trials: the judge says yes on 60, no on 40. Labelled: 10 of the yes (8 truly yes), 10 of the no (1 truly yes)
    verdicts = {f"y{i}": "true" for i in range(60)} | {f"n{i}": "false" for i in range(40)}
    truth = ({f"y{i}": "true" for i in range(8)} | {"y8": "false", "y9": "false"}
             | {"n0": "true"} | {f"n{i}": "false" for i in range(1, 10)})
    groups = dict.fromkeys(verdicts, "g")
    c = calibrate("j", verdicts, truth, verdicts, "true", observed_groups=groups, reps=400, seed=0)
    # weights 60/10 = 6 and 40/10 = 4: TP 8*6 = 48, FP 2*6 = 12, FN 1*4 = 4, TN 9*4 = 36
    assert c.counts == {"tp": 8, "fp": 2, "fn": 1, "tn": 9}
    assert c.sensitivity == pytest.approx(48 / 52, abs=1e-6)
    assert c.specificity == pytest.approx(36 / 48, abs=1e-6)
    # Rogan-Gladen: (0.6 + 0.75 - 1) / (48/52 + 0.75 - 1) = 0.52, which is the stratified estimate
    # 0.6 * 8/10 + 0.4 * 1/10 = 0.52
    [all_, g] = c.corrected
    assert (all_.group, all_.n, all_.observed) == ("all", 100, 0.6)
    assert all_.corrected == pytest.approx(0.52, abs=1e-6) and g.corrected == all_.corrected
    assert all_.ci_low is not None and all_.ci_high is not None and all_.ci_low < 0.52 < all_.ci_high
    assert c.sensitivity_ci[0] is not None and c.sensitivity_ci[0] <= c.sensitivity <= (c.sensitivity_ci[1] or 0)


def test_rogan_gladen_edges() -> None:
    assert rogan_gladen(0.3, 1.0, 1.0) == pytest.approx(0.3)
    assert rogan_gladen(0.05, 0.9, 0.9) == 0.0  # clipped
    assert math.isnan(rogan_gladen(0.5, 0.5, 0.5))  # a judge no better than chance corrects nothing


def test_majority_leaves_ties_out() -> None:
    humans = {"a": {"t1": True, "t2": True, "t3": True}, "b": {"t1": True, "t2": False}, "c": {"t1": False}}
    assert majority_labels(humans) == {"t1": "true", "t3": "true"}


def test_report_on_a_synthetic_run(tmp_path: Path) -> None:
    records = [TrialRecord(trial_id=f"t{i}", case_id=f"c{i}", config_id="x" if i % 2 else "y",
                           scores={"verdict": i < 6}) for i in range(12)]
    store = stored_run(tmp_path / "runs", records)
    by_id = store.records()
    alice = [True, True, True, False, True, False, False, False]   # items t0..t7
    bob = [True, True, False, False, True, False, False, True]
    carol = [True, True, True, False, False, False, False, False]
    for who, values in (("alice", alice), ("bob", bob), ("carol", carol)):
        for i, v in enumerate(values):
            store.add(by_id[f"t{i}"], "verdict", who, v)
    store.write_verdicts("strict@2", [JudgeVerdict(spec="strict@2", spec_sha256="0", field="verdict",
                                                   trial_id=f"t{i}", value=i < 3) for i in range(8)])
    report = agreement_report(store, "verdict", reps=200)
    assert report.judges == ["run:verdict", "strict@2"] and report.annotators == ["alice", "bob", "carol"]
    assert report.labelled_items == 8 and report.categories == ["false", "true"]
    pairs = {(p.kind, p.a, p.b): p for p in report.pairs}
    judge = [i < 6 for i in range(8)]
    # run judge vs alice: agree on t0-t2, t4, t6, t7 -> 6/8; confusion rows judge (false, true), cols alice
    p = pairs[("judge-person", "run:verdict", "alice")]
    assert (p.n, p.percent.value) == (8, 0.75)
    assert p.confusion == [[2, 0], [2, 4]]
    # kappa by hand: p_o = 0.75; judge yes 6/8, alice yes 4/8 -> p_e = 0.75*0.5 + 0.25*0.5 = 0.5 -> 0.5
    assert p.kappa.value == pytest.approx(0.5)
    # majority: t0 t1 true (3/3), t2 true (2/3), t3 false, t4 true (2/3), t5 t6 false, t7 false (2/3)
    maj = [True, True, True, False, True, False, False, False]
    m = pairs[("judge-majority", "run:verdict", "majority")]
    assert m.n == 8 and m.percent.value == pytest.approx(sum(a == b for a, b in zip(judge, maj, strict=True)) / 8)
    s = pairs[("judge-majority", "strict@2", "majority")]
    assert s.percent.value == pytest.approx(sum((i < 3) == maj[i] for i in range(8)) / 8)
    assert ("person-person", "alice", "bob") in pairs and ("person-person", "bob", "carol") in pairs
    assert report.fleiss is not None and report.fleiss.n_items == 8
    assert report.krippendorff is not None and report.krippendorff.n_items == 8
    assert report.fleiss.value.ci_low is not None and report.fleiss.value.ci_low <= (report.fleiss.value.value or 0)
    calib = {c.judge: c for c in report.calibration}
    # the strict judge has verdicts only on the labelled set: no corrected rate, but sensitivity/specificity
    assert calib["strict@2"].corrected == [] and calib["strict@2"].sensitivity is not None
    assert [r.group for r in calib["run:verdict"].corrected] == ["all", "x", "y"]
    assert calib["run:verdict"].corrected[0].observed == 0.5
    # seeded: the same report twice
    assert agreement_report(store, "verdict", reps=200) .model_dump() == report.model_dump()
