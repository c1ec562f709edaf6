"""Response cache: content-addressed on (model identity, whole request, repeat index), in SQLite.

The key holds the model's identity (``ChatModel.identity``: the sha256 of a GGUF or scripted file, the
endpoint and model name of an HTTP provider), not the spec string that named it: an edited scripted file or
a replaced GGUF is a miss, and the same relative path in two folders names two models. The ``spec`` column
(redacted) is only for people (``knowgap cache clear --model``).

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
from knowgap.redaction import redact

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
        self._db.executescript(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(responses)")}
        if "identity" not in columns:  # a cache written before keys held the model identity
            self._db.execute("ALTER TABLE responses ADD COLUMN identity TEXT")

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

    def put(self, key: str, spec: str, run_id: str, response: ChatResponse, identity: str | None = None) -> None:
        data = redact(response.model_dump_json())
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses (key, spec, run_id, response, created, identity) "
                             "VALUES (?,?,?,?,?,?)", (key, redact(spec), run_id, data, time.time(), identity))

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
                cur = self._db.execute("DELETE FROM responses WHERE spec=?", (redact(spec),))
            self._db.execute("VACUUM")
        return int(cur.rowcount)

    def close(self) -> None:
        with self._lock:
            self._db.close()
