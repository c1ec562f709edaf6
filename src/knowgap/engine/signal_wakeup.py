"""A stop signal wakes the event loop, whichever thread the kernel hands it to.

A signal sent to a process (Ctrl-C's SIGINT, ``kill``'s SIGTERM) goes to one of its threads that does not block it,
not necessarily the main thread. Python runs its handlers in the main thread only, when that thread next executes
Python code. A run's main thread sleeps in the event loop's ``select`` while every trial waits for a model; when the
signal lands on a worker thread (one blocked in a hung ``python:`` system, a model's call thread), nothing wakes the
loop and the run hangs instead of stopping (seen in CI: the run took no notice of SIGINT for 60 s).

:func:`signals_wake_loop` has the C-level handler write to a socket the loop watches (``signal.set_wakeup_fd``):
whatever thread takes the signal, the loop wakes, and the Python handler (asyncio's, which cancels the run, or
:mod:`knowgap.stop_signals`') runs at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
from collections.abc import Iterator


def _drain(sock: socket.socket) -> None:
    with contextlib.suppress(BlockingIOError, InterruptedError):
        while sock.recv(512):
            pass


@contextlib.contextmanager
def signals_wake_loop(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """While inside, a signal taken by any thread wakes ``loop`` (the running loop of the main thread). A no-op off
    the main thread (only it may set a wakeup fd), or when a wakeup fd is already set (``loop.add_signal_handler``
    sets one: the loop wakes already)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    try:
        previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    except ValueError:  # an interpreter without signals in this thread
        previous = -2
    if previous != -1:
        if previous >= 0:
            signal.set_wakeup_fd(previous)
        reader.close()
        writer.close()
        yield
        return
    loop.add_reader(reader.fileno(), _drain, reader)
    try:
        yield
    finally:
        signal.set_wakeup_fd(-1)
        loop.remove_reader(reader.fileno())
        reader.close()
        writer.close()
