"""Response cache: content-addressed on (model identity, whole request, repeat index), in SQLite.

The key holds the model's identity (``ChatModel.identity``: the sha256 of a GGUF or scripted file, the
endpoint and model name of an HTTP provider), not the spec string that named it: an edited scripted file or
a replaced GGUF is a miss, and the same relative path in two folders names two models. The ``spec`` column
(redacted) is only for people (``knowgap cache clear --model``).

Every response is written as soon as it arrives, tagged with the run that asked for it, so the cache is also
the run's log of finished calls: a run resumed after a crash finds the calls that finished before the crash
here, even with ``--no-cache`` (which only stops a run from reading other runs' entries).

Group commit: on an event loop, the responses that arrive in the same turn of the loop are committed together,
in one SQLite transaction at the start of the next turn, or at once when ``MAX_PENDING`` rows wait (a commit per
row cost about 0.065 ms, most of a trial's cache cost at 256 calls in flight). A lookup sees the rows not yet
committed. A run's trial lines are written only after the cache has committed the calls behind them
(:mod:`knowgap.engine.group_commit`), so a stored trial's calls are always in the cache. Outside an event loop
(and in :meth:`ResponseCache.flush`, ``stats``, ``clear``, ``close``) every row is committed at once.

Checkpoints: in WAL mode SQLite copies the log back into the database file (a checkpoint, with an fsync) on the
commit that takes the log past ``CHECKPOINT_PAGES``. Keys are random, so the rows of one commit change leaves of the
key index all over the file. With SQLite's default of 1,000 pages (4 MiB), in a cache of 500,000 rows a lookup and
a write (in commits of 10) cost 50-60 µs of the writing thread's time; with 10,000 pages, fewer and larger
checkpoints, 29-35 µs. The log file may reach 40 MiB; the next checkpoint resets it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import sqlite3
import threading
import time
from pathlib import Path

from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.redaction import redact

log = logging.getLogger("knowgap.cache")

MAX_PENDING = 64
"""Rows committed at once, without waiting for the next turn, when this many wait."""
CHECKPOINT_PAGES = 10_000
"""The write-ahead log's length (pages of 4 KiB) at which the commit that passes it checkpoints (SQLite: 1,000)."""

_INSERT = "INSERT OR REPLACE INTO responses (key, spec, run_id, response, created, identity) VALUES (?,?,?,?,?,?)"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    run_id TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL,
    identity TEXT
);
"""


def cache_key(identity: str, request: ChatRequest, repeat: int) -> str:
    """The key of one call: the model's identity (never its spec or credentials), the request, the repeat."""
    raw = f"identity={identity}\x00{request.fingerprint()}\x00{repeat}"
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(f"PRAGMA wal_autocheckpoint={CHECKPOINT_PAGES}")
        self._db.executescript(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(responses)")}
        if "identity" not in columns:  # a cache written before keys held the model identity
            self._db.execute("ALTER TABLE responses ADD COLUMN identity TEXT")
        self._pending: dict[str, tuple[str, str, str, str, float, str | None]] = {}
        """Rows put but not committed yet (group commit), by key."""
        self._flush_on: asyncio.AbstractEventLoop | None = None
        """The event loop a flush is scheduled on (a loop closed before it ran is replaced by the next one)."""

    def get(self, key: str, *, run_id: str | None = None) -> ChatResponse | None:
        """A cached response; with ``run_id``, only one that this run itself stored."""
        with self._lock:
            pending = self._pending.get(key)
            if pending is not None:  # it replaces any committed row of this key once committed
                return None if run_id is not None and pending[2] != run_id else \
                    ChatResponse.model_validate_json(pending[3])
            if run_id is None:
                row = self._db.execute("SELECT response FROM responses WHERE key=?", (key,)).fetchone()
            else:
                row = self._db.execute("SELECT response FROM responses WHERE key=? AND run_id=?",
                                       (key, run_id)).fetchone()
        if row is None:
            return None
        return ChatResponse.model_validate_json(row[0])

    def put(self, key: str, spec: str, run_id: str, response: ChatResponse, identity: str | None = None) -> None:
        """Store ``response`` under ``key``: committed with the others of this event-loop turn at the start of the
        next one (at once when no event loop runs in this thread)."""
        row = (key, redact(spec), run_id, redact(response.model_dump_json()), time.time(), identity)
        with self._lock:
            self._pending[key] = row
            full = len(self._pending) >= MAX_PENDING
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            full = True
        if full:
            self.flush()
            return
        if self._flush_on is not loop:
            self._flush_on = loop
            loop.call_soon(self._scheduled_commit)

    def flush(self) -> None:
        """Commit every row put so far, in one transaction. A failure drops them (a missing entry is a miss, never
        a wrong answer) and raises."""
        with self._lock:
            if not self._pending:
                return
            rows = list(self._pending.values())
            self._pending.clear()
            try:
                self._db.execute("BEGIN")
                self._db.executemany(_INSERT, rows)
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def _scheduled_commit(self) -> None:
        self._flush_on = None
        self.commit_pending()

    def commit_pending(self) -> None:
        """:meth:`flush` where nobody could handle its failure (a callback of the event loop, the group commit of
        a run): a cache that cannot be written is logged as a warning, and the calls go on uncached."""
        try:
            self.flush()
        except sqlite3.Error as exc:
            log.warning("could not write to the response cache %s: %s", self.path, exc)

    def stats(self) -> dict[str, int]:
        self.flush()
        with self._lock:
            count = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        size = self.path.stat().st_size if self.path.exists() else 0
        return {"entries": int(count), "bytes": int(size)}

    def clear(self, spec: str | None = None) -> int:
        """Delete every entry (or those of one model spec); returns how many were removed."""
        self.flush()
        with self._lock:
            if spec is None:
                cur = self._db.execute("DELETE FROM responses")
            else:
                cur = self._db.execute("DELETE FROM responses WHERE spec=?", (redact(spec),))
            self._db.execute("VACUUM")
        return int(cur.rowcount)

    def close(self) -> None:
        try:
            self.flush()
        finally:
            with self._lock:
                self._db.close()
