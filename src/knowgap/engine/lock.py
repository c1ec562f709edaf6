"""The run lock: one writer per run folder at a time, and a way to tell a live run from a dead one.

A run that writes (a new run, or a resume) holds an exclusive ``flock`` on ``<run>/run.lock`` for the whole
time it writes, and records in the file who holds it (pid, host, start time). A second writer finds the
lock taken and stops with a message naming the holder, before any model call. The kernel drops the lock when
its holder dies, even by SIGKILL, so a manifest that still says ``running`` while nobody holds the lock
belongs to a dead run: it is shown as ``interrupted``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from pathlib import Path
from typing import IO

from knowgap.engine.records import utcnow
from knowgap.errors import KnowgapError

LOCK = "run.lock"
_TRIES = 10


class RunLocked(KnowgapError):
    """Another process is writing this run."""


def _holder(text: str) -> str:
    try:
        info = json.loads(text)
        return f"pid {info['pid']} on {info['host']} since {info['started_at']}"
    except (ValueError, KeyError, TypeError):
        return "another process"


class RunLock:
    """An exclusive lock on one run folder, held from ``acquire`` until ``release``."""

    def __init__(self, run_path: Path) -> None:
        self.file = run_path / LOCK
        self._fh: IO[str] | None = None

    def acquire(self) -> None:
        fh = self.file.open("a+", encoding="utf-8")
        try:
            self._take(fh)
        except BlockingIOError:
            fh.seek(0)
            holder = _holder(fh.read())
            fh.close()
            raise RunLocked(f"run {self.file.parent.name} is being written by {holder}; wait for it to finish "
                            "or stop it, then resume") from None
        except BaseException:
            fh.close()
            raise
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started_at": utcnow()}) + "\n")
        fh.flush()
        self._fh = fh

    @staticmethod
    def _take(fh: IO[str]) -> None:
        """The exclusive lock, retried for a moment: a reader checking ``writer_alive`` holds a shared lock
        for a few microseconds, which must not turn a writer away."""
        for _ in range(_TRIES - 1):
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                time.sleep(0.05)
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def release(self) -> None:
        if self._fh is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None

    @property
    def held_here(self) -> bool:
        return self._fh is not None


def writer_alive(run_path: Path) -> bool:
    """Whether some process holds the run's lock now (runs written before the lock existed: no)."""
    file = run_path / LOCK
    try:
        fh = file.open("rb")
    except OSError:
        return False
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        fcntl.flock(fh, fcntl.LOCK_UN)
        return False
