"""Worker threads for blocking calls that a time-out may abandon: a sync ``python:`` function runs in one of them.

A thread cannot be stopped from outside. ``asyncio.to_thread`` (the loop's default executor) and any
``concurrent.futures.ThreadPoolExecutor`` are joined at shutdown: ``asyncio.run`` waits for the default
executor's threads, and ``concurrent.futures`` registers an exit hook that joins every pool's workers before the
interpreter exits. A function that never returns therefore held a run for ever, after its trials were already
written as timed out. These threads are daemon threads that nothing joins: a call the caller stops awaiting
(its time-out, a stop signal) is *abandoned*: its thread runs on, unwatched, until the function returns (the
thread then goes back to the idle ones) or the process exits (it is not waited for).

Threads are reused: an idle thread takes the next call, so a call costs no thread start; an idle thread ends
after :data:`IDLE_S`. Abandoned calls whose thread still runs are counted (``abandoned``): a function that hangs on
every input would otherwise leave one thread behind per attempt, so past ``max_abandoned`` of them
:meth:`CallThreads.run` refuses to start another (:class:`TooManyAbandoned`).
"""

from __future__ import annotations

import asyncio
import itertools
import queue
import threading
from collections.abc import Callable
from typing import Any

IDLE_S = 60.0
"""An idle worker thread ends after this long without a call."""

MAX_ABANDONED = 32
"""Abandoned calls whose thread still runs, at most, before no new call is started."""


class FunctionExited(Exception):
    """The function raised a BaseException that is not an Exception (``sys.exit()``, ``KeyboardInterrupt`` raised
    by the function itself): delivered as an ordinary exception, so it fails the call and not the caller."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(f"{type(original).__name__}: {original}" if str(original) else type(original).__name__)
        self.original = original


class TooManyAbandoned(Exception):
    """No call started: ``count`` earlier calls were abandoned and their threads still run (``limit`` or more)."""

    def __init__(self, count: int, limit: int) -> None:
        super().__init__(count, limit)
        self.count = count
        self.limit = limit


class _Job:
    __slots__ = ("function", "args", "loop", "future", "abandoned", "done")

    def __init__(self, function: Callable[..., Any], args: tuple[Any, ...], loop: asyncio.AbstractEventLoop,
                 future: asyncio.Future[Any]) -> None:
        self.function = function
        self.args = args
        self.loop = loop
        self.future = future
        self.abandoned = False
        self.done = False


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.done():  # the caller stopped waiting (cancelled) before the answer came
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


class CallThreads:
    """Daemon worker threads named ``name-N``; :meth:`run` calls a function in one of them."""

    def __init__(self, name: str, *, max_abandoned: int = MAX_ABANDONED, idle_s: float = IDLE_S) -> None:
        self.name = name
        self.max_abandoned = max_abandoned
        self.idle_s = idle_s
        self._lock = threading.Lock()
        self._idle: list[queue.SimpleQueue[_Job]] = []
        self._numbers = itertools.count(1)
        self.abandoned = 0
        """Calls given up on whose thread still runs the function."""
        self.abandoned_ever = 0
        """Calls given up on, in all."""

    async def run(self, function: Callable[..., Any], *args: Any) -> Any:
        """``function(*args)`` in a worker thread; its value, or what it raised (a BaseException that is not an
        Exception as :class:`FunctionExited`). Cancelling the await abandons the thread; raises
        :class:`TooManyAbandoned` without calling when ``max_abandoned`` abandoned threads still run."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        job = _Job(function, args, loop, future)
        with self._lock:
            if self.abandoned >= self.max_abandoned:
                raise TooManyAbandoned(self.abandoned, self.max_abandoned)
            inbox = self._idle.pop() if self._idle else None
        if inbox is None:
            inbox = queue.SimpleQueue()
            threading.Thread(target=self._work, args=(inbox,), name=f"{self.name}-{next(self._numbers)}",
                             daemon=True).start()
        inbox.put(job)
        try:
            return await future
        except asyncio.CancelledError:
            with self._lock:
                if not job.done:
                    job.abandoned = True
                    self.abandoned += 1
                    self.abandoned_ever += 1
            raise

    def _work(self, inbox: queue.SimpleQueue[_Job]) -> None:
        while True:
            try:
                job = inbox.get(timeout=self.idle_s)
            except queue.Empty:
                with self._lock:
                    if inbox in self._idle:  # else a caller took this thread just now: its call is on the way
                        self._idle.remove(inbox)
                        return
                continue
            value: Any = None
            error: BaseException | None = None
            try:
                value = job.function(*job.args)
            except Exception as exc:
                error = exc
            except BaseException as exc:  # noqa: BLE001 - sys.exit() in the function fails its call, not the run
                error = FunctionExited(exc)
            with self._lock:
                job.done = True
                if job.abandoned:
                    self.abandoned -= 1
                self._idle.append(inbox)
            try:
                job.loop.call_soon_threadsafe(_settle, job.future, value, error)
            except RuntimeError:  # the loop is closed: the caller is long gone
                pass
            del job, value, error
