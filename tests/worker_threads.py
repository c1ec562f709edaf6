"""The native thread teams of a test worker under pytest-xdist (used by ``tests/conftest.py``)."""

from __future__ import annotations

from collections.abc import MutableMapping


def share_cores_among_workers(environ: MutableMapping[str, str], cores: int) -> int | None:
    """Under pytest-xdist, give each worker its share of the cores for the native thread teams: llama.cpp
    (``KNOWGAP_N_THREADS``) and the OpenMP engine of the embeddings (``OMP_NUM_THREADS``). Both teams spin-wait for
    each other at every step, so two workers each running a 2-thread team on 2 cores made their steps 2-3x slower
    than one thread each (measured 2026-12-06: the 0.5B pack's 64-token answer 12.4 s vs 7.6 s, 30 factuality
    answers 28 s vs 16 s, beside one busy core). A value the user set is kept. Returns the share set, or None."""
    workers = int(environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if workers < 2:
        return None
    share = max(1, cores // workers)
    for name in ("KNOWGAP_N_THREADS", "OMP_NUM_THREADS"):
        environ.setdefault(name, str(share))
    return share
