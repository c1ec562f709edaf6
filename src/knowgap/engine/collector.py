"""Fewer garbage-collector passes while a run's trials execute.

A trial allocates a few hundred container objects (pydantic records, aiohttp's request and response objects, the
coroutines of its calls). With CPython's default first threshold (700 allocations) the collector's young pass ran
about 64 times per 1,000 trials of the HTTP benchmark (C = 256) and, through it, the older generations' passes
over every live object, 0.05 ms a trial: about a tenth of knowgap's CPU per trial. The trials' objects are almost
never in cycles (they die by reference counting), so a larger first threshold collects the same garbage with
about a sixteenth of the passes. ``benchmarks/http_concurrency.py`` reports each side's collector time per
request (``gc_ms_per_request``).

The threshold is process-wide: it is raised while at least one run executes (runs in threads, as in
``knowgap serve``, share one raise) and put back as it was when the last one ends. A collector that is off, or a
first threshold already above this one, is left alone.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

RUN_THRESHOLD = 10_000
"""The collector's first threshold while trials execute (CPython's default: 700)."""

_lock = threading.Lock()
_active = 0
_saved: tuple[int, int, int] | None = None


@contextmanager
def fewer_collections(threshold: int = RUN_THRESHOLD) -> Iterator[None]:
    """Raise the collector's first threshold to ``threshold`` for the block, then put back what was there."""
    global _active, _saved
    with _lock:
        if _active == 0:
            current = gc.get_threshold()
            _saved = None
            if gc.isenabled() and 0 < current[0] < threshold:
                _saved = (current[0], current[1], current[2])
                gc.set_threshold(threshold, current[1], current[2])
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None
