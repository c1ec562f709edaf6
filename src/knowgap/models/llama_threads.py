"""How many threads the in-process llama.cpp model uses: ``KNOWGAP_N_THREADS`` when set, else one per core this
process may run on that the current load leaves free.

llama.cpp runs each matrix step in a team of threads that wait for each other at every step (spinning). When other
work holds one of the cores, the whole team waits for the thread that shares it: on this project's 2-core machine,
busy with other jobs, 2 threads made calls 2-5x slower than 1. So the choice counts the cores the process may use
(``os.sched_getaffinity``), the share of the machine's busy cores that falls on them (measured now from
``/proc/stat`` over a quarter of a second; the 1-minute load average, ``os.getloadavg``, where that cannot be read;
spread evenly over all the machine's cores), and takes a thread for each core at least :data:`FREE_FOR_A_THREAD` free,
at least one. The same number is used for prompt processing (llama-cpp-python's ``n_threads_batch`` would
otherwise take every core, ``KNOWGAP_N_THREADS`` or not).

The choice is made once, when the model loads (it costs the quarter-second sample, no timed trial), and is
shown in the run manifest's model description (``threads``, ``threads_why``) and in a log line. A load that
changes during a long run is not followed: set ``KNOWGAP_N_THREADS`` to fix the number.
"""

from __future__ import annotations

import math
import os
import time
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
                   setting: str | None = None, load_name: str = "load average") -> ThreadChoice:
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
    return ThreadChoice(threads, f"{usable} usable cores, {load_name} {load:.2f} "
                                 f"(~{min(busy, usable):.2f} of them busy): {threads} "
                                 f"thread{'s' if threads > 1 else ''}")


def current_choice() -> ThreadChoice:
    """:func:`choose_threads` for this process now (its CPU affinity, the machine's load, ``KNOWGAP_N_THREADS``)."""
    machine = os.cpu_count() or 1
    try:
        cores: Collection[int] | int = os.sched_getaffinity(0)
    except (AttributeError, OSError):  # not on macOS or Windows
        cores = machine
    if os.environ.get(ENV, "").strip():
        return choose_threads(cores, None, machine, os.environ[ENV])
    busy = busy_cores_now()
    if busy is not None:
        return choose_threads(cores, busy, machine, load_name=f"busy cores now (over {SAMPLE_S:.2f} s)")
    try:
        load: float | None = os.getloadavg()[0]
    except (AttributeError, OSError):  # not on Windows
        load = None
    return choose_threads(cores, load, machine)


SAMPLE_S = 0.25
"""How long :func:`busy_cores_now` watches the machine's CPU time."""


def _cpu_times(stat: str) -> tuple[float, float] | None:
    """(idle, total) jiffies of the machine from the text of ``/proc/stat``; None when it has no ``cpu`` line."""
    for line in stat.splitlines():
        if line.startswith("cpu "):
            values = [float(v) for v in line.split()[1:]]
            idle = values[3] + (values[4] if len(values) > 4 else 0.0)  # idle + iowait
            return idle, sum(values[:8])  # guest time is already counted in user time
    return None


def busy_cores(before: str, after: str, machine_cores: int) -> float | None:
    """How many of the machine's cores were busy between two readings of ``/proc/stat``."""
    first, second = _cpu_times(before), _cpu_times(after)
    if first is None or second is None or second[1] <= first[1]:
        return None
    idle_share = (second[0] - first[0]) / (second[1] - first[1])
    return max(0.0, 1.0 - idle_share) * machine_cores


def busy_cores_now(sample_s: float = SAMPLE_S) -> float | None:
    """The machine's busy cores over the next ``sample_s`` seconds (the load now, where the 1-minute load average
    still holds, say, the build that just ended); None where ``/proc/stat`` cannot be read (not Linux)."""
    try:
        with open("/proc/stat", encoding="ascii") as file:
            before = file.read()
        time.sleep(sample_s)
        with open("/proc/stat", encoding="ascii") as file:
            after = file.read()
    except OSError:
        return None
    return busy_cores(before, after, os.cpu_count() or 1)
