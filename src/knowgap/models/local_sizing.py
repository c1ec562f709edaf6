"""How many calls an embedded llama.cpp model decodes at once, and the memory their KV caches take.

``KNOWGAP_PARALLEL`` sets the number of parallel sequences (``1`` or ``off``: one call at a time, single-stream,
as before batching); unset, :data:`DEFAULT_PARALLEL`. Every sequence has a KV cache of the model's whole context,
``n_ctx`` tokens (``KNOWGAP_N_CTX``, prompt and answer), as a single-stream call has, so a call's limits do not
depend on the mode. When ``parallel x n_ctx`` tokens of KV cache would take more than :data:`KV_SHARE_OF_FREE` of
the memory available now, fewer sequences are decoded at once (at least one).

The choice is made when the model loads, printed once, and shown in the run manifest's model description
(``decoding``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from knowgap.models.errors import ModelUnavailableError

PARALLEL_ENV = "KNOWGAP_PARALLEL"
DEFAULT_PARALLEL = 4
"""Measured on 2 cores (issue 40): 4 sequences give the 0.5B pack 2.7x and the 1.5B 1.8x the tokens/s of one;
8 adds little on the 0.5B and nothing on the 1.5B."""
MAX_PARALLEL = 64
KV_SHARE_OF_FREE = 0.25
"""The share of the memory available at load time the shared KV cache may take."""
KV_ROUND = 256


def parallel_setting(value: str | None) -> int | None:
    """The number of parallel sequences ``KNOWGAP_PARALLEL`` asks for: None when unset (the default), 1 for
    ``1`` / ``off`` (single-stream)."""
    if value is None or not value.strip():
        return None
    text = value.strip().lower()
    if text in {"off", "no", "false", "0"}:
        return 1
    try:
        number = int(text)
    except ValueError:
        number = -1
    if not 1 <= number <= MAX_PARALLEL:
        raise ModelUnavailableError(f"{PARALLEL_ENV}={value!r}: expected a number of parallel sequences from 1 "
                                    f"to {MAX_PARALLEL}, or 'off' (one call at a time)")
    return number


class BatchSizing(NamedTuple):
    parallel: int
    """Calls decoded at once (1 from ``KNOWGAP_PARALLEL=1``: single-stream)."""
    kv_tokens: int
    """Tokens the KV caches hold, over all sequences."""
    why: str


def kv_bytes_per_token(metadata: Mapping[str, str]) -> int | None:
    """Bytes of KV cache per token (f16 keys and values) from a GGUF's metadata; None when it does not say."""
    arch = metadata.get("general.architecture")
    try:
        layers = int(metadata[f"{arch}.block_count"])
        heads = int(metadata[f"{arch}.attention.head_count"])
        kv_heads = int(metadata.get(f"{arch}.attention.head_count_kv", heads))
        embd = int(metadata[f"{arch}.embedding_length"])
        key = int(metadata.get(f"{arch}.attention.key_length", embd // heads))
        value = int(metadata.get(f"{arch}.attention.value_length", embd // heads))
    except (KeyError, ValueError, ZeroDivisionError):
        return None
    return layers * kv_heads * (key + value) * 2


def available_memory() -> int | None:
    """Bytes of memory available now (``MemAvailable`` of ``/proc/meminfo``); None where it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as file:
            for line in file:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def choose_sizing(n_ctx: int, *, setting: int | None, bytes_per_token: int | None,
                  available: int | None) -> BatchSizing:
    """Parallel sequences for a model of ``bytes_per_token`` KV bytes per token with ``n_ctx`` tokens per call,
    ``available`` bytes of memory free and ``setting`` (:func:`parallel_setting`)."""
    parallel = DEFAULT_PARALLEL if setting is None else setting
    source = f"{PARALLEL_ENV}={setting}" if setting is not None else f"default {DEFAULT_PARALLEL}"
    if parallel == 1:
        return BatchSizing(1, n_ctx, f"{source}: single-stream")
    why = f"{source} sequences of up to {n_ctx} tokens"
    if bytes_per_token and available:
        budget = int(available * KV_SHARE_OF_FREE)
        fits = max(1, budget // (n_ctx * bytes_per_token))
        if fits < parallel:
            why += (f", cut to {fits}: {KV_SHARE_OF_FREE:.0%} of the {available >> 20} MiB available holds "
                    f"{fits} KV caches of {n_ctx * bytes_per_token >> 20} MiB")
            parallel = fits
        else:
            why += (f"; KV caches {parallel * n_ctx * bytes_per_token >> 20} MiB "
                    f"(of {available >> 20} MiB available)")
    return BatchSizing(parallel, parallel * n_ctx, why)
