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

A cache is an optimisation, never a reason a run fails (docs/reliability.md, "Damaged state"). A file SQLite finds
damaged (random bytes, a page overwritten: ``SQLITE_CORRUPT`` / ``SQLITE_NOTADB``), when it is opened or at any later
lookup or commit, is moved aside (``cache.sqlite.damaged-<UTC time>``, its write-ahead log with it), named in one
warning line, and an empty cache takes its place; the call that found it is a miss. A cache that cannot be used at
all (a full disk, a read-only or missing ``KNOWGAP_HOME``, a lock held too long), at the start or in the middle of a
run, is switched off for the rest of the process with one warning line: every call goes to the model and nothing is
cached. A stored row that no longer parses is a miss. ``knowgap cache info`` lists the damaged copies and
``knowgap cache clear`` deletes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import sqlite3
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

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


DAMAGED = ".damaged-"
"""A damaged cache file is moved aside to ``<name>.damaged-<UTC time>``."""
_UNDECODABLE = "Could not decode to UTF-8"
"""Python's sqlite3 module's message for a text value whose bytes are not UTF-8 (one damaged row)."""
_CORRUPT = (11, 26)
"""SQLite's primary result codes for a damaged file: SQLITE_CORRUPT, SQLITE_NOTADB."""


def is_damaged(exc: BaseException) -> bool:
    """Whether SQLite raised ``exc`` because the file is damaged (not because it cannot be written or is busy)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in _CORRUPT
    return isinstance(exc, sqlite3.DatabaseError) and ("malformed" in str(exc) or "not a database" in str(exc))


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return where + (exc.strerror or str(exc)).lower()
    return str(exc)


def cache_key(identity: str, request: ChatRequest, repeat: int) -> str:
    """The key of one call: the model's identity (never its spec or credentials), the request, the repeat."""
    raw = f"identity={identity}\x00{request.fingerprint()}\x00{repeat}"
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[str, str, str, str, float, str | None]] = {}
        """Rows put but not committed yet (group commit), by key."""
        self._flush_on: asyncio.AbstractEventLoop | None = None
        """The event loop a flush is scheduled on (a loop closed before it ran is replaced by the next one)."""
        self._db: sqlite3.Connection | None = None
        self._file: tuple[int, int] | None = None
        """(device, inode) of the file this connection opened: a damaged file is moved aside only if it is still
        the one at ``path`` (another process may have moved it aside and started a new one already)."""
        self.problem: str | None = None
        """Why the cache is switched off in this process (None while it works)."""
        self.moved_aside: Path | None = None
        """Where this process moved a damaged cache file."""
        self._unreadable_warned = False
        with self._lock:
            try:
                self._open()
            except (sqlite3.Error, OSError) as exc:
                self._recover(exc)

    @property
    def usable(self) -> bool:
        """Whether responses are looked up and stored (False once the cache is switched off)."""
        return self._db is not None

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db = db
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(f"PRAGMA wal_autocheckpoint={CHECKPOINT_PAGES}")
        db.executescript(_SCHEMA)
        columns = {row[1] for row in db.execute("PRAGMA table_info(responses)")}
        if "identity" not in columns:  # a cache written before keys held the model identity
            db.execute("ALTER TABLE responses ADD COLUMN identity TEXT")
        stat = self.path.stat()
        self._file = (stat.st_dev, stat.st_ino)

    def _close_db(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.close()

    def _recover(self, exc: BaseException) -> bool:
        """After ``exc`` from SQLite or the file system (the lock held): move a damaged file aside and start an
        empty cache, or switch the cache off; one warning line either way. True when a cache is open again."""
        self._close_db()
        if not is_damaged(exc):
            self._switch_off(exc)
            return False
        try:
            aside = self._move_aside()
            self._open()
        except (sqlite3.Error, OSError) as again:
            self._switch_off(again)
            return False
        if aside is not None:
            self.moved_aside = aside
            log.warning("the response cache %s is damaged (%s): moved it aside to %s and started an empty one; "
                        "`knowgap cache clear` deletes the damaged copy", self.path, _reason(exc), aside)
        return True

    def _move_aside(self) -> Path | None:
        """Rename the damaged file (and its write-ahead log) to ``<name>.damaged-<UTC time>``; None when the file
        at ``path`` is no longer the one this process opened (another process moved it aside already)."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        if self._file is not None and (stat.st_dev, stat.st_ino) != self._file:
            return None
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        aside = self.path.with_name(f"{self.path.name}{DAMAGED}{stamp}")
        if aside.exists():
            aside = aside.with_name(f"{aside.name}-{os.getpid()}")
        os.replace(self.path, aside)
        wal = self.path.with_name(self.path.name + "-wal")
        if wal.exists():
            os.replace(wal, aside.with_name(aside.name + "-wal"))
        self.path.with_name(self.path.name + "-shm").unlink(missing_ok=True)
        self._file = None
        return aside

    def _switch_off(self, exc: BaseException) -> None:
        if self.problem is None:
            self.problem = _reason(exc)
            log.warning("the response cache %s cannot be used (%s): going on without it, every call goes to the "
                        "model and none is cached", self.path, self.problem)
        self._close_db()
        self._pending.clear()

    def damaged_copies(self) -> list[Path]:
        """The damaged cache files moved aside next to this one (by this process or an earlier one)."""
        return sorted(p for p in self.path.parent.glob(f"{self.path.name}{DAMAGED}*")
                      if not p.name.endswith(("-wal", "-shm")))

    def get(self, key: str, *, run_id: str | None = None) -> ChatResponse | None:
        """A cached response; with ``run_id``, only one that this run itself stored. A lookup the file refuses is a
        miss (the cache moved aside or switched off, see the module's docstring)."""
        with self._lock:
            pending = self._pending.get(key)
            if pending is not None:  # it replaces any committed row of this key once committed
                return None if run_id is not None and pending[2] != run_id else \
                    ChatResponse.model_validate_json(pending[3])
            if self._db is None:
                return None
            try:
                if run_id is None:
                    row = self._db.execute("SELECT response FROM responses WHERE key=?", (key,)).fetchone()
                else:
                    row = self._db.execute("SELECT response FROM responses WHERE key=? AND run_id=?",
                                           (key, run_id)).fetchone()
            except sqlite3.Error as exc:
                if _UNDECODABLE in str(exc):  # the row's bytes are not UTF-8 any more: that row is damaged
                    self._unreadable(str(exc))
                else:
                    self._recover(exc)
                return None
        if row is None:
            return None
        try:
            return ChatResponse.model_validate_json(row[0])
        except ValidationError as exc:
            self._unreadable(str(exc.errors()[0].get("msg", exc)))
            return None

    def _unreadable(self, why: str) -> None:
        if not self._unreadable_warned:
            self._unreadable_warned = True
            log.warning("a response in the cache %s cannot be read (%s): it is asked of the model again",
                        self.path, why)

    def put(self, key: str, spec: str, run_id: str, response: ChatResponse, identity: str | None = None) -> None:
        """Store ``response`` under ``key``: committed with the others of this event-loop turn at the start of the
        next one (at once when no event loop runs in this thread)."""
        if self._db is None:  # switched off: nothing is stored
            return
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
        """Commit every row put so far, in one transaction. A file found damaged is moved aside and the rows go to
        the empty cache that replaces it; a cache that cannot be written is switched off and the rows are dropped
        (a missing entry is a miss, never a wrong answer). Either costs one warning line, never an exception."""
        with self._lock:
            if not self._pending:
                return
            rows = list(self._pending.values())
            self._pending.clear()
            for _ in range(2):  # a second time only into the empty cache that replaced a damaged one
                if self._db is None:
                    return
                try:
                    self._insert(self._db, rows)
                    return
                except sqlite3.Error as exc:
                    if not self._recover(exc):
                        return
            self._switch_off(sqlite3.DatabaseError("the new cache file was damaged at once"))  # pragma: no cover

    @staticmethod
    def _insert(db: sqlite3.Connection, rows: list[tuple[str, str, str, str, float, str | None]]) -> None:
        try:
            db.execute("BEGIN")
            db.executemany(_INSERT, rows)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
            raise

    def _scheduled_commit(self) -> None:
        self._flush_on = None
        self.commit_pending()

    def commit_pending(self) -> None:
        """:meth:`flush`, for callers that want it said that no failure comes out of it (a callback of the event
        loop, the group commit of a run)."""
        self.flush()

    def stats(self) -> dict[str, int]:
        """``entries`` and ``bytes`` (of the file and its write-ahead log); 0 entries when the cache is off."""
        self.flush()
        with self._lock:
            count = 0
            for _ in range(2):
                if self._db is None:
                    break
                try:
                    count = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
                    break
                except sqlite3.Error as exc:
                    if not self._recover(exc):
                        break
        size = sum(p.stat().st_size for p in (self.path, self.path.with_name(self.path.name + "-wal"))
                   if p.exists())
        return {"entries": int(count), "bytes": int(size)}

    def clear(self, spec: str | None = None) -> int:
        """Delete every entry (or those of one model spec); returns how many were removed. Without ``spec`` the
        damaged copies moved aside are deleted too. A damaged file is moved aside (then deleted, without ``spec``),
        its entries uncounted."""
        self.flush()
        with self._lock:
            removed = 0
            for _ in range(2):
                if self._db is None:
                    break
                try:
                    if spec is None:
                        cur = self._db.execute("DELETE FROM responses")
                    else:
                        cur = self._db.execute("DELETE FROM responses WHERE spec=?", (redact(spec),))
                    removed = int(cur.rowcount)
                    self._db.execute("VACUUM")
                    break
                except sqlite3.Error as exc:
                    if not self._recover(exc):
                        break
            if spec is None:
                for copy in self.damaged_copies():
                    for part in (copy, copy.with_name(copy.name + "-wal"), copy.with_name(copy.name + "-shm")):
                        part.unlink(missing_ok=True)
        return removed

    def close(self) -> None:
        try:
            self.flush()
        finally:
            with self._lock:
                self._close_db()
