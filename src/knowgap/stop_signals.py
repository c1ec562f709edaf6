"""SIGTERM stops the command line the way Ctrl-C (SIGINT) does.

SIGTERM is what CI runners, ``timeout``, ``docker stop`` and a plain ``kill`` send. Python's default for it is to
die on the spot: no message, exit 143, a run's manifest left saying ``running``. Handled as SIGINT, a run stops
as after Ctrl-C: the trials that finished are stored, the manifest says ``interrupted``, the resume command is
printed and the exit code is 130 (docs/reports.md).

The handler hands the signal to whatever handles SIGINT at that moment: inside ``asyncio.run`` that is asyncio's
handler, which cancels the running trials (a second signal raises at once, as a second Ctrl-C does); elsewhere
Python's own, which raises :class:`KeyboardInterrupt`. Where SIGINT is ignored (a job started with ``&`` by a
non-interactive shell ignores it), SIGTERM raises :class:`KeyboardInterrupt` itself.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
        return
    raise KeyboardInterrupt


def handle_sigterm_as_sigint() -> None:
    """From now on SIGTERM does what SIGINT does (only the main thread can set a handler; elsewhere a no-op)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
