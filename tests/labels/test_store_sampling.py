"""The label store (append-only, history, torn lines, bad lines, concurrent writers) and stratified samples."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pytest

from knowgap.engine.records import TrialRecord
from knowgap.errors import InputError, KnowgapError
from knowgap.labels.sampling import draw_sample, sample_run
from knowgap.labels.store import LabelStore, parse_value
from tests.labels.starter_runs import starter_run


def synthetic(n_true: int, n_false: int, configs: tuple[str, ...] = ("a", "b")) -> list[TrialRecord]:
    out = []
    for c in configs:
        for i in range(n_true + n_false):
            out.append(TrialRecord(trial_id=f"t{i}|{c}", case_id=f"t{i}", config_id=c,
                                   scores={"abstained": i < n_true}))
    out.append(TrialRecord(trial_id="err|a", case_id="err", config_id="a", status="error", error="boom"))
    return out


def test_equal_allocation_per_stratum_and_seeded() -> None:
    records = synthetic(n_true=3, n_false=20)
    s = draw_sample(records, "r", "abstained", n=20, seed=0)
    drawn = {(st.config_id, st.verdict): (st.population, st.drawn) for st in s.strata}
    # 4 strata, 5 each wanted; the two 'true' strata only have 3, the 4 left over go to the 'false' ones
    assert drawn == {("a", "false"): (20, 7), ("a", "true"): (3, 3), ("b", "false"): (20, 7), ("b", "true"): (3, 3)}
    assert len(s.trial_ids) == len(set(s.trial_ids)) == 20
    assert "err|a" not in s.trial_ids
    assert s.trial_ids == draw_sample(records, "r", "abstained", n=20, seed=0).trial_ids
    assert s.trial_ids != draw_sample(records, "r", "abstained", n=20, seed=1).trial_ids


def test_proportional_allocation_and_share() -> None:
    records = synthetic(n_true=10, n_false=30)
    s = draw_sample(records, "r", "abstained", share=0.2, allocation="proportional", seed=2)
    assert s.requested == 16
    assert {(st.config_id, st.verdict): st.drawn for st in s.strata} == {
        ("a", "false"): 6, ("a", "true"): 2, ("b", "false"): 6, ("b", "true"): 2}
    verdicts = Counter(tid.split("|")[0] in {f"t{i}" for i in range(10)} for tid in s.trial_ids)
    assert verdicts == {False: 12, True: 4}
    # ties of the largest remainders go to the first strata: 7.5, 2.5, 7.5, 2.5 -> 8, 3, 7, 2
    tied = draw_sample(records, "r", "abstained", n=20, allocation="proportional")
    assert [st.drawn for st in tied.strata] == [8, 3, 7, 2]
    everything = draw_sample(records, "r", "abstained", n=1000)
    assert len(everything.trial_ids) == 80


def test_sample_errors_name_the_problem() -> None:
    records = synthetic(2, 2)
    with pytest.raises(KnowgapError, match="judge fields in this run: abstained"):
        draw_sample(records, "r", "abstain", n=3)
    with pytest.raises(KnowgapError, match="one of them"):
        draw_sample(records, "r", "abstained", n=3, share=0.5)
    with pytest.raises(KnowgapError, match="share"):
        draw_sample(records, "r", "abstained", share=1.5)


def test_labels_append_with_history(tmp_path: Path, runs_root: Path) -> None:
    run = starter_run(tmp_path, runs_root)
    store = LabelStore.open(run.run_id, runs_root)
    records = store.records()
    trial = sorted(records)[0]
    first = store.add(records[trial], "abstained", "alice", True, source="terminal")
    second = store.add(records[trial], "abstained", "alice", False, source="web")
    store.add(records[trial], "abstained", "bob", True)
    assert (first.revision, second.revision, second.supersedes) == (1, 2, first.event_id)
    assert store.human_labels("abstained") == {"alice": {trial: False}, "bob": {trial: True}}
    assert [e.value for e in store.history(trial)] == [True, False, True]
    ctx = second.context
    assert ctx.response == records[trial].output["response"]
    assert ctx.judge_verdicts == records[trial].scores and ctx.config_id == records[trial].config_id
    assert ctx.messages[-1].content.startswith("Context:")
    assert len((store.path / "labels.jsonl").read_text(encoding="utf-8").splitlines()) == 3
    with pytest.raises(KnowgapError, match="has no score 'nope'"):
        store.add(records[trial], "nope", "alice", True)
    with pytest.raises(KnowgapError, match="annotator"):
        store.add(records[trial], "abstained", "  ", True)


def test_torn_and_bad_lines(tmp_path: Path, runs_root: Path) -> None:
    run = starter_run(tmp_path, runs_root)
    store = LabelStore.open(run.run_id, runs_root)
    records = store.records()
    store.add(records[sorted(records)[0]], "abstained", "alice", True)
    with store.file.open("a", encoding="utf-8") as fh:
        fh.write('{"event_id": "torn')  # a crash mid-write
    assert len(store.events()) == 1
    store.file.write_text(store.file.read_text(encoding="utf-8").split("{\"event_id\": \"torn")[0]
                          + '{"event_id": "x", "run_id": "r"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"labels.jsonl, line 2, field 'trial_id'"):
        store.events()


def test_concurrent_writers_keep_every_line(tmp_path: Path, runs_root: Path) -> None:
    run = starter_run(tmp_path, runs_root)
    records = LabelStore.open(run.run_id, runs_root).records()
    ids = sorted(records)

    def label(who: str) -> None:
        store = LabelStore.open(run.run_id, runs_root)
        for t in ids[:10]:
            store.add(records[t], "abstained", who, True)

    threads = [threading.Thread(target=label, args=(f"p{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events = LabelStore.open(run.run_id, runs_root).events()
    assert len(events) == 40 and {e.revision for e in events} == {1}


def test_sample_is_stored_in_the_run(tmp_path: Path, runs_root: Path) -> None:
    run = starter_run(tmp_path, runs_root)
    sample, path = sample_run(run.run_id, "abstained", runs_root=runs_root, n=8, seed=0)
    assert path == runs_root / run.run_id / "labels" / "samples" / "abstained.json"
    store = LabelStore.open(run.run_id, runs_root)
    assert store.read_sample("abstained") == sample
    with pytest.raises(KnowgapError, match="no sample 'other'"):
        store.read_sample("other")


def test_parse_value() -> None:
    assert [parse_value(x) for x in ("true", "false", "2", '"x"', "refuse", "[1]")] == [
        True, False, 2, "x", "refuse", "[1]"]
