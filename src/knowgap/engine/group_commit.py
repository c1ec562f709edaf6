"""Group commit of finished trials: the trials that finish in the same turn of the event loop are stored together.

A run with many calls in flight finishes many trials per turn of its event loop. Storing each on its own costs a
SQLite commit for its calls (:class:`~knowgap.engine.cache.ResponseCache`) and a write and flush of its line;
:class:`GroupCommit` does both once per turn for all of them, at the start of the next turn:

1. the response cache commits every call answered so far (so a stored trial's calls are always in the cache, as
   when each call was committed at once; a resumed run replays a trial whose line was cut from the cache);
2. the trials' lines are written with one write and flushed to the OS;
3. only then does :meth:`GroupCommit.add` return to the worker that finished the trial, which counts it done
   (the progress bar) and takes its next trial.

So nothing counts a trial done before its line is flushed, and a worker has at most one trial not yet stored
(the one it is running, or the one waiting for the flush, never both): a SIGKILL loses the trials in flight and
those of the last turn, which a resume runs again, as before. When the run stops early (Ctrl-C, a failure),
:meth:`GroupCommit.flush` stores the trials that finished and were still waiting.
"""

from __future__ import annotations

import asyncio

from knowgap.engine.cache import ResponseCache
from knowgap.engine.records import TrialRecord
from knowgap.engine.store import RunStore


class GroupCommit:
    """Finished trials waiting to be stored, stored together at the start of the next event-loop turn."""

    def __init__(self, store: RunStore, cache: ResponseCache | None) -> None:
        self.store = store
        self.cache = cache
        self._records: list[TrialRecord] = []
        self._stored: asyncio.Future[None] | None = None
        """Resolved when the waiting trials are stored (one future for all trials of a turn)."""

    async def add(self, record: TrialRecord) -> None:
        """Store ``record`` with the other trials finished in this turn; returns once its line is flushed (raises
        what storing raised: the file system refused the write)."""
        self._records.append(record)
        stored = self._stored
        if stored is None:
            loop = asyncio.get_running_loop()
            stored = self._stored = loop.create_future()
            loop.call_soon(self._commit)
        await asyncio.shield(stored)  # a cancelled worker must not cancel the other workers' wait

    def _commit(self) -> None:
        stored, self._stored = self._stored, None
        try:
            self.flush()
        except BaseException as exc:
            if stored is not None and not stored.done():
                stored.set_exception(exc)
                stored.exception()  # retrieved: when every waiting worker was cancelled, nobody else reads it
            return
        if stored is not None and not stored.done():
            stored.set_result(None)

    def flush(self) -> None:
        """Store the waiting trials now: the cache's calls committed first, then the trials' lines."""
        if self.cache is not None:
            self.cache.commit_pending()
        records, self._records = self._records, []
        if records:
            self.store.append_all(records)
