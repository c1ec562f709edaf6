"""The run store: append-only trials.jsonl, replacement of re-run trials, torn lines, bad lines, listing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowgap.engine.records import Manifest, MetricValue, RunConfig, TrialRecord
from knowgap.engine.store import TRIALS, RunStore, list_runs
from knowgap.errors import InputError, KnowgapError


def manifest(run_id: str = "run-1", started_at: str = "2026-01-01T00:00:00.000+00:00") -> Manifest:
    return Manifest(run_id=run_id, knowgap_version="0.1.0", config=RunConfig(suite="starter"),
                    started_at=started_at)


def record(trial_id: str, status: str = "ok", **scores: object) -> TrialRecord:
    case, config, _ = trial_id.split("|")
    return TrialRecord(trial_id=trial_id, case_id=case, config_id=config, status=status,  # type: ignore[arg-type]
                       error=None if status == "ok" else "boom", scores=dict(scores))


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore.create(tmp_path / "runs", manifest())


def test_append_then_iter(store: RunStore) -> None:
    records = [record(f"c{i}|p|r0", answer=i) for i in range(5)]
    for r in records:
        store.append(r)
    store.close()
    assert list(store.iter_records()) == records
    lines = (store.path / TRIALS).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["trial_id"] for line in lines] == [r.trial_id for r in records]


def test_records_are_readable_while_the_file_is_open(store: RunStore) -> None:
    store.append(record("a|p|r0"))
    assert [r.trial_id for r in RunStore(store.path).iter_records()] == ["a|p|r0"]  # flushed at once


def test_later_record_replaces_earlier(store: RunStore) -> None:
    store.append(record("a|p|r0", "error"))
    store.append(record("b|p|r0", "ok", answer=1))
    store.append(record("c|p|r0", "error"))
    store.append(record("a|p|r0", "ok", answer=2))
    store.close()
    got = list(store.iter_records())
    assert [(r.trial_id, r.status) for r in got] == [("b|p|r0", "ok"), ("c|p|r0", "error"), ("a|p|r0", "ok")]
    assert got[2].scores == {"answer": 2}
    assert store.finished_trial_ids() == {"a|p|r0", "b|p|r0"}


def test_trial_ids_with_quotes_and_unicode(store: RunStore) -> None:
    odd = 'zh-病例 "1"\\x|p|r0'
    store.append(record(odd, "error"))
    store.append(record(odd, "ok"))
    store.close()
    assert [(r.trial_id, r.status) for r in store.iter_records()] == [(odd, "ok")]


def test_torn_last_line_is_ignored_then_cut(store: RunStore) -> None:
    store.append(record("a|p|r0"))
    store.append(record("b|p|r0"))
    store.close()
    file = store.path / TRIALS
    torn = record("c|p|r0").model_dump_json()[:40]
    with file.open("a", encoding="utf-8") as fh:
        fh.write(torn)  # a crash in the middle of a write
    assert [r.trial_id for r in RunStore(store.path).iter_records()] == ["a|p|r0", "b|p|r0"]
    assert RunStore(store.path).finished_trial_ids() == {"a|p|r0", "b|p|r0"}

    resumed = RunStore(store.path)
    resumed.append(record("c|p|r0"))
    resumed.close()
    text = file.read_text(encoding="utf-8")
    assert torn not in text.splitlines()
    assert text.endswith("\n") and len(text.splitlines()) == 3
    assert [r.trial_id for r in resumed.iter_records()] == ["a|p|r0", "b|p|r0", "c|p|r0"]


def test_torn_only_line(store: RunStore) -> None:
    file = store.path / TRIALS
    file.write_text('{"trial_id":"a|p|r0","case', encoding="utf-8")
    assert list(store.iter_records()) == []
    store.append(record("b|p|r0"))
    store.close()
    assert [r.trial_id for r in store.iter_records()] == ["b|p|r0"]


def test_invalid_record_names_file_line_and_field(store: RunStore) -> None:
    store.append(record("a|p|r0"))
    store.close()
    file = store.path / TRIALS
    with file.open("a", encoding="utf-8") as fh:
        fh.write('{"trial_id":"x|p|r0","case_id":"x","config_id":"p","status":"weird"}\n')
    with pytest.raises(InputError) as info:
        list(store.iter_records())
    assert (info.value.file, info.value.line, info.value.field) == (str(file), 2, "status")


@pytest.mark.parametrize("bad", ["garbage\n", '{"foo": 1}\n', "[1, 2]\n"])
def test_malformed_line_is_an_input_error(store: RunStore, bad: str) -> None:
    store.append(record("a|p|r0"))
    store.close()
    file = store.path / TRIALS
    with file.open("a", encoding="utf-8") as fh:
        fh.write(bad)
    with pytest.raises(InputError) as info:
        list(store.iter_records())
    assert (info.value.file, info.value.line) == (str(file), 2)


def test_manifest_and_metrics_round_trip(store: RunStore) -> None:
    m = store.read_manifest()
    assert m == manifest()
    m.status = "finished"
    store.write_manifest(m)
    assert store.read_manifest().status == "finished"
    assert store.read_metrics() == []
    metrics = [MetricValue(name="accuracy", group="prompt=plain", value=0.5, ci_low=0.2366, ci_high=0.7634,
                           n=10)]
    store.write_metrics(metrics)
    assert store.read_metrics() == metrics
    assert not list(store.path.glob(".*.tmp"))  # atomic writes leave no temp files


def test_bad_manifest_names_the_field(store: RunStore) -> None:
    file = store.path / "manifest.json"
    data = json.loads(file.read_text(encoding="utf-8"))
    data["status"] = "exploded"
    file.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError) as info:
        store.read_manifest()
    assert (info.value.file, info.value.field) == (str(file), "status")


def test_create_refuses_an_existing_run(tmp_path: Path) -> None:
    RunStore.create(tmp_path, manifest())
    with pytest.raises(KnowgapError, match="already exists"):
        RunStore.create(tmp_path, manifest())


def test_open_by_id_or_path(tmp_path: Path) -> None:
    created = RunStore.create(tmp_path / "runs", manifest("run-7"))
    assert RunStore.open(tmp_path / "runs", "run-7").path == created.path
    assert RunStore.open(tmp_path / "elsewhere", str(created.path)).path == created.path
    with pytest.raises(KnowgapError) as info:
        RunStore.open(tmp_path / "runs", "run-8")
    assert "no run 'run-8'" in str(info.value) and "knowgap runs" in str(info.value)


def test_list_runs_newest_first(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    assert list_runs(root) == []  # no folder yet
    for run_id, started in [("b-run", "2026-03-01T10:00:00.000+00:00"),
                            ("a-run", "2026-05-01T09:00:00.000+00:00"),
                            ("c-run", "2026-01-15T23:59:59.999+00:00"),
                            ("d-run", "2026-03-01T10:00:00.001+00:00")]:
        RunStore.create(root, manifest(run_id, started))
    (root / "not-a-run").mkdir()
    broken = root / "broken-run"
    broken.mkdir()
    (broken / "manifest.json").write_text("{not json", encoding="utf-8")
    (root / "stray.txt").write_text("x", encoding="utf-8")
    assert [m.run_id for m in list_runs(root)] == ["a-run", "d-run", "b-run", "c-run"]


def test_snapshot_is_the_current_records_as_they_stood(store: RunStore) -> None:
    store.append(record("a|p|r0", "error"))
    store.append(record("b|p|r0", answer=1))
    store.append(record("a|p|r0", answer=2))  # a's error run again on resume: replaces the first line
    snap = store.snapshot()
    store.append(record("c|p|r0"))  # written after the snapshot: not in it
    store.close()
    assert len(snap) == 2 and bool(snap)
    assert [(r.trial_id, r.status) for r in snap] == [("b|p|r0", "ok"), ("a|p|r0", "ok")]
    assert list(snap) == list(snap)  # each pass reads the file again, the same records
    assert snap[0].trial_id == "b|p|r0" and snap[-1].scores == {"answer": 2}
    assert [r.trial_id for r in snap[::-1]] == ["a|p|r0", "b|p|r0"]
    with pytest.raises(IndexError):
        snap[2]
    assert [r.trial_id for r in store.iter_records()] == ["b|p|r0", "a|p|r0", "c|p|r0"]


def test_snapshot_of_a_run_without_trials(store: RunStore) -> None:
    snap = store.snapshot()
    assert len(snap) == 0 and not snap and list(snap) == []


def test_trial_ids_sharing_a_hash_are_told_apart(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index keeps hashes of the trial ids; ids with one hash are compared as ids (no record is lost)."""
    import knowgap.engine.store as store_module

    monkeypatch.setattr(store_module, "hash", lambda _: 7, raising=False)  # every id collides
    store.append(record("a|p|r0", "error"))
    store.append(record("b|p|r0"))
    store.append(record("a|p|r0"))
    store.append(record("c|p|r0"))
    store.close()
    snap = store.snapshot()
    assert len(snap) == 3
    assert [(r.trial_id, r.status) for r in snap] == [("b|p|r0", "ok"), ("a|p|r0", "ok"), ("c|p|r0", "ok")]
