"""Response cache: content-addressed on (model spec, whole request, repeat index), in SQLite.

Every response is written as soon as it arrives, tagged with the run that asked for it, so the cache is also
the run's log of finished calls: a run resumed after a crash finds the calls that finished before the crash
here, even with ``--no-cache`` (which only stops a run from reading other runs' entries).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from pathlib import Path

from knowgap.models.types import ChatRequest, ChatResponse

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    run_id TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
);
"""


def cache_key(spec: str, request: ChatRequest, repeat: int) -> str:
    raw = f"{spec}\x00{request.fingerprint()}\x00{repeat}"
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def get(self, key: str, *, run_id: str | None = None) -> ChatResponse | None:
        """A cached response; with ``run_id``, only one that this run itself stored."""
        with self._lock:
            if run_id is None:
                row = self._db.execute("SELECT response FROM responses WHERE key=?", (key,)).fetchone()
            else:
                row = self._db.execute("SELECT response FROM responses WHERE key=? AND run_id=?",
                                       (key, run_id)).fetchone()
        if row is None:
            return None
        return ChatResponse.model_validate_json(row[0])

    def put(self, key: str, spec: str, run_id: str, response: ChatResponse) -> None:
        data = response.model_dump_json()
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses VALUES (?,?,?,?,?)",
                             (key, spec, run_id, data, time.time()))

    def stats(self) -> dict[str, int]:
        with self._lock:
            count = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        size = self.path.stat().st_size if self.path.exists() else 0
        return {"entries": int(count), "bytes": int(size)}

    def clear(self, spec: str | None = None) -> int:
        """Delete every entry (or those of one model spec); returns how many were removed."""
        with self._lock:
            if spec is None:
                cur = self._db.execute("DELETE FROM responses")
            else:
                cur = self._db.execute("DELETE FROM responses WHERE spec=?", (spec,))
            self._db.execute("VACUUM")
        return int(cur.rowcount)

    def close(self) -> None:
        with self._lock:
            self._db.close()
