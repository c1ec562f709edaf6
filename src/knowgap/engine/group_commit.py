"""Group commit of finished trials: the trials that finish in the same turn of the event loop are stored together.

A run with many calls in flight finishes many trials per turn of its event loop. Storing each on its own costs a
SQLite commit for its calls (:class:`~knowgap.engine.cache.ResponseCache`) and a write and flush of its line;
:class:`GroupCommit` does both once for all of them, at the start of the next turn (or at once when
``MAX_WAITING`` trials wait):

1. the response cache commits every call answered so far (so a stored trial's calls are always in the cache, as
   when each call was committed at once; a resumed run replays a trial whose line was cut from the cache);
2. the trials' lines are written with one write and flushed to the OS (and fsynced when ``SYNC_EVERY_S`` has passed
   since the last fsync, :mod:`knowgap.engine.store`);
3. only then is each trial counted done (``on_stored``: the progress bar).

The worker that finished a trial does not wait for step 2: it takes its next trial at once. (Waiting made the
finished trials' objects die in one burst and the next trials' be born in another, which ran the garbage
collector's young generation 4 times as often and promoted the calls in flight into full collections: 0.03-0.08
ms a trial at 256 in flight.) So a SIGKILL loses the trials in flight and those finished but not yet stored (at
most ``MAX_WAITING``, at most one per worker besides the one it runs), which a resume runs again; nothing counts
a trial done before its line is flushed. A waiting trial is held as its line, not its record. When the run stops
early (Ctrl-C, a failure), :meth:`GroupCommit.flush` stores the trials that finished and were still waiting; a
write the file system refused is raised to the next worker that finishes a trial, and by
:meth:`GroupCommit.flush`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from knowgap.engine.cache import ResponseCache
from knowgap.engine.records import TrialRecord
from knowgap.engine.store import RunStore

MAX_WAITING = 32
"""Trials stored at once, without waiting for the next turn, when this many wait (bounds the trials a crash can
lose: at C = 256 one turn finished a median 117 trials and held the first for 45 ms)."""


class GroupCommit:
    """Finished trials waiting to be stored, stored together at the start of the next event-loop turn (or at once
    when ``MAX_WAITING`` wait)."""

    def __init__(self, store: RunStore, cache: ResponseCache | None,
                 on_stored: Callable[[bool], None] | None = None) -> None:
        self.store = store
        self.cache = cache
        self.on_stored = on_stored
        """Called once per trial after its line is flushed, with whether the trial errored."""
        self._lines: list[str] = []
        self._errors: list[bool] = []
        self._scheduled = False
        self._failed: Exception | None = None

    def add(self, record: TrialRecord) -> None:
        """Store ``record`` with the other trials finished in this turn (at the start of the next one); raises
        what storing an earlier turn's trials raised."""
        if self._failed is not None:
            raise self._failed
        self._lines.append(self.store.line(record))
        self._errors.append(record.status != "ok")
        if len(self._lines) >= MAX_WAITING:
            self.flush()
        elif not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._commit)

    def _commit(self) -> None:
        self._scheduled = False
        try:
            self.flush()
        except Exception as exc:  # a callback of the event loop: the next worker to add a trial raises it
            self._failed = exc

    def flush(self) -> None:
        """Store the waiting trials now: the cache's calls committed first, then the trials' lines."""
        if self._failed is not None:
            raise self._failed
        if self.cache is not None:
            self.cache.commit_pending()
        lines, self._lines = self._lines, []
        errors, self._errors = self._errors, []
        if not lines:
            return
        try:
            self.store.append_lines(lines)
        except Exception as exc:
            self._failed = exc
            raise
        if self.on_stored is not None:
            for error in errors:
                self.on_stored(error)
