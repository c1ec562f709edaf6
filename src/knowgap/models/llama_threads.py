"""How many threads the in-process llama.cpp model uses: ``KNOWGAP_N_THREADS`` when set, else one per core this
process may run on that the current load leaves free.

llama.cpp runs each matrix step in a team of threads that wait for each other at every step (spinning). When other
work holds one of the cores, the whole team waits for the thread that shares it: on this project's 2-core machine,
busy with other jobs, 2 threads made calls 2-5x slower than 1. So the choice counts the cores the process may use
(``os.sched_getaffinity``), the share of the 1-minute load average that falls on them (``os.getloadavg``, spread
evenly over all the machine's cores), and takes a thread for each core at least :data:`FREE_FOR_A_THREAD` free,
at least one. The same number is used for prompt processing (llama-cpp-python's ``n_threads_batch`` would
otherwise take every core, ``KNOWGAP_N_THREADS`` or not).

The choice is made once, when the model loads (no timed trial: nothing is measured, it costs nothing), and is
shown in the run manifest's model description (``threads``, ``threads_why``) and in a log line. A load that
changes during a long run is not followed: set ``KNOWGAP_N_THREADS`` to fix the number.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection
from typing import NamedTuple

from knowgap.models.errors import ModelUnavailableError

ENV = "KNOWGAP_N_THREADS"
FREE_FOR_A_THREAD = 0.75
"""How free (1 - its share of the load) a core must be to get a thread: a core busy a quarter of the time already
stalls a spinning team often enough that one thread fewer is the safer side (one thread too few costs at most
1/n of the speed; one too many cost 2-5x on the machine this was measured on)."""


class ThreadChoice(NamedTuple):
    threads: int
    why: str


def choose_threads(cores: Collection[int] | int, load: float | None, machine_cores: int,
                   setting: str | None = None) -> ThreadChoice:
    """The threads for llama.cpp and why: ``setting`` (the ``KNOWGAP_N_THREADS`` value) when given; else from
    ``cores`` (the CPUs this process may use, or their count), ``load`` (the 1-minute load average, None when
    unknown) and ``machine_cores`` (all of the machine's CPUs, which the load average is spread over)."""
    if setting is not None and setting.strip():
        try:
            threads = int(setting)
        except ValueError:
            threads = 0
        if threads < 1:
            raise ModelUnavailableError(f"{ENV}={setting!r}: expected a whole number of threads, 1 or more")
        return ThreadChoice(threads, f"{ENV}={threads}")
    usable = cores if isinstance(cores, int) else len(cores)
    usable = max(1, usable)
    if load is None:
        return ThreadChoice(usable, f"{usable} usable cores, load unknown")
    busy = load * usable / max(machine_cores, usable)
    free = max(0.0, usable - busy)
    threads = max(1, min(usable, math.floor(free + 1 - FREE_FOR_A_THREAD)))
    return ThreadChoice(threads, f"{usable} usable cores, load average {load:.2f} "
                                 f"(~{min(busy, usable):.2f} of them busy): {threads} "
                                 f"thread{'s' if threads > 1 else ''}")


def current_choice() -> ThreadChoice:
    """:func:`choose_threads` for this process now (its CPU affinity, the machine's load, ``KNOWGAP_N_THREADS``)."""
    machine = os.cpu_count() or 1
    try:
        cores: Collection[int] | int = os.sched_getaffinity(0)
    except (AttributeError, OSError):  # not on macOS or Windows
        cores = machine
    try:
        load: float | None = os.getloadavg()[0]
    except (AttributeError, OSError):  # not on Windows
        load = None
    return choose_threads(cores, load, machine, os.environ.get(ENV))
