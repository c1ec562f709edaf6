"""Group commit: the cache rows and trial lines of one event-loop turn are committed together, cache first, and
nothing counts a trial done before its line is flushed."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

import knowgap
from knowgap.engine.cache import ResponseCache
from knowgap.engine.group_commit import GroupCommit
from knowgap.engine.records import Manifest, RunConfig, TrialRecord
from knowgap.engine.store import TRIALS, RunStore, StoreWriteError
from knowgap.models.types import ChatResponse
from tests.helpers import scripted


def committed(path: Path) -> dict[str, str]:
    """Key -> run id of every row another process would see now."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return dict(db.execute("SELECT key, run_id FROM responses").fetchall())
    finally:
        db.close()


def stored_ids(store: RunStore) -> list[str]:
    file = store.path / TRIALS
    return [TrialRecord.model_validate_json(line).trial_id
            for line in file.read_text(encoding="utf-8").splitlines()] if file.exists() else []


def record(trial_id: str) -> TrialRecord:
    return TrialRecord(trial_id=trial_id, case_id=trial_id.split("|")[0], config_id="p")


@pytest.fixture
def cache(tmp_path: Path) -> ResponseCache:
    return ResponseCache(tmp_path / "cache.sqlite")


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore.create(tmp_path / "runs", Manifest(run_id="run-1", knowgap_version="0",
                                                       config=RunConfig(suite="starter")))


def test_rows_put_in_one_turn_are_committed_together_at_the_next(cache: ResponseCache) -> None:
    async def main() -> None:
        cache.put("a", "scripted:x", "run-1", ChatResponse(text="A"))
        cache.put("b", "scripted:x", "run-1", ChatResponse(text="B"))
        assert committed(cache.path) == {}  # not yet for other processes ...
        hit = cache.get("a")  # ... but this one sees them
        assert hit is not None and hit.text == "A"
        await asyncio.sleep(0)
        assert committed(cache.path) == {"a": "run-1", "b": "run-1"}

    asyncio.run(main())
    cache.close()


def test_a_put_outside_an_event_loop_is_committed_at_once(cache: ResponseCache) -> None:
    cache.put("a", "scripted:x", "run-1", ChatResponse(text="A"))
    assert committed(cache.path) == {"a": "run-1"}
    cache.close()


def test_a_row_waiting_for_its_commit_answers_as_it_will_once_committed(cache: ResponseCache) -> None:
    cache.put("k", "scripted:x", "run-1", ChatResponse(text="old"))

    async def main() -> None:
        cache.put("k", "scripted:x", "run-2", ChatResponse(text="new"))  # replaces run-1's row
        hit = cache.get("k", run_id="run-2")
        assert hit is not None and hit.text == "new"
        assert cache.get("k", run_id="run-1") is None
        assert committed(cache.path) == {"k": "run-1"}

    asyncio.run(main())
    assert committed(cache.path) == {"k": "run-2"}
    assert cache.get("k", run_id="run-1") is None
    cache.close()


def test_close_commits_rows_whose_loop_ended_first(cache: ResponseCache) -> None:
    def put_then_stop(loop: asyncio.AbstractEventLoop, key: str) -> None:
        cache.put(key, "scripted:x", "run-1", ChatResponse(text=key))
        loop.stop()  # this turn is the last: the commit scheduled for the next never runs

    first = asyncio.new_event_loop()
    first.call_soon(put_then_stop, first, "k")
    first.run_forever()
    first.close()
    assert committed(cache.path) == {}
    second = asyncio.new_event_loop()  # a new loop gets a commit of its own, which commits both
    second.call_soon(put_then_stop, second, "j")
    second.run_forever()
    second.run_until_complete(asyncio.sleep(0))
    second.close()
    assert set(committed(cache.path)) == {"k", "j"}
    third = asyncio.new_event_loop()
    third.call_soon(put_then_stop, third, "i")
    third.run_forever()
    third.close()
    assert cache.stats()["entries"] == 3  # stats commits first
    cache.put("h", "scripted:x", "run-1", ChatResponse(text="h"))  # no loop now: at once
    assert set(committed(cache.path)) == {"k", "j", "i", "h"}
    cache.close()


def test_trials_of_one_turn_are_stored_with_one_write_after_their_calls(
        cache: ResponseCache, store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    batches: list[list[str]] = []
    append_lines = store.append_lines

    def spy(lines: list[str]) -> None:
        ids = [TrialRecord.model_validate_json(line).trial_id for line in lines]
        assert set(committed(cache.path)) >= set(ids), "lines before their calls"
        batches.append(ids)
        append_lines(lines)

    monkeypatch.setattr(store, "append_lines", spy)
    counted: list[tuple[bool, int]] = []  # (errored, lines flushed when the trial was counted done)
    commit = GroupCommit(store, cache, on_stored=lambda error: counted.append((error, len(stored_ids(store)))))
    ids = [f"c{i}|p|r0" for i in range(3)]

    async def main() -> None:
        for i, trial_id in enumerate(ids):  # three trials finishing in one turn
            cache.put(trial_id, "scripted:x", "run-1", ChatResponse(text=trial_id))
            commit.add(record(trial_id).model_copy(update={"status": "error" if i == 1 else "ok"}))
        assert stored_ids(store) == [] and counted == []
        await asyncio.sleep(0)
        assert stored_ids(store) == ids

    asyncio.run(main())
    assert batches == [ids]
    assert counted == [(False, 3), (True, 3), (False, 3)]
    store.close()
    cache.close()


def test_a_refused_write_stops_the_next_worker_and_the_final_flush(cache: ResponseCache, store: RunStore,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(lines: list[str]) -> None:
        raise StoreWriteError(f"cannot write to {store.path / TRIALS}: read-only file system")

    monkeypatch.setattr(store, "append_lines", refuse)
    counted: list[bool] = []
    commit = GroupCommit(store, cache, on_stored=counted.append)

    async def main() -> None:
        commit.add(record("c0|p|r0"))
        await asyncio.sleep(0)  # the commit fails on the event loop, where nobody can catch it ...
        with pytest.raises(StoreWriteError):  # ... so the next worker to finish a trial raises it
            commit.add(record("c1|p|r0"))

    asyncio.run(main())
    with pytest.raises(StoreWriteError):
        commit.flush()
    assert counted == []
    cache.close()


def test_trials_waiting_when_the_run_stops_are_stored_by_flush(cache: ResponseCache, store: RunStore) -> None:
    counted: list[bool] = []
    commit = GroupCommit(store, cache, on_stored=counted.append)

    def finish_then_stop(loop: asyncio.AbstractEventLoop) -> None:
        cache.put("c0|p|r0", "scripted:x", "run-1", ChatResponse(text="A"))
        commit.add(record("c0|p|r0"))
        loop.stop()  # Ctrl-C: the loop ends before the commit scheduled for its next turn

    loop = asyncio.new_event_loop()
    try:
        loop.call_soon(finish_then_stop, loop)
        loop.run_forever()
    finally:
        loop.close()
    assert stored_ids(store) == [] and counted == []
    commit.flush()  # what the runner does when its workers stop
    assert stored_ids(store) == ["c0|p|r0"] and counted == [False]
    assert set(committed(cache.path)) == {"c0|p|r0"}
    store.close()
    cache.close()


def test_a_run_stores_every_trial_and_caches_every_call(tmp_path: Path, runs_root: Path) -> None:
    spec = scripted(tmp_path, "A", "B")
    result = knowgap.run("starter", models={"target": spec}, runs_root=runs_root, concurrency=8, progress=False)
    records = list(knowgap.iter_trials(result.run_id, runs_root))
    assert len(records) == result.manifest.trials_total == 32
    assert knowgap.cache_info()["entries"] == result.provider_calls == 32


def test_a_full_batch_is_stored_at_once_not_at_the_next_turn(cache: ResponseCache, store: RunStore) -> None:
    from knowgap.engine.cache import MAX_PENDING
    from knowgap.engine.group_commit import MAX_WAITING

    commit = GroupCommit(store, cache)

    async def main() -> None:
        for i in range(MAX_PENDING):
            cache.put(f"k{i}", "scripted:x", "run-1", ChatResponse(text="A"))
        assert len(committed(cache.path)) == MAX_PENDING  # the 64th row committed them all
        ids = [f"c{i}|p|r0" for i in range(MAX_WAITING + 1)]
        for trial_id in ids:
            commit.add(record(trial_id))
        assert stored_ids(store) == ids[:MAX_WAITING]  # the 32nd trial stored them; the 33rd waits for the turn
        await asyncio.sleep(0)
        assert stored_ids(store) == ids

    asyncio.run(main())
    store.close()
    cache.close()
