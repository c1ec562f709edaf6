"""Continuous batching for the embedded llama.cpp models: concurrent calls to one model decoded as parallel
sequences of one llama.cpp context.

A CPU decodes one token for several sequences at almost the cost of one (decoding reads every weight once per
step, whatever the number of sequences in the step), so calls that overlap share their steps. One
:class:`BatchedDecoder` per loaded model owns a second llama.cpp context on the same weights, with ``n_seq_max``
sequences, each with a KV cache of its own of ``n_ctx`` cells (so a call has the window a single-stream call has,
and its attention reads only its own cells: one cache shared by all sequences made every token attend over every
sequence's cells, 1.36x slower than single-stream on abstain's long prompts where separate caches were 0.95x,
benchmarks/local_batching.py). Each call is a sequence: it joins the next step when it arrives (its prompt
evaluated in chunks beside the others' next tokens) and leaves when it stops (end of generation, a stop string,
``max_tokens``, its caller cancelling), so a long answer never holds up a short one.

Each sequence is sampled as llama-cpp-python samples one call (:meth:`llama_cpp.Llama._init_sampler`: the same
sampler chain, the same seed rule, the same stop, multibyte and ``max_tokens`` rules of ``_create_completion``),
from the logits row of its own token; its prompt is the one llama-cpp-python's chat handler builds, captured
(:func:`capture_completion`), so JSON-schema grammars, stop strings and chat templates are the ones a
single-stream call uses. Token log-probabilities are read from the same raw logits row the sampler starts from.

Shared prefixes: the KV cells of a prompt's start that another sequence holds (running, or finished and kept
while its slot is free) are copied (``llama_memory_seq_cp``) instead of evaluated again; a prompt sharing a start
of :data:`MIN_WAIT_PREFIX` tokens or more with a prompt still being evaluated waits for it. So a knowledge base or a
judge's rubric before many questions is evaluated once.

Everything runs on knowgap's one llama thread (:data:`knowgap.models.local._LLAMA_THREAD`), in slices, so other
work queued there (another model's calls, a load) gets its turn. A call whose request the batch cannot take (a
format llama-cpp-python's chat handler does not hand over as tokens) runs as a single-stream call between two
steps.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from knowgap.models.errors import ModelError, PermanentModelError, TransientModelError
from knowgap.models.types import TokenLogprob, TopLogprob

log = logging.getLogger("knowgap.models")

SLICE_S = 0.25
"""Longest run of steps before the decoder gives the llama thread back to other queued work."""
MIN_WAIT_PREFIX = 64
"""Shortest shared prompt start worth waiting for while another sequence is still evaluating it."""


class _Captured(Exception):  # noqa: N818 - a control-flow signal, not an error
    def __init__(self, kwargs: dict[str, Any]) -> None:
        super().__init__("captured")
        self.kwargs = kwargs


class _CaptureLlama:
    """Stands in for a ``Llama`` while llama-cpp-python's chat handler builds a call: everything is the real
    model's, except ``create_completion``, which hands back the arguments instead of generating."""

    def __init__(self, llm: Any) -> None:
        self._llm = llm

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)

    def create_completion(self, **kwargs: Any) -> Any:
        raise _Captured(kwargs)


def capture_completion(llm: Any, **chat_kwargs: Any) -> dict[str, Any]:
    """The arguments ``llm.create_chat_completion(**chat_kwargs)`` passes to ``create_completion``: the prompt
    tokens its chat template makes, its stop strings and stopping criteria, the grammar of a ``response_format``,
    the sampling parameters with the chat defaults."""
    from llama_cpp import Llama

    try:
        Llama.create_chat_completion(_CaptureLlama(llm), **chat_kwargs)  # type: ignore[arg-type]
    except _Captured as captured:
        return captured.kwargs
    raise PermanentModelError("llama-cpp-python's chat handler made no completion call")


_UNBATCHABLE: dict[str, Any] = {"suffix": None, "logprobs": None, "echo": False, "stream": False,
                                 "mirostat_mode": 0, "logits_processor": None, "logit_bias": None}
"""Options of ``create_completion`` the batch does not implement, with the value that leaves them off."""


def unbatchable(kwargs: dict[str, Any]) -> str | None:
    """Why a captured completion cannot be batched (None: it can): its prompt must be tokens and every option
    of :data:`_UNBATCHABLE` off."""
    if not isinstance(kwargs.get("prompt"), list):
        return "prompt given as text"
    for name, off in _UNBATCHABLE.items():
        if kwargs.get(name, off) != off:
            return f"option {name}"
    return None


@dataclass
class Completion:
    """What a finished sequence gives back (the fields of llama-cpp-python's completion)."""

    text: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    logprobs: list[TokenLogprob] | None
    latency_s: float


@dataclass
class Job:
    """One call for the decoder: ``build`` makes its completion arguments on the llama thread (or raises);
    ``single`` runs the whole call single-stream, for arguments the batch cannot take (:func:`unbatchable`)."""

    build: Callable[[], dict[str, Any]]
    single: Callable[[], Any]
    top_logprobs: int | None = None
    future: Future[Any] = field(default_factory=Future)
    seq: Sequence | None = None
    """Its sequence, once built (built once, even when it waits for room in the KV cache)."""


def _settle(future: Future[Any], result: Any = None, error: BaseException | None = None) -> None:
    """Give ``future`` its outcome unless its caller cancelled it meanwhile."""
    with contextlib.suppress(Exception):  # InvalidStateError: cancelled between the check and the set
        if future.cancelled():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)


def _is_utf8_incomplete(text: bytes, pending: int) -> int:
    """llama-cpp-python's multibyte rule: how many more tokens to take before looking for stop strings, given
    the last three bytes of the text so far (``pending`` carried over)."""
    for k, char in enumerate(text[-3:]):
        k = 3 - k
        for num, pattern in ((2, 192), (3, 224), (4, 240)):
            if num > k and pattern & char == pattern:
                pending = num - k
    return pending


class Sequence:
    """One call in the batch: its prompt, sampler chain and what it has generated."""

    def __init__(self, job: Job, args: dict[str, Any], decoder: BatchedDecoder) -> None:
        llm = decoder.llm
        self.job = job
        self.prompt: list[int] = [int(t) for t in args["prompt"]]
        n_ctx = decoder.n_ctx
        if len(self.prompt) >= n_ctx:
            raise PermanentModelError(f"Requested tokens ({len(self.prompt)}) exceed context window of {n_ctx}")
        max_tokens = args.get("max_tokens", 16)
        if max_tokens is None or max_tokens <= 0:
            max_tokens = n_ctx - len(self.prompt)
        self.max_tokens = max_tokens if max_tokens + len(self.prompt) < n_ctx else n_ctx - len(self.prompt)
        stop = args.get("stop") or []
        stop = stop if isinstance(stop, list) else [stop]
        self.stop = [s.encode("utf-8") for s in stop]
        self.stopping_criteria = args.get("stopping_criteria")
        seed = args.get("seed")
        llm.set_seed(seed if seed is not None else random.Random(llm._seed).randint(0, 2**32))
        self.temperature = float(args.get("temperature", 0.8))
        self.sampler = decoder.sampler_chain(args, llm._seed)
        self.top = job.top_logprobs
        self.logprobs: list[TokenLogprob] | None = [] if self.top else None
        self.completion: list[int] = []
        self.text = b""
        self._raw = b""
        self.multibyte = 0
        self.n_eval = 0
        """Prompt and completion tokens whose KV cells this sequence holds (positions 0..n_eval-1)."""
        self.waiting: tuple[int, int] | None = None
        """(slot, length): the prompt start this sequence waits for another slot to evaluate first."""
        self.started = time.perf_counter()
        self.result: Completion | None = None

    @property
    def planned(self) -> list[int]:
        """The tokens this sequence's KV cells hold or will hold: its prompt, then what it generated."""
        return self.prompt + self.completion

    @property
    def prefilling(self) -> bool:
        return self.n_eval < len(self.prompt)

    def finish(self, text: bytes, reason: str) -> None:
        evaluated = self.prompt + self.completion[:self.n_eval - len(self.prompt)]
        if self.stopping_criteria is not None and self.stopping_criteria(np.array(evaluated, dtype=np.intc), None):
            reason = "stop"
            text = self.text
        self.result = Completion(
            text=text.decode("utf-8", errors="ignore"), finish_reason=reason, prompt_tokens=len(self.prompt),
            completion_tokens=len(self.completion), logprobs=self.logprobs,
            latency_s=time.perf_counter() - self.started)

    def take(self, token: int, decoder: BatchedDecoder, row: Any) -> None:
        """Apply one sampled token as llama-cpp-python's ``_create_completion`` does (end of generation, the
        multibyte rule, stop strings, ``max_tokens``); sets :attr:`result` when the sequence ends."""
        evaluated = self.prompt + self.completion
        if self.stopping_criteria is not None and self.stopping_criteria(np.array(evaluated, dtype=np.intc), row):
            self.finish(self.text, "stop")
            return
        if decoder.is_eog(token):
            self.finish(self.text, "stop")
            return
        if self.logprobs is not None:
            self.logprobs.append(decoder.logprob_entry(row, token, self.top or 1))
        self.completion.append(token)
        self._raw += decoder.piece(token)
        if self.completion[0] == decoder.bos and self._raw[:1] == b" ":  # Llama.detokenize's rule
            self.text = self._raw[1:]
        else:
            self.text = self._raw
        self.multibyte = _is_utf8_incomplete(self.text, self.multibyte)
        if self.multibyte > 0:
            self.multibyte -= 1
            return
        found = [s for s in self.stop if s in self.text]
        if found:
            self.finish(self.text[:self.text.index(found[0])], "stop")
            return
        if len(self.completion) >= self.max_tokens:
            self.finish(self.text, "length")


class Slot:
    """One llama.cpp sequence id: the call using it (or none), and the tokens its KV cells hold."""

    def __init__(self, seq_id: int) -> None:
        self.seq_id = seq_id
        self.seq: Sequence | None = None
        self.kept: list[int] = []
        """A free slot's tokens still in the KV cache (a prompt start a later call may reuse)."""

    def tokens(self) -> list[int]:
        """The tokens this slot's KV cells hold now."""
        if self.seq is None:
            return self.kept
        return self.seq.planned[:self.seq.n_eval]


def common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class BatchedDecoder:
    """The batch of one loaded model (see the module docstring). ``submit`` from any thread; the decoding runs
    on ``executor`` (one thread)."""

    def __init__(self, llm: Any, executor: Executor, *, parallel: int, n_ctx: int) -> None:
        import llama_cpp
        from llama_cpp import _internals

        self.llm = llm
        self.executor = executor
        self.parallel = parallel
        self.n_ctx = n_ctx
        self.share_prefixes = True
        """False: every prompt is evaluated whole (no cells copied or kept): the baseline that measures what
        sharing prefixes gains (``benchmarks/local_batching.py --unshared``)."""
        params = llama_cpp.llama_context_params.from_buffer_copy(llm.context_params)
        params.n_ctx = parallel * n_ctx
        params.n_seq_max = parallel
        params.kv_unified = False  # a KV cache of n_ctx cells per sequence (see the module docstring)
        self.n_batch = int(params.n_batch)
        self.context = _internals.LlamaContext(model=llm._model, params=params, verbose=False)
        self.ctx = self.context.ctx
        self.memory = self.context.memory
        self.vocab = llm._model.vocab
        self.n_vocab = int(llm.n_vocab())
        self.bos = int(llm.token_bos())
        self.batch = llama_cpp.llama_batch_init(self.n_batch, 0, 1)
        self.slots = [Slot(i) for i in range(parallel)]
        self._queue: deque[Job] = deque()
        self._lock = threading.Lock()
        self._pending: list[Job] = []
        self._running = False
        self._piece_buf = (ctypes.c_char * 64)()
        self.steps = 0
        self.prompt_tokens_evaluated = 0
        self.prompt_tokens_shared = 0

    # --- called from any thread -------------------------------------------------------------------------------
    def submit(self, job: Job) -> Future[Any]:
        with self._lock:
            self._pending.append(job)
            if self._running:
                return job.future
            self._running = True
        self.executor.submit(self._run)
        return job.future

    # --- the llama thread ---------------------------------------------------------------------------------------
    def close(self) -> None:
        import llama_cpp

        if self.batch is not None:
            llama_cpp.llama_batch_free(self.batch)
            self.batch = None
        self.context.close()

    def forget(self) -> None:
        """Drop the cells free slots keep (on the llama thread): later calls share nothing with earlier ones."""
        for slot in self.slots:
            if slot.seq is None:
                self._clear(slot)

    def _run(self) -> None:
        """Steps until no call is left or a slice has passed; then hand the thread back (and queue the next
        slice when work is left)."""
        deadline = time.perf_counter() + SLICE_S
        try:
            while True:
                with self._lock:
                    self._queue.extend(self._pending)
                    self._pending.clear()
                    if not self._queue and not any(s.seq for s in self.slots):
                        self._running = False
                        return
                self._admit()
                if any(s.seq for s in self.slots):
                    self._step()
                if time.perf_counter() > deadline:
                    try:
                        self.executor.submit(self._run)  # behind the work queued meanwhile
                        return
                    except RuntimeError:  # the executor is shutting down (interpreter exit): keep the thread
                        deadline = time.perf_counter() + SLICE_S
        except Exception as exc:  # a bug or a llama.cpp failure: no caller is left waiting
            log.exception("batched llama.cpp decoding failed")
            self._fail_all(exc)

    def _fail_all(self, exc: BaseException) -> None:
        error = exc if isinstance(exc, ModelError) else ModelError(f"batched llama.cpp decoding failed: {exc!r}")
        with self._lock:
            jobs = list(self._queue) + self._pending
            self._queue.clear()
            self._pending.clear()
            self._running = False
        for slot in self.slots:
            if slot.seq is not None:
                jobs.append(slot.seq.job)
            self._clear(slot)
        for job in jobs:
            _settle(job.future, error=error)

    # slots and the KV cache ---------------------------------------------------------------------------------------
    def _clear(self, slot: Slot) -> None:
        import llama_cpp

        llama_cpp.llama_memory_seq_rm(self.memory, slot.seq_id, -1, -1)
        slot.seq = None
        slot.kept = []

    def _release(self, slot: Slot) -> None:
        """The slot's call ended: keep the tokens its KV cells hold (a later prompt may start the same way)."""
        seq = slot.seq
        assert seq is not None
        slot.kept = seq.planned[:seq.n_eval]
        slot.seq = None

    def _best_source(self, prompt: list[int], *, evaluated: bool) -> tuple[Slot | None, int]:
        """The slot whose KV cells (``evaluated``) or planned tokens share the longest start with ``prompt``,
        and that length (at most the prompt less its last token, which must be evaluated for its logits)."""
        best: Slot | None = None
        length = 0
        if not self.share_prefixes:
            return best, length
        for slot in self.slots:
            tokens = slot.tokens() if evaluated or slot.seq is None else slot.seq.planned
            n = min(common_prefix(tokens, prompt), len(prompt) - 1)
            if n > length:
                best, length = slot, n
        return best, length

    def _admit(self) -> None:
        while self._queue:
            job = self._queue[0]
            if job.future.cancelled():
                self._queue.popleft()
                if job.seq is not None:
                    job.seq.sampler.close()
                continue
            free = [s for s in self.slots if s.seq is None]
            if not free:
                return
            if job.seq is None:
                try:
                    args = job.build()
                    reason = unbatchable(args)
                    if reason is not None:  # a call the batch cannot take: run it now, between two steps
                        log.info("llama.cpp call decoded single-stream: %s", reason)
                        self._queue.popleft()
                        self._run_single(job)
                        continue
                    job.seq = Sequence(job, args, self)
                except Exception as exc:
                    self._queue.popleft()
                    _settle(job.future, error=exc if isinstance(exc, ModelError)
                            else PermanentModelError(f"llama.cpp: {exc}"))
                    continue
            # The lowest free sequence id: llama.cpp splits a step into micro-batches of consecutive sequence ids
            # (each with as many tokens), so running sequences are best kept side by side.
            slot = min(free, key=lambda s: s.seq_id)
            source, length = self._best_source(job.seq.prompt, evaluated=False)
            self._queue.popleft()
            self._place(slot, job.seq, source, length)

    def _place(self, slot: Slot, seq: Sequence, source: Slot | None, length: int) -> None:
        """Start ``seq`` in ``slot`` from the ``length`` prompt tokens ``source`` shares with it: the cells it
        holds now are copied (or kept, when ``source`` is ``slot``); a longer start still being evaluated by a
        running call is waited for (:meth:`_resolve_waits`)."""
        import llama_cpp

        ready = source.tokens() if source is not None else []
        have = min(length, common_prefix(ready, seq.prompt))
        if source is slot:
            llama_cpp.llama_memory_seq_rm(self.memory, slot.seq_id, have, -1)
            seq.n_eval = have
        else:
            self._clear(slot)
            if source is not None and source.seq is not None and length - have >= MIN_WAIT_PREFIX:
                seq.waiting = (source.seq_id, length)
            elif source is not None and have > 0:
                self._copy(source, slot, have)
                seq.n_eval = have
        slot.kept = []
        slot.seq = seq
        self.prompt_tokens_shared += seq.n_eval

    def _copy(self, source: Slot, slot: Slot, length: int) -> None:
        """Give ``slot`` the cells of ``source``'s first ``length`` positions: llama.cpp copies between sequences'
        own caches only whole (at the next decode), so the whole cache, cut to ``length``."""
        import llama_cpp

        llama_cpp.llama_memory_seq_rm(self.memory, slot.seq_id, -1, -1)
        llama_cpp.llama_memory_seq_cp(self.memory, source.seq_id, slot.seq_id, -1, -1)
        llama_cpp.llama_memory_seq_rm(self.memory, slot.seq_id, length, -1)

    def _resolve_waits(self) -> None:
        for slot in self.slots:
            seq = slot.seq
            if seq is None or seq.waiting is None:
                continue
            source_id, length = seq.waiting
            source = self.slots[source_id]
            ready = min(common_prefix(source.tokens(), seq.prompt), length)
            still_coming = source.seq is not None and source.seq.prefilling and ready < length
            if still_coming:
                continue
            seq.waiting = None
            best, have = self._best_source(seq.prompt, evaluated=True)
            if best is not None and best is not slot and have > 0:
                self._copy(best, slot, have)
                seq.n_eval = have
                self.prompt_tokens_shared += have

    # one step -------------------------------------------------------------------------------------------------
    def _add(self, token: int, pos: int, seq_id: int, logits: bool) -> int:
        batch = self.batch
        i = int(batch.n_tokens)
        batch.token[i] = token
        batch.pos[i] = pos
        batch.n_seq_id[i] = 1
        batch.seq_id[i][0] = seq_id
        batch.logits[i] = logits
        batch.n_tokens = i + 1
        return i

    def _step(self) -> None:
        import llama_cpp

        self._resolve_waits()
        for slot in self.slots:
            if slot.seq is not None and slot.seq.job.future.cancelled():  # its caller gave up: it leaves
                slot.seq.sampler.close()
                self._release(slot)
        running = [s for s in self.slots if s.seq is not None and s.seq.waiting is None]
        decoding = [s for s in running if not s.seq.prefilling]  # type: ignore[union-attr]
        budget = self.n_batch - len(decoding)
        takes: dict[int, int] = {}
        for slot in sorted(running, key=lambda s: s.seq.started):  # type: ignore[union-attr]
            seq = slot.seq
            assert seq is not None
            if seq.prefilling and budget > 0:  # the earliest calls' prompts first
                takes[slot.seq_id] = min(budget, len(seq.prompt) - seq.n_eval)
                budget -= takes[slot.seq_id]
        self.batch.n_tokens = 0
        outputs: list[tuple[Slot, int]] = []
        prefill: list[tuple[Slot, int]] = []
        for slot in running:  # in sequence-id order (llama.cpp's micro-batches follow it)
            seq = slot.seq
            assert seq is not None
            if not seq.prefilling:  # a generating sequence: its last token
                outputs.append((slot, self._add(seq.completion[-1], seq.n_eval, slot.seq_id, True)))
                continue
            take = takes.get(slot.seq_id, 0)
            for k in range(take):
                pos = seq.n_eval + k
                last = pos == len(seq.prompt) - 1
                i = self._add(seq.prompt[pos], pos, slot.seq_id, last)
                if last:
                    outputs.append((slot, i))
            if take:
                prefill.append((slot, take))
        if self.batch.n_tokens == 0:  # only waiting sequences (their source left): stop waiting
            for slot in self.slots:
                if slot.seq is not None:
                    slot.seq.waiting = None
            return
        code = llama_cpp.llama_decode(self.ctx, self.batch)
        if code != 0:
            self._decode_failed(code, [s for s, _ in outputs] + [s for s, _ in prefill])
            return
        self.steps += 1
        for slot, take in prefill:
            assert slot.seq is not None
            slot.seq.n_eval += take
            self.prompt_tokens_evaluated += take
        for slot, i in outputs:
            seq = slot.seq
            assert seq is not None
            if not seq.prefilling and seq.completion and seq.n_eval < len(seq.planned):
                seq.n_eval += 1  # the token fed this step is in the cache now
            row = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(self.ctx, i), shape=(self.n_vocab,))
            token = int(llama_cpp.llama_sampler_sample(seq.sampler.sampler, self.ctx, i))
            seq.take(token, self, row)
            if seq.result is not None:
                seq.sampler.close()
                _settle(seq.job.future, seq.result)
                self._release(slot)

    def _decode_failed(self, code: int, slots: list[Slot]) -> None:
        """No KV slot for the batch (1): free kept cells and try again next step, and if none are kept, send the
        newest call back to its caller as a transient error; any other code fails the batch's calls."""
        import llama_cpp

        for slot in slots:  # cells of a partly applied batch
            if slot.seq is not None:
                llama_cpp.llama_memory_seq_rm(self.memory, slot.seq_id, slot.seq.n_eval, -1)
        kept = [s for s in self.slots if s.seq is None and s.kept]
        if code == 1 and kept:
            for slot in kept:
                self._clear(slot)
            return
        running = sorted({s.seq_id: s for s in slots if s.seq is not None}.values(),
                         key=lambda s: s.seq.started if s.seq else 0.0)
        victims = running[-1:] if code == 1 and len(running) > 1 else running
        for slot in victims:
            seq = slot.seq
            assert seq is not None
            seq.sampler.close()
            _settle(seq.job.future, error=TransientModelError(
                f"llama.cpp batch decode returned {code} ({'KV cache full' if code == 1 else 'error'})"))
            self._clear(slot)

    def _run_single(self, job: Job) -> None:
        if job.future.cancelled():
            return
        try:
            _settle(job.future, job.single())
        except Exception as exc:
            _settle(job.future, error=exc)

    # sampling ---------------------------------------------------------------------------------------------------
    def sampler_chain(self, args: dict[str, Any], seed: int) -> Any:
        """The sampler chain ``Llama._init_sampler`` builds for these arguments (without a logits processor)."""
        import llama_cpp
        from llama_cpp import _internals

        sampler = _internals.LlamaSampler()
        sampler.add_penalties(n_vocab=self.n_vocab, penalty_last_n=self.llm.last_n_tokens_size,
                              penalty_repeat=args.get("repeat_penalty", 1.0),
                              penalty_freq=args.get("frequency_penalty", 0.0),
                              penalty_present=args.get("presence_penalty", 0.0))
        grammar = args.get("grammar")
        if grammar is not None:
            rule = llama_cpp.llama_sampler_init_grammar(self.vocab, grammar._grammar.encode("utf-8"),
                                                        grammar._root.encode("utf-8"))
            if not rule:
                sampler.close()
                raise PermanentModelError("llama.cpp could not parse the grammar of this JSON schema")
            llama_cpp.llama_sampler_chain_add(sampler.sampler, rule)
        temp = float(args.get("temperature", 0.8))
        if temp < 0.0:
            sampler.add_dist(seed)
        elif temp == 0.0:
            sampler.add_greedy()
        else:
            sampler.add_top_k(int(args.get("top_k", 40)))
            sampler.add_typical(float(args.get("typical_p", 1.0)), 1)
            sampler.add_top_p(float(args.get("top_p", 0.95)), 1)
            sampler.add_min_p(float(args.get("min_p", 0.05)), 1)
            sampler.add_temp(temp)
            sampler.add_dist(seed)
        return sampler

    def is_eog(self, token: int) -> bool:
        import llama_cpp

        return bool(llama_cpp.llama_vocab_is_eog(self.vocab, token))

    def piece(self, token: int) -> bytes:
        """A token's bytes, as ``Llama.detokenize`` joins them."""
        import llama_cpp

        n = llama_cpp.llama_token_to_piece(self.vocab, token, self._piece_buf, len(self._piece_buf), 0, False)
        if n < 0:
            return bytes(self.llm.detokenize([token]))
        return self._piece_buf.raw[:n]

    def logprob_entry(self, row: Any, token: int, top: int) -> TokenLogprob:
        """The sampled token's log-probability and the ``top`` most likely tokens at its position, from the raw
        logits row (as :class:`knowgap.models.local._LogprobRecorder` reads them single-stream)."""
        values = row.astype(np.float64)
        peak = values.max()
        logp = values - (peak + np.log(np.exp(values - peak).sum()))
        best = np.argpartition(-logp, top)[:top]
        best = best[np.argsort(-logp[best])]
        tops = [TopLogprob(token=self.text_of(int(t)), logprob=float(logp[t])) for t in best]
        return TokenLogprob(token=self.text_of(token), logprob=float(logp[token]), top=tops)

    def text_of(self, token: int) -> str:
        return bytes(self.llm.detokenize([token])).decode("utf-8", errors="replace")
