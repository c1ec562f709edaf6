"""A damaged or unwritable cache never costs a run: the response cache moved aside or switched off with one warning
line, the model called instead; `knowgap cache info` / `clear` work on it; the embedding cache never hands back a
vector a damaged page garbled.

The faults are real: random bytes over a real cache file, a page in the middle of a real cache with thousands of rows
overwritten with random bytes (the page found with SQLite's dbstat table, the fault checked to be one SQLite reports
or, for an overflow page, one it does not), a KNOWGAP_HOME on a real tmpfs that is full before the run or that a
``python:`` system under test fills in the middle of it. The runs are the real CLI.
"""

from __future__ import annotations

import logging
import random
import re
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from knowgap.engine.cache import ResponseCache
from knowgap.models.types import ChatResponse
from knowgap.text import embedding_cache
from knowgap.text.embed import DIM, E5Embedder
from knowgap.text.embedding_cache import EmbeddingCacheWarning
from tests.helpers import knowgap_cli

PAGE = 4096
SYSTEM = '''
import os

def answer(request):
    with open(os.environ["CALLS"], "a") as log:
        log.write("call\\n")
    fill_at = int(os.environ.get("FILL_AT", "0"))
    if fill_at:
        with open(os.environ["CALLS"]) as log:
            if sum(1 for _ in log) == fill_at:  # the disk under KNOWGAP_HOME fills up now
                try:
                    with open(os.path.join(os.environ["KNOWGAP_HOME"], "filler"), "ab") as f:
                        while True:
                            f.write(b"x" * 4096)
                            f.flush()
                except OSError:
                    pass
    return "I don't know."
'''


@pytest.fixture
def system(tmp_path: Path) -> str:
    """A ``python:`` system under test that counts its calls in ``tmp_path/calls.log``."""
    file = tmp_path / "system.py"
    file.write_text(SYSTEM, encoding="utf-8")
    return f"python:{file}:answer"


def calls(tmp_path: Path) -> int:
    log = tmp_path / "calls.log"
    return len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0


def run(tmp_path: Path, home: Path, system: str, **env: str) -> subprocess.CompletedProcess[str]:
    return knowgap_cli("run", "starter", "--model", system, "--runs-dir", str(tmp_path / "runs"), "-q",
                       "--concurrency", "1", env={"KNOWGAP_HOME": str(home), "CALLS": str(tmp_path / "calls.log"),
                                                  **env}, cwd=tmp_path)


def warnings_of(proc: subprocess.CompletedProcess[str]) -> list[str]:
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return [line for line in proc.stderr.splitlines() if line.strip()]


def finished_with_model_calls(proc: subprocess.CompletedProcess[str]) -> int:
    """The model calls a finished 32-trial starter run says it made."""
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "trials: 32 ok, 0 errors of 32" in proc.stdout and "status: finished" in proc.stdout, proc.stdout
    made = re.search(r"model calls made now: (\d+)", proc.stdout)
    assert made is not None, proc.stdout
    return int(made.group(1))


# the response cache --------------------------------------------------------------------------------------------


@pytest.mark.slow  # six CLI runs
def test_random_bytes_over_the_cache_file(tmp_path: Path, kg_home: Path, system: str) -> None:
    assert finished_with_model_calls(run(tmp_path, kg_home, system)) == 32
    assert finished_with_model_calls(run(tmp_path, kg_home, system)) == 0  # a working cache answers every call
    cache_file = kg_home / "cache.sqlite"
    noise = random.Random(35).randbytes(cache_file.stat().st_size)
    cache_file.write_bytes(noise)

    proc = run(tmp_path, kg_home, system)
    assert finished_with_model_calls(proc) == 32 and calls(tmp_path) == 64  # every call went to the model
    [aside] = kg_home.glob("cache.sqlite.damaged-*")
    assert aside.read_bytes() == noise  # moved aside as it was, not deleted
    [warning] = warnings_of(proc)
    assert f"the response cache {cache_file} is damaged (file is not a database)" in warning
    assert str(aside) in warning and "knowgap cache clear" in warning
    assert finished_with_model_calls(run(tmp_path, kg_home, system)) == 0  # the new cache holds them

    info = knowgap_cli("cache", "info", env={"KNOWGAP_HOME": str(kg_home)})
    assert info.returncode == 0 and not warnings_of(info), info.stderr
    text = info.stdout.replace("\n", "")
    assert f"{cache_file}: 32 responses" in text and f"{aside}: a damaged copy moved aside" in text
    cleared = knowgap_cli("cache", "clear", env={"KNOWGAP_HOME": str(kg_home)})
    assert cleared.returncode == 0 and "removed 32 cached responses" in cleared.stdout, cleared.stderr
    assert sorted(p.name for p in kg_home.iterdir() if p.name.startswith("cache.sqlite")) == ["cache.sqlite"]


@pytest.mark.parametrize("command", [["cache", "info"], ["cache", "clear"]])
def test_cache_commands_on_a_file_of_random_bytes(tmp_path: Path, kg_home: Path, command: list[str]) -> None:
    kg_home.mkdir()
    (kg_home / "cache.sqlite").write_bytes(random.Random(4).randbytes(50_000))
    proc = knowgap_cli(*command, env={"KNOWGAP_HOME": str(kg_home)})
    assert proc.returncode == 0, proc.stderr
    [warning] = warnings_of(proc)
    assert "is damaged (file is not a database): moved it aside to" in warning
    if command[1] == "info":
        assert "cache.sqlite: 0 responses" in proc.stdout and "a damaged copy moved aside" in proc.stdout
        assert len(list(kg_home.glob("cache.sqlite.damaged-*"))) == 1
    else:
        assert "removed 0 cached responses" in proc.stdout
        assert not list(kg_home.glob("cache.sqlite.damaged-*"))  # clear deletes the copy it moved aside
    assert ResponseCache(kg_home / "cache.sqlite").stats()["entries"] == 0  # a working cache again


def _fill(cache_file: Path, first: int, rows: int) -> None:
    cache = ResponseCache(cache_file)
    for i in range(first, first + rows):
        cache.put(f"filler-{i:06d}", "scripted:other", "run-other", ChatResponse(text=f"answer {i} " * 30))
    cache.close()  # the last connection: the log is checkpointed into the file


def _table_page_holding(cache_file: Path, key: str) -> int:
    """The number (from 1) of the table leaf page holding ``key``'s row."""
    db = sqlite3.connect(cache_file)
    try:
        leaves = {p for (p,) in db.execute("SELECT pageno FROM dbstat WHERE name='responses' AND pagetype='leaf'")}
    finally:
        db.close()
    data = cache_file.read_bytes()
    pages = {m.start() // PAGE + 1 for m in re.finditer(re.escape(key.encode()), data)}
    [page] = pages & leaves
    return page


@pytest.mark.slow  # three CLI runs
def test_a_page_overwritten_in_the_middle_of_a_big_cache(tmp_path: Path, kg_home: Path, system: str) -> None:
    cache_file = kg_home / "cache.sqlite"
    _fill(cache_file, 0, 3000)  # other runs' responses before and after this run's
    assert finished_with_model_calls(run(tmp_path, kg_home, system)) == 32
    _fill(cache_file, 3000, 3000)
    db = sqlite3.connect(cache_file)
    keys = [k for (k,) in db.execute("SELECT key FROM responses WHERE run_id NOT LIKE 'run-other'")]
    db.close()
    pages = cache_file.stat().st_size // PAGE
    page = _table_page_holding(cache_file, keys[len(keys) // 2])
    assert pages > 400 and pages // 4 < page < 3 * pages // 4, (page, pages)
    with cache_file.open("r+b") as fh:
        fh.seek((page - 1) * PAGE)
        fh.write(random.Random(6).randbytes(PAGE))
    db = sqlite3.connect(cache_file)
    with pytest.raises(sqlite3.DatabaseError, match="malformed"):  # the fault is real: SQLite reports it
        for key in keys:
            db.execute("SELECT response FROM responses WHERE key=?", (key,)).fetchone()
    db.close()

    proc = run(tmp_path, kg_home, system)
    made = finished_with_model_calls(proc)  # the calls looked up before the damaged page are answered by the cache
    assert 1 <= made <= 32 and calls(tmp_path) == 32 + made
    [warning] = warnings_of(proc)
    assert "is damaged (database disk image is malformed): moved it aside to" in warning
    [aside] = kg_home.glob("cache.sqlite.damaged-*")
    assert aside.stat().st_size == pages * PAGE
    # the new cache holds the answers the model gave after the damage was found; the others are asked again
    assert finished_with_model_calls(run(tmp_path, kg_home, system)) == 32 - made


def test_a_page_damaged_under_an_open_cache(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The damage found in the middle of a run: a lookup is a miss, the file is moved aside once, and the rows stored
    after it go to the new cache."""
    cache_file = tmp_path / "cache.sqlite"
    _fill(cache_file, 0, 4000)
    page = _table_page_holding(cache_file, "filler-002000")
    cache = ResponseCache(cache_file)
    try:
        assert cache.get("filler-000001") == ChatResponse(text="answer 1 " * 30)
        with cache_file.open("r+b") as fh:
            fh.seek((page - 1) * PAGE)
            fh.write(random.Random(7).randbytes(PAGE))
        with caplog.at_level(logging.WARNING, logger="knowgap.cache"):
            assert cache.get("filler-002000") is None
            assert cache.get("filler-001999") is None  # the new cache is empty; nothing is warned twice
            cache.put("k", "scripted:a", "run-1", ChatResponse(text="after"))
            cache.flush()
        [record] = caplog.records
        assert "is damaged (database disk image is malformed): moved it aside to" in record.getMessage()
        assert cache.usable and cache.moved_aside is not None and cache.moved_aside.exists()
        assert cache.get("k") == ChatResponse(text="after")
    finally:
        cache.close()
    assert ResponseCache(cache_file).stats()["entries"] == 1


def test_a_row_that_is_no_longer_utf8_is_a_miss(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cache_file = tmp_path / "cache.sqlite"
    _fill(cache_file, 0, 3)
    db = sqlite3.connect(cache_file)
    db.execute("UPDATE responses SET response = CAST(x'7b227465787480ff' AS TEXT) WHERE key='filler-000001'")
    db.commit()
    db.close()
    cache = ResponseCache(cache_file)
    try:
        with caplog.at_level(logging.WARNING, logger="knowgap.cache"):
            assert cache.get("filler-000001") is None
        assert "cannot be read" in caplog.text and "asked of the model again" in caplog.text
        assert cache.usable and cache.get("filler-000002") is not None  # one row lost, not the cache
    finally:
        cache.close()


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A real 512 KiB tmpfs (needs root and mount); skipped, saying why, where it cannot be mounted."""
    where = tmp_path / "tmpfs"
    where.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(where)], capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root and mount): {proc.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill_disk(folder: Path) -> None:
    try:
        with (folder / "filler").open("ab") as fh:
            while True:
                fh.write(b"x" * PAGE)
                fh.flush()
    except OSError:
        pass


def test_knowgap_home_full_before_the_run(tmp_path: Path, tmpfs: Path, system: str) -> None:
    _fill_disk(tmpfs)
    proc = run(tmp_path, tmpfs, system)
    assert finished_with_model_calls(proc) == 32 and calls(tmp_path) == 32
    [warning] = warnings_of(proc)
    assert f"the response cache {tmpfs / 'cache.sqlite'} cannot be used (database or disk is full)" in warning
    assert "going on without it" in warning
    for command in (["cache", "info"], ["cache", "clear"]):
        done = knowgap_cli(*command, env={"KNOWGAP_HOME": str(tmpfs)})
        assert done.returncode == 0 and len(warnings_of(done)) == 1, done.stderr
    assert "cannot be used (database or disk is full)" in knowgap_cli(
        "cache", "info", env={"KNOWGAP_HOME": str(tmpfs)}).stdout


def test_knowgap_home_fills_up_in_the_middle_of_the_run(tmp_path: Path, tmpfs: Path, system: str) -> None:
    proc = run(tmp_path, tmpfs, system, FILL_AT="5")
    assert finished_with_model_calls(proc) == 32 and calls(tmp_path) == 32
    [warning] = warnings_of(proc)
    assert "cannot be used (database or disk is full): going on without it" in warning
    (tmpfs / "filler").unlink()
    db = sqlite3.connect(tmpfs / "cache.sqlite")
    try:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)  # what was committed is intact
        committed = db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    finally:
        db.close()
    assert 1 <= committed < 32
    assert finished_with_model_calls(run(tmp_path, tmpfs, system)) == 32 - committed


# the embedding cache -------------------------------------------------------------------------------------------

TEXTS = [f"Refund rule {i}: goods returned within {i + 7} days are refunded in full." for i in range(12)]


@pytest.fixture
def vectors_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "vectors"
    monkeypatch.setenv("KNOWGAP_EMBED_CACHE", str(folder))
    return folder


@pytest.mark.slow  # loads the e5 model
def test_random_bytes_over_the_embedding_cache(vectors_folder: Path) -> None:
    expected = E5Embedder(disk=False).embed(TEXTS)
    file = embedding_cache.path_for(E5Embedder().model_id, vectors_folder)
    vectors_folder.mkdir()
    file.write_bytes(random.Random(8).randbytes(64 * PAGE))
    with pytest.warns(EmbeddingCacheWarning) as warned:
        assert np.array_equal(E5Embedder().embed(TEXTS), expected)
    assert len(warned) == 1 and str(file) in str(warned[0].message)  # names the file, not only its folder


@pytest.mark.slow  # loads the e5 model
def test_a_damaged_page_never_hands_back_a_wrong_vector(vectors_folder: Path) -> None:
    """A vector is longer than a page's share of a row, so its end lives on an overflow page; random bytes there are
    no damage SQLite can see: it returns other numbers. The embedder computes that vector again."""
    expected = E5Embedder(disk=False).embed(TEXTS)
    E5Embedder().embed(TEXTS)
    file = embedding_cache.path_for(E5Embedder().model_id, vectors_folder)
    cache = embedding_cache.EmbeddingCache(file)
    rng = np.random.default_rng(9)
    others = rng.normal(size=(600, DIM)).astype(np.float32)
    cache.put((embedding_cache.key("passage", f"other text {i}"), v / np.linalg.norm(v))
              for i, v in enumerate(others))
    cache.close()
    db = sqlite3.connect(file)  # every row into the file itself (an embedder not yet collected may hold it open)
    try:
        assert db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
    finally:
        db.close()
    victim = embedding_cache.key("passage", TEXTS[5])
    data = file.read_bytes()
    page = data.find(expected[5].tobytes()[-512:]) // PAGE  # from 0: where the vector's end is stored
    assert page > 0
    with file.open("r+b") as fh:
        fh.seek(page * PAGE)
        fh.write(random.Random(10).randbytes(PAGE))
    cache = embedding_cache.EmbeddingCache(file)
    try:
        garbled = cache.get([victim])[victim]  # the fault is real, and SQLite does not see it
    finally:
        cache.close()
    assert garbled.shape == (DIM,) and not np.array_equal(garbled, expected[5])

    got = E5Embedder().embed(TEXTS)
    assert np.array_equal(got, expected)
    cache = embedding_cache.EmbeddingCache(file)
    try:
        assert np.array_equal(cache.get([victim])[victim], expected[5])  # and written again
    finally:
        cache.close()
