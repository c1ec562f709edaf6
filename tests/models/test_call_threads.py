"""The worker threads of a sync ``python:`` function: a call abandoned at its time-out leaves a daemon thread that
nothing waits for, counted until the function returns; past the limit no new call starts."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from knowgap.models.call_threads import CallThreads, FunctionExited, TooManyAbandoned


def test_an_abandoned_call_holds_neither_the_loop_nor_the_limit_for_ever() -> None:
    release = threading.Event()
    threads = CallThreads("test-threads", max_abandoned=2)

    def blocks(tag: str) -> str:
        release.wait()
        return tag

    async def abandon_two_then_refused() -> None:
        for _ in range(2):
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.05):
                    await threads.run(blocks, "late")
        assert threads.abandoned == 2
        with pytest.raises(TooManyAbandoned) as refused:
            await threads.run(blocks, "never started")
        assert (refused.value.count, refused.value.limit) == (2, 2)

    started = time.monotonic()
    asyncio.run(abandon_two_then_refused())  # asyncio.run returns with the two threads still blocked
    assert time.monotonic() - started < 30
    stuck = [t for t in threading.enumerate() if t.name.startswith("test-threads-")]
    assert len(stuck) == 2 and all(t.daemon and t.is_alive() for t in stuck), "daemon threads, not joined"

    release.set()  # the function returns at last: its threads count no more, and serve the next calls
    deadline = time.monotonic() + 10
    while threads.abandoned and time.monotonic() < deadline:
        time.sleep(0.01)
    assert threads.abandoned == 0 and threads.abandoned_ever == 2

    async def calls_again() -> list[str]:
        return list(await asyncio.gather(*(threads.run(blocks, f"call {n}") for n in range(2))))

    assert asyncio.run(calls_again()) == ["call 0", "call 1"]
    assert len([t for t in threading.enumerate() if t.name.startswith("test-threads-")]) == 2, "threads reused"


def test_what_the_function_raises_reaches_the_caller() -> None:
    threads = CallThreads("test-raises")

    def fails(what: BaseException) -> None:
        raise what

    async def go() -> None:
        with pytest.raises(ValueError, match="bad input"):
            await threads.run(fails, ValueError("bad input"))
        with pytest.raises(FunctionExited, match="SystemExit: 2") as exited:
            await threads.run(fails, SystemExit(2))
        assert isinstance(exited.value.original, SystemExit)

    asyncio.run(go())


def test_an_idle_thread_ends() -> None:
    threads = CallThreads("test-idle", idle_s=0.05)

    async def one() -> int:
        return int(await threads.run(lambda: 7))

    assert asyncio.run(one()) == 7
    deadline = time.monotonic() + 10
    while any(t.name.startswith("test-idle-") for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(t.name.startswith("test-idle-") for t in threading.enumerate())
    assert asyncio.run(one()) == 7, "a new thread is started when none is idle"
