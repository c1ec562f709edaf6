"""In-process llama.cpp provider (``local:qwen2.5-1.5b``, ``local:qwen2.5-0.5b``, ``local:PATH.gguf``).

One ``Llama`` object per GGUF file per process, shared by every provider that names it; a lock makes
concurrent requests to it safe (llama.cpp contexts are not re-entrant), and calls run in a worker thread
so the event loop keeps scheduling other models and writing results.

By default concurrent calls to one model are decoded together, as parallel sequences of a second llama.cpp
context on the same weights (:mod:`knowgap.models.local_batch`, sized by :mod:`knowgap.models.local_sizing`);
``KNOWGAP_PARALLEL=1`` (or ``off``) decodes one call at a time through llama-cpp-python's
``create_chat_completion``, as before. The mode is part of the model's identity (:meth:`LocalModel.identity`).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from knowgap.models.base import ChatModel
from knowgap.models.errors import ModelError, ModelUnavailableError, PermanentModelError
from knowgap.models.identity import gguf_identity, remembered_sha256
from knowgap.models.llama_threads import ThreadChoice, current_choice
from knowgap.models.local_batch import BatchedDecoder, Completion, Job, capture_completion
from knowgap.models.local_sizing import (
    PARALLEL_ENV,
    BatchSizing,
    available_memory,
    choose_sizing,
    kv_bytes_per_token,
    parallel_setting,
)
from knowgap.models.packs import PACKS, ensure_pack
from knowgap.models.types import ChatRequest, ChatResponse, TokenLogprob, TopLogprob, Usage

log = logging.getLogger("knowgap.models")
_LOADED: dict[str, tuple[Any, threading.Lock]] = {}
_THREADS: dict[str, ThreadChoice] = {}
"""The threads each loaded model runs with, and why (same keys as ``_LOADED``)."""
_DECODERS: dict[str, tuple[BatchedDecoder, BatchSizing]] = {}
"""The batch of each loaded model in batched mode, by ``_LOADED``'s key and the parallel setting."""
_LOAD_LOCK = threading.Lock()
_LLAMA_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="knowgap-llama")
DEFAULT_CTX = int(os.environ.get("KNOWGAP_N_CTX", "4096"))
# RAM for saved prompt states per loaded model (0 turns the prefix cache off).
PREFIX_CACHE_MB = int(os.environ.get("KNOWGAP_PREFIX_CACHE_MB", "1024"))


def prefix_cache(capacity_mb: int) -> Any:
    """A llama.cpp state cache keyed by token prefix, so a prompt that starts like an earlier one (a judge's
    long guideline, a knowledge base before its question) evaluates only the part that differs.

    llama-cpp-python reuses the KV cache only against the previous prompt; suites alternate target and judge
    calls on one model, which defeats that. This cache keeps the state after each call and restores the one
    with the longest common prefix. Saved states drop the logits rows: llama.cpp re-evaluates at least the
    last prompt token after a restore, so those rows are never read (and would cost n_batch x vocab floats,
    ~300 MB for Qwen, per entry).
    """
    from llama_cpp.llama_cache import LlamaRAMCache

    class _PrefixCache(LlamaRAMCache):
        def __setitem__(self, key: Any, value: Any) -> None:
            value.scores = value.scores[-1:].copy()
            super().__setitem__(key, value)

    return _PrefixCache(capacity_bytes=capacity_mb << 20)


def resolve_local_path(target: str) -> Path:
    """A pack name or a path to a .gguf file -> a verified local file path."""
    if target in PACKS:
        return ensure_pack(target)
    path = Path(target).expanduser()
    if path.suffix.lower() == ".gguf" or path.exists():
        if not path.exists():
            raise ModelUnavailableError(f"local model file not found: {path}")
        return path
    known = ", ".join(f"local:{name}" for name in PACKS)
    raise ModelUnavailableError(f"unknown local model '{target}': use one of {known} or local:PATH.gguf")


def _import_llama() -> Any:
    try:
        from llama_cpp import Llama
    except ImportError:
        raise ModelUnavailableError(
            "llama-cpp-python is not installed: run pip install 'knowgap[local]'") from None
    return Llama


def amx_enabled() -> bool:
    """True when this llama.cpp build uses Intel AMX kernels."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info()
    return b"AMX_INT8 = 1" in (info if isinstance(info, bytes) else str(info).encode())


@contextlib.contextmanager
def _without_amx_buffers() -> Iterator[None]:
    """Load with llama.cpp's extra (AMX repacking) buffer types off when the build has AMX.

    A llama.cpp built with -march=native on a CPU that reports AMX crashes (SIGSEGV in
    ggml_backend_amx_mul_mat) where the OS or hypervisor does not grant AMX tile state, as on the machines
    this project runs on. The Makefile builds llama-cpp-python without AMX; this guards other installs.
    """
    import llama_cpp
    import llama_cpp.llama as llama_module

    if not amx_enabled() or os.environ.get("KNOWGAP_ALLOW_AMX") == "1":
        yield
        return
    original = llama_cpp.llama_model_default_params

    def params_without_extra_buffers() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    llama_module.llama_cpp.llama_model_default_params = params_without_extra_buffers
    try:
        yield
    finally:
        llama_module.llama_cpp.llama_model_default_params = original


def _key(path: Path, n_ctx: int) -> str:
    return f"{path.resolve()}::{n_ctx}"


def chat_kwargs(request: ChatRequest) -> dict[str, Any]:
    """The arguments of llama-cpp-python's ``create_chat_completion`` for ``request``."""
    kwargs: dict[str, Any] = {
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
    }
    if request.seed is not None:
        kwargs["seed"] = request.seed
    if request.stop:
        kwargs["stop"] = request.stop
    if request.json_schema is not None:
        kwargs["response_format"] = {"type": "json_object", "schema": request.json_schema}
    return kwargs


def load_llama(path: Path, n_ctx: int = DEFAULT_CTX) -> tuple[Any, threading.Lock]:
    """Load (once per process) the llama.cpp model at ``path``, with threads chosen now
    (:mod:`knowgap.models.llama_threads`)."""
    key = _key(path, n_ctx)
    with _LOAD_LOCK:
        if key not in _LOADED:
            llama_cls = _import_llama()
            choice = current_choice()
            log.info("llama.cpp threads for %s: %d (%s)", path.name, choice.threads, choice.why)
            try:
                with _without_amx_buffers():
                    llm = llama_cls(model_path=str(path), n_ctx=n_ctx, n_threads=choice.threads,
                                    n_threads_batch=choice.threads, verbose=False)
            except Exception as exc:  # llama.cpp raises ValueError/RuntimeError on a bad file
                raise ModelUnavailableError(f"llama.cpp could not load {path}: {exc}") from exc
            if PREFIX_CACHE_MB > 0:
                llm.set_cache(prefix_cache(PREFIX_CACHE_MB))
            _LOADED[key] = (llm, threading.Lock())
            _THREADS[key] = choice
        return _LOADED[key]


def load_decoder(path: Path, n_ctx: int = DEFAULT_CTX, setting: int | None = None) -> tuple[BatchedDecoder,
                                                                                              BatchSizing]:
    """The batch of the model at ``path`` (made once per process, on the llama thread: call it there), sized by
    :func:`~knowgap.models.local_sizing.choose_sizing` and printed once."""
    llm, _lock = load_llama(path, n_ctx)
    key = f"{_key(path, n_ctx)}::{setting}"
    with _LOAD_LOCK:
        if key not in _DECODERS:
            sizing = choose_sizing(n_ctx, setting=setting, bytes_per_token=kv_bytes_per_token(llm.metadata),
                                   available=available_memory())
            try:
                decoder = BatchedDecoder(llm, _LLAMA_THREAD, parallel=sizing.parallel, n_ctx=n_ctx)
            except Exception as exc:  # llama.cpp could not make the context (memory)
                raise ModelUnavailableError(f"llama.cpp could not make a batch for {path.name} ({sizing.why}): "
                                            f"{exc}; set {PARALLEL_ENV}=1 to decode one call at a time") from exc
            _DECODERS[key] = (decoder, sizing)
            message = (f"knowgap: {path.name}: batched decoding, {sizing.why} "
                       f"({PARALLEL_ENV}=1 decodes one call at a time)")
            log.info("%s", message)
            print(message, file=sys.stderr, flush=True)
        return _DECODERS[key]


@atexit.register
def _free_models() -> None:
    """Free loaded models before the interpreter tears down llama_cpp's module globals; left to ``__del__``
    at exit, llama-cpp-python prints a TypeError traceback ('NoneType' object is not callable). A model's batch
    goes first (its context uses the model's weights)."""
    with _LOAD_LOCK:
        for decoder, _sizing in _DECODERS.values():
            decoder.close()
        _DECODERS.clear()
        for llm, lock in _LOADED.values():
            with lock:
                close = getattr(llm, "close", None)
                if callable(close):
                    close()
        _LOADED.clear()


class _LogprobRecorder:
    """A llama.cpp logits processor that notes, at each generated position, the ``top`` most likely tokens, and
    the log-probability of the token chosen there (read at the next position, where it is the last input).

    llama-cpp-python returns logprobs only for a model loaded with ``logits_all=True``, which keeps a
    context x vocabulary float matrix (2.5 GB for Qwen at 4096 tokens); this reads only the row being sampled."""

    def __init__(self, llm: Any, top: int) -> None:
        self.llm = llm
        self.top = top
        self.tops: list[list[TopLogprob]] = []
        self.chosen: list[tuple[str, float]] = []
        self._last: Any = None

    def __call__(self, input_ids: Any, logits: Any) -> Any:
        import numpy as np

        row = logits.astype(np.float64)
        peak = row.max()
        logp = row - (peak + np.log(np.exp(row - peak).sum()))
        if self._last is not None:
            token = int(input_ids[-1])
            self.chosen.append((self._text(token), float(self._last[token])))
        best = np.argpartition(-logp, self.top)[:self.top]
        best = best[np.argsort(-logp[best])]
        self.tops.append([TopLogprob(token=self._text(int(t)), logprob=float(logp[t])) for t in best])
        self._last = logp
        return logits

    def _text(self, token: int) -> str:
        return bytes(self.llm.detokenize([token])).decode("utf-8", errors="replace")

    def tokens(self, completion_tokens: int, greedy: bool) -> list[TokenLogprob]:
        """One entry per generated token whose choice was seen; the last position, which no later one follows, is
        added when it produced a token (not the end of generation) and sampling was greedy (its top token)."""
        out = [TokenLogprob(token=text, logprob=logp, top=top)
               for (text, logp), top in zip(self.chosen, self.tops, strict=False)]
        if greedy and len(out) < completion_tokens and len(self.tops) > len(out):
            top = self.tops[len(out)]
            out.append(TokenLogprob(token=top[0].token, logprob=top[0].logprob, top=top))
        return out


class LocalModel(ChatModel):
    default_concurrency = 1
    interruptible = False
    supports_logprobs = True

    def __init__(self, spec: str, target: str, n_ctx: int = DEFAULT_CTX, parallel: int | None = None) -> None:
        self.spec = spec
        self.target = target
        self.n_ctx = n_ctx
        self.context_window = n_ctx
        self._path: Path | None = None
        self.parallel_setting = parallel if parallel is not None else parallel_setting(os.environ.get(PARALLEL_ENV))
        """The parallel sequences asked for (``KNOWGAP_PARALLEL`` unless given): None for the default, 1 for
        single-stream."""
        self.batched = self.parallel_setting != 1
        self.default_concurrency = choose_sizing(n_ctx, setting=self.parallel_setting, bytes_per_token=None,
                                                 available=None).parallel
        self._decoder: BatchedDecoder | None = None

    def _ensure(self) -> tuple[Any, threading.Lock]:
        if self._path is None:
            self._path = resolve_local_path(self.target)
        return load_llama(self._path, self.n_ctx)

    def _ensure_decoder(self) -> BatchedDecoder:
        """The model's batch (loading the model first); on the llama thread."""
        if self._decoder is None:
            self._ensure()
            assert self._path is not None
            self._decoder = load_decoder(self._path, self.n_ctx, self.parallel_setting)[0]
        return self._decoder

    def _call(self, request: ChatRequest) -> ChatResponse:
        """One call single-stream (llama-cpp-python's ``create_chat_completion``), on the llama thread."""
        self.refuse_unsupported_tools(request)
        llm, lock = self._ensure()
        kwargs = chat_kwargs(request)
        recorder = _LogprobRecorder(llm, request.top_logprobs) if request.top_logprobs else None
        if recorder is not None:
            kwargs["logits_processor"] = [recorder]
        with lock:
            start = time.perf_counter()
            try:
                out = llm.create_chat_completion(**kwargs)
            except ValueError as exc:  # e.g. prompt longer than the context window
                raise PermanentModelError(f"{self.spec}: {exc}") from exc
            latency = time.perf_counter() - start
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        completion_tokens = usage.get("completion_tokens", 0)
        return ChatResponse(
            text=choice["message"].get("content") or "",
            usage=Usage(prompt_tokens=usage.get("prompt_tokens", 0), completion_tokens=completion_tokens),
            logprobs=None if recorder is None else recorder.tokens(completion_tokens, request.temperature == 0),
            latency_s=latency, finish_reason=choice.get("finish_reason"), model=self.spec)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        # Always the same OS thread. llama.cpp runs its matrix work in an OpenMP thread team per calling
        # thread, and idle teams spin for a while: calls landing on different pool threads (as with
        # asyncio.to_thread) leave spinning teams that steal the cores (measured on 2 cores: 84% of direct
        # throughput with to_thread; see benchmarks/local_throughput.py). The batch decodes there too.
        loop = asyncio.get_running_loop()
        if not self.batched:
            return await loop.run_in_executor(_LLAMA_THREAD, self._call, request)
        self.refuse_unsupported_tools(request)
        decoder = self._decoder
        if decoder is None:
            decoder = await loop.run_in_executor(_LLAMA_THREAD, self._ensure_decoder)
        llm = decoder.llm
        job = Job(build=lambda: capture_completion(llm, **chat_kwargs(request)),
                  single=lambda: self._call(request), top_logprobs=request.top_logprobs)
        try:
            done = await asyncio.wrap_future(decoder.submit(job))
        except ModelError as exc:
            raise type(exc)(f"{self.spec}: {exc}") from exc
        if isinstance(done, ChatResponse):  # the batch could not take it: it ran single-stream
            return done
        assert isinstance(done, Completion)
        return ChatResponse(text=done.text, usage=Usage(prompt_tokens=done.prompt_tokens,
                                                        completion_tokens=done.completion_tokens),
                            logprobs=done.logprobs, latency_s=done.latency_s, finish_reason=done.finish_reason,
                            model=self.spec)

    def prepare(self) -> None:
        """Assemble and load the model now (so errors surface before any trial starts), on the llama thread."""
        _LLAMA_THREAD.submit(self._ensure_decoder if self.batched else self._ensure).result()

    def sha256(self) -> str:
        """The GGUF file's sha256: a pack's is known (and verified on assembly); a file's is hashed once and
        remembered by path, size and mtime."""
        if self.target in PACKS:
            return PACKS[self.target].sha256
        if self._path is None:
            self._path = resolve_local_path(self.target)
        return remembered_sha256(self._path)

    def identity(self) -> str:
        """The GGUF file's sha256, and ``;decoding=batched`` in batched mode
        (:func:`~knowgap.models.identity.gguf_identity`): a batched call's text differs from a single-stream
        one's in a measured share of calls, so the response cache and ``--resume`` keep the two apart.
        Single-stream keeps the identity it had before batching."""
        return gguf_identity(self.sha256(), batched=self.batched)

    def describe(self) -> dict[str, str]:
        info = {"spec": self.spec, "backend": "llama.cpp (in-process)", "sha256": self.sha256()}
        if self.target in PACKS:
            info["pack"] = self.target
        else:
            info["path"] = self.target
        choice = _THREADS.get(_key(self._path, self.n_ctx)) if self._path is not None else None
        if choice is not None:  # loaded (prepare() loads it before a run describes it)
            info["threads"] = str(choice.threads)
            info["threads_why"] = choice.why
        if self.batched:
            batch = (_DECODERS.get(f"{_key(self._path, self.n_ctx)}::{self.parallel_setting}")
                     if self._path is not None else None)
            info["decoding"] = "batched" + (f": {batch[1].why}" if batch is not None else "")
        else:
            info["decoding"] = f"single-stream ({PARALLEL_ENV}=1)"
        return info
