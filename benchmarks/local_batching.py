"""Batched decoding of an embedded model against single-stream, in one run (issue 40).

    .venv/bin/python benchmarks/local_batching.py speed [--pack qwen2.5-0.5b] [--parallel 1,2,4,8] [--rounds 2]
        [--unshared] [--shapes long-answers,long-prompts,judges] [--requests 8] [--max-tokens 128]
        [--suite starter] [--suite-options '{}'] [--json OUT]
    .venv/bin/python benchmarks/local_batching.py determinism [--pack qwen2.5-0.5b] [--limit 240]
        [--max-tokens 64] [--no-reversed] [--json OUT]

The pack is loaded once (``knowgap.models.local.load_llama``); every side uses that one ``Llama`` object (its
weights), the batched sides each their own batch (``KNOWGAP_PARALLEL`` sequences, one llama.cpp context).

Prompts are real: the requests the suites' own code made from their shipped cases, read from the stored runs of the
metric-identity check (``tests/fixtures/metric_identity/runs``: starter, abstain, clarify, extract, partial; the
judges' requests there rate the identity system's replies; a rubric judge's request asks for token
log-probabilities here, as it does of a ``local:`` judge), and abstain's ``long_context`` requests made now by the
suite itself (``knowgap.run`` with a model that records its requests and declines every question; the knowledge
base fills the 4,096-token window less the question, so requests share the facts before the held-out one).

``speed``: per shape, the same requests through each side, sides alternated round by round (caches emptied
before each pass: the single-stream prompt-state cache and the batch's kept cells):

- ``raw``: ``Llama.create_chat_completion`` in a plain loop on knowgap's llama thread (llama-cpp-python alone: the
  ``Llama`` without knowgap's prompt-state cache, as llama-cpp-python makes it, so a prompt reuses only the previous
  prompt's start);
- ``single``: knowgap today (``KNOWGAP_PARALLEL=1``: the same ``Llama`` with knowgap's prompt-state cache,
  :func:`knowgap.models.local.prefix_cache`), ``ModelClient`` at concurrency 4 (calls queue for the model);
- ``batched-N``: knowgap batching N sequences, ``ModelClient`` at concurrency N;
- ``batched-N-unshared`` (``--unshared``): the same with prefix sharing off (no cells copied or kept, every prompt
  evaluated whole), so ``batched-N`` against it is the gain from shared prefixes alone.

Shapes: ``long-answers`` (clarify's target requests, ``max_tokens`` cut to ``--max-tokens``), ``long-prompts``
(abstain long_context, 100 tokens), ``judges`` (clarify's and partial's rubric ratings, 4 tokens, logprobs).
Reported: completion tokens/s over all sequences, wall seconds, prompt tokens evaluated vs shared (raw, batched), the
1-minute load average before and after each pass, RSS. ``--suite``: the wall time of a real ``knowgap.run`` of that
suite (``use_cache=False``, the model as every role, its default concurrency) per side.

``determinism``: the same requests (at least 200: starter, abstain, clarify, extract; ``max_tokens`` cut to
``--max-tokens``) single-stream twice (in order, then reversed: the noise floor of today's path, whose prompt
cache makes a call depend on earlier ones) and batched (4 sequences) twice (in order, then reversed); how many
texts differ between the modes and between two passes of one mode; for rubric ratings, the G-Eval expected value's
difference.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _shared import current_rss_mb, peak_rss_mb, print_table, write_json

import knowgap
from knowgap.engine.gateway import ModelClient, RetryPolicy
from knowgap.judges.geval import TOP_LOGPROBS, read_scale
from knowgap.models import local as local_mod
from knowgap.models.base import ChatModel
from knowgap.models.local import LocalModel, chat_kwargs, load_llama, prefix_cache
from knowgap.models.local_batch import capture_completion, common_prefix
from knowgap.models.packs import ensure_pack
from knowgap.models.types import ChatRequest, ChatResponse, Usage
from knowgap.suites import get_suite

REPO = Path(__file__).resolve().parents[1]
RUNS = REPO / "tests" / "fixtures" / "metric_identity" / "runs"
SINGLE_CONCURRENCY = 4
DECLINE = '{"response": "I cannot answer from the given information.", "citation": "no citation"}'
Work = list[tuple[str, ChatRequest]]  # (label, request)


# the prompts -----------------------------------------------------------------------------------------------
def stored_requests(runs: Sequence[str], roles: Sequence[str] = ("target", "judge")) -> Work:
    """Every distinct request of ``roles`` in the stored runs ``runs`` (by fingerprint, in file order); a rubric
    rating (4 tokens) asks for log-probabilities, as the rubric judges ask of a ``local:`` model."""
    seen: set[str] = set()
    out: Work = []
    for name in runs:
        with gzip.open(RUNS / name / "trials.jsonl.gz", "rt", encoding="utf-8") as file:
            for line in file:
                for call in json.loads(line).get("calls") or []:
                    if call["role"] not in roles:
                        continue
                    request = ChatRequest.model_validate(call["request"])
                    if call["role"] == "judge" and request.max_tokens == 4:
                        request = request.model_copy(update={"top_logprobs": TOP_LOGPROBS})
                    if request.fingerprint() not in seen:
                        seen.add(request.fingerprint())
                        out.append((f"{name.split('-')[0]}/{call['role']}", request))
    return out


class Recorder(ChatModel):
    """Records every request and declines every question (abstain's JSON), with a 4,096-token window."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.context_window = 4096
        self.requests: list[ChatRequest] = []

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return ChatResponse(text=DECLINE, usage=Usage(prompt_tokens=1, completion_tokens=1), model=self.spec)


def abstain_long_context(sample: int) -> Work:
    """abstain's long_context target requests for ``sample`` questions (basic prompt), made by the suite."""
    recorder = Recorder("record:abstain")
    with tempfile.TemporaryDirectory() as runs:
        knowgap.run("abstain", models={"target": recorder.spec}, providers={recorder.spec: recorder},
                    options={"retrieval": ["long_context"], "prompts": ["basic"], "sample": sample},
                    use_cache=False, runs_root=runs)
    return [("abstain/long_context", r) for r in recorder.requests]


def capped(work: Work, max_tokens: int) -> Work:
    return [(label, r.model_copy(update={"max_tokens": min(r.max_tokens, max_tokens)})) for label, r in work]


def shapes(names: Sequence[str], n: int, max_tokens: int) -> dict[str, Work]:
    out: dict[str, Work] = {}
    if "long-answers" in names:
        out["long-answers"] = capped([w for w in stored_requests(["clarify"], ("target",))][:n], max_tokens)
    if "long-prompts" in names:
        out["long-prompts"] = abstain_long_context(n)[:n]
    if "judges" in names:
        judges = [w for w in stored_requests(["clarify", "partial"], ("judge",)) if w[1].max_tokens == 4]
        out["judges"] = judges[:n]
    return out


# the sides ---------------------------------------------------------------------------------------------------
Result = dict[str, Any]


def fresh_caches(llm: Any, models: Sequence[LocalModel]) -> None:
    """Empty the single-stream prompt-state cache and KV reuse, and every batch's kept cells (on the llama
    thread)."""
    def clear() -> None:
        if llm.cache is not None:
            llm.set_cache(prefix_cache(local_mod.PREFIX_CACHE_MB))
        llm.reset()
        for model in models:
            if model._decoder is not None:
                model._decoder.forget()

    local_mod._LLAMA_THREAD.submit(clear).result()


def run_raw(llm: Any, work: Work) -> Result:
    """llama-cpp-python as it comes: ``Llama`` without a prompt-state cache (its default), so a prompt reuses only
    the previous prompt's start (the KV cells the context still holds); knowgap's state cache is set aside for the
    pass and put back after it."""
    def go() -> Result:
        tokens = prompt = 0
        texts = []
        evaluated = 0
        counting = 0.0  # seconds spent counting the evaluated prompt tokens, left out of the pass's time
        cache = llm.cache
        llm.set_cache(None)
        try:
            start = time.perf_counter()
            for _, r in work:
                kwargs = chat_kwargs(r)
                # llama-cpp-python evaluates the prompt past its longest start in common with the tokens the
                # context holds (the previous call's), and at least the last token
                t0 = time.perf_counter()
                prompt_ids = [int(t) for t in capture_completion(llm, **kwargs)["prompt"]]
                held = common_prefix([int(t) for t in llm._input_ids], prompt_ids)
                evaluated += len(prompt_ids) - min(held, len(prompt_ids) - 1)
                counting += time.perf_counter() - t0
                out = llm.create_chat_completion(**kwargs)
                tokens += out["usage"]["completion_tokens"]
                prompt += out["usage"]["prompt_tokens"]
                texts.append(out["choices"][0]["message"].get("content") or "")
            seconds = time.perf_counter() - start - counting
        finally:
            llm.set_cache(cache)
        return {"tokens": tokens, "prompt_tokens": prompt, "seconds": seconds, "texts": texts, "evaluated": evaluated,
                "shared": prompt - evaluated}

    return local_mod._LLAMA_THREAD.submit(go).result()


def run_client(model: LocalModel, work: Work, concurrency: int) -> Result:
    client = ModelClient(model, run_id="bench", cache=None, use_cache=False, concurrency=concurrency,
                         retry=RetryPolicy(max_retries=0))
    decoder = model._decoder
    before = (decoder.prompt_tokens_evaluated, decoder.prompt_tokens_shared) if decoder else (0, 0)

    async def go() -> list[Any]:
        return list(await asyncio.gather(*(client.call("x", r, 0) for _, r in work)))

    start = time.perf_counter()
    records = asyncio.run(go())
    seconds = time.perf_counter() - start
    bad = [r.error for r in records if r.response is None]
    assert not bad, bad[:3]
    responses = [r.response for r in records]
    out: Result = {"tokens": sum(r.usage.completion_tokens for r in responses),
                   "prompt_tokens": sum(r.usage.prompt_tokens for r in responses), "seconds": seconds,
                   "texts": [r.text for r in responses], "responses": responses}
    if decoder is not None:
        out["evaluated"] = decoder.prompt_tokens_evaluated - before[0]
        out["shared"] = decoder.prompt_tokens_shared - before[1]
    return out


def run_suite(model: LocalModel, suite: str, options: dict[str, Any], runs_root: Path) -> Result:
    start = time.perf_counter()
    roles = get_suite(suite).roles
    result = knowgap.run(suite, models={role: model.spec for role in roles},
                         providers={model.spec: model}, options=options, use_cache=False, runs_root=runs_root)
    seconds = time.perf_counter() - start
    usage = result.manifest.usage
    tokens = sum(u.completion_tokens for per in usage.values() for u in per.values())
    return {"tokens": tokens, "seconds": seconds, "trials": result.manifest.trials_ok,
            "errors": result.manifest.trials_error}


def load() -> float:
    return os.getloadavg()[0]


def timed(label: str, fn: Callable[[], Result]) -> Result:
    before = load()
    out = fn()
    out["load"] = (before, load())
    out["rss_mb"] = current_rss_mb()
    rate = out["tokens"] / out["seconds"] if out["seconds"] else 0.0
    print(f"  {label:28s} {out['tokens']:6d} tokens {out['seconds']:7.1f} s {rate:6.2f} tokens/s  "
          f"load {out['load'][0]:.2f}-{out['load'][1]:.2f}", flush=True)
    return out


def run_unshared(model: LocalModel, work: Work, concurrency: int) -> Result:
    """:func:`run_client` on ``model``'s batch with prefix sharing off for this pass (the batch is one per model
    and process, so it is switched off and back on, not made twice)."""
    decoder = model._decoder
    assert decoder is not None, "prepare() the batched model first"
    decoder.share_prefixes = False
    try:
        return run_client(model, work, concurrency)
    finally:
        decoder.share_prefixes = True


# speed -------------------------------------------------------------------------------------------------------------
def speed(args: argparse.Namespace, path: Path, llm: Any) -> dict[str, Any]:
    spec = f"local:{path}"
    parallels = [int(p) for p in args.parallel.split(",")]
    single = LocalModel(spec, str(path), parallel=1)
    batched = {n: LocalModel(spec, str(path), parallel=n) for n in parallels}
    for model in batched.values():
        model.prepare()
    models = [single, *batched.values()]
    work = shapes(args.shapes.split(","), args.requests, args.max_tokens)
    sides: list[tuple[str, Callable[[Work], Result]]] = [
        ("raw", lambda w: run_raw(llm, w)),
        ("single", lambda w: run_client(single, w, SINGLE_CONCURRENCY)),
    ] + [(f"batched-{n}", lambda w, n=n: run_client(batched[n], w, n)) for n in parallels]  # type: ignore[misc]
    if args.unshared:
        sides += [(f"batched-{n}-unshared", lambda w, n=n: run_unshared(batched[n], w, n))  # type: ignore[misc]
                  for n in parallels]
    report: dict[str, Any] = {"shapes": {}, "suite": {}}
    for shape, items in work.items():
        print(f"\n{shape}: {len(items)} requests", flush=True)
        passes: dict[str, list[Result]] = {name: [] for name, _ in sides}
        for rnd in range(args.rounds):
            order = sides if rnd % 2 == 0 else sides[::-1]
            for name, fn in order:
                fresh_caches(llm, models)
                passes[name].append(timed(f"round {rnd + 1} {name}",
                                          lambda fn=fn, items=items: fn(items)))  # type: ignore[misc]
        report["shapes"][shape] = summarize(shape, passes)
    if args.suite:
        options = json.loads(args.suite_options)
        print(f"\nsuite {args.suite} {options}", flush=True)
        runs = Path(tempfile.mkdtemp(prefix="knowgap-batching-runs-"))
        suite_sides = [("single", single)] + [(f"batched-{n}", m) for n, m in batched.items()]
        passes = {name: [] for name, _ in suite_sides}
        for rnd in range(args.rounds):
            for name, model in suite_sides if rnd % 2 == 0 else suite_sides[::-1]:
                fresh_caches(llm, models)
                passes[name].append(timed(f"round {rnd + 1} {name}",
                                          lambda m=model: run_suite(m, args.suite, options, runs)))  # type: ignore[misc]
        report["suite"] = summarize(f"suite {args.suite}", passes, baseline="single")
    report["peak_rss_mb"] = peak_rss_mb()
    print(f"\npeak RSS {report['peak_rss_mb']:.0f} MiB")
    return report


def summarize(title: str, passes: dict[str, list[Result]], baseline: str = "raw") -> dict[str, Any]:
    rows, out = [], {}
    base = sum(r["tokens"] for r in passes[baseline]) / sum(r["seconds"] for r in passes[baseline])
    base_wall = statistics.median(r["seconds"] for r in passes[baseline])
    today = "single" if "single" in passes and baseline != "single" else None  # knowgap before batching
    today_wall = statistics.median(r["seconds"] for r in passes[today]) if today else None
    for side, results in passes.items():
        tokens = sum(r["tokens"] for r in results)
        seconds = sum(r["seconds"] for r in results)
        loads = [x for r in results for x in r["load"]]
        wall = statistics.median(r["seconds"] for r in results)
        shared = sum(r.get("shared", 0) for r in results)
        evaluated = sum(r.get("evaluated", 0) for r in results)
        out[side] = {"tokens": tokens, "seconds": seconds, "tokens_per_s": tokens / seconds,
                     "vs_baseline": tokens / seconds / base, "median_wall_s": wall,
                     "wall_vs_baseline": wall / base_wall,
                     "wall_vs_single": wall / today_wall if today_wall else None,
                     "load_min": min(loads), "load_max": max(loads), "prompt_evaluated": evaluated,
                     "prompt_shared": shared, "rss_mb": max(r["rss_mb"] for r in results)}
        rows.append((side, tokens, seconds, tokens / seconds, f"{tokens / seconds / base:.2f}x", wall,
                     f"{wall / base_wall:.2f}", f"{wall / today_wall:.2f}" if today_wall else "-",
                     f"{evaluated}/{shared}" if evaluated or shared else "-",
                     f"{min(loads):.1f}-{max(loads):.1f}"))
    print_table(["side", "tokens", "seconds", "tokens/s", f"vs {baseline}", "median wall s",
                 f"wall / {baseline}'s", "wall / single's", "prompt eval/shared", "load"], rows, title=title)
    return out


# determinism -------------------------------------------------------------------------------------------------------
def determinism(args: argparse.Namespace, path: Path, llm: Any) -> dict[str, Any]:
    spec = f"local:{path}"
    work = stored_requests(["starter", "starter-inject", "abstain-loo", "abstain-context", "abstain-false-premise",
                            "clarify", "extract"])
    work += abstain_long_context(args.long_context)
    work = capped(spread(work, args.limit), args.max_tokens)
    print(f"{len(work)} requests: " + ", ".join(f"{k} {v}" for k, v in sorted(count(w[0] for w in work).items())),
          flush=True)
    single = LocalModel(spec, str(path), parallel=1)
    batched = LocalModel(spec, str(path), parallel=4)
    batched.prepare()
    models = [single, batched]
    backwards = work[::-1]
    passes: dict[str, Result] = {}
    sides: list[tuple[str, LocalModel, Work, int]] = [("single", single, work, 1), ("batched", batched, work, 4)]
    if not args.no_reversed:
        sides += [("single-reversed", single, backwards, 1), ("batched-reversed", batched, backwards, 4)]
    for name, model, items, concurrency in sides:
        fresh_caches(llm, models)
        result = timed(name, lambda m=model, i=items, c=concurrency: run_client(m, i, c))  # type: ignore[misc]
        if name.endswith("reversed"):
            result["texts"] = result["texts"][::-1]
            result["responses"] = result["responses"][::-1]
        passes[name] = result
    labels = [w[0] for w in work]
    pairs = {"single vs batched": ("single", "batched"), "single vs single-reversed": ("single", "single-reversed"),
             "batched vs batched-reversed": ("batched", "batched-reversed"),
             "single-reversed vs batched-reversed": ("single-reversed", "batched-reversed")}
    report: dict[str, Any] = {"requests": len(work), "by_label": count(labels), "max_tokens": args.max_tokens,
                              "pairs": {}}
    rows = []
    for title, (a, b) in pairs.items():
        if a not in passes or b not in passes:  # --no-reversed
            continue
        differ = [i for i, (x, y) in enumerate(zip(passes[a]["texts"], passes[b]["texts"], strict=True)) if x != y]
        per = count(labels[i] for i in differ)
        geval = [abs(sa.expected - sb.expected) for ra, rb in zip(passes[a]["responses"], passes[b]["responses"],
                                                                   strict=True)
                 if ra.logprobs and rb.logprobs and (sa := read_scale(ra)) and (sb := read_scale(rb))]
        report["pairs"][title] = {"differ": len(differ), "by_label": per,
                                  "geval_abs_diff_mean": statistics.fmean(geval) if geval else None,
                                  "geval_abs_diff_max": max(geval) if geval else None,
                                  "examples": [{"label": labels[i], "a": passes[a]["texts"][i][:300],
                                                "b": passes[b]["texts"][i][:300]} for i in differ[:5]]}
        rows.append((title, f"{len(differ)}/{len(work)}", f"{len(differ) / len(work):.1%}",
                     ", ".join(f"{k} {v}" for k, v in sorted(per.items())) or "-",
                     f"{statistics.fmean(geval):.4f} / {max(geval):.4f}" if geval else "-"))
    print_table(["pair", "texts differ", "share", "by suite/role", "G-Eval |diff| mean / max"], rows,
                title=f"determinism ({len(work)} requests, max_tokens <= {args.max_tokens})")
    report["passes"] = {k: {"tokens": v["tokens"], "seconds": v["seconds"], "load": v["load"]}
                        for k, v in passes.items()}
    return report


def spread(work: Work, limit: int) -> Work:
    """At most ``limit`` requests, taken from each label in turn (so every suite and role is in the sample)."""
    groups: dict[str, Work] = {}
    for item in work:
        groups.setdefault(item[0], []).append(item)
    out: Work = []
    while len(out) < limit and any(groups.values()):
        for items in groups.values():
            if items and len(out) < limit:
                out.append(items.pop(0))
    return out


def count(items: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("mode", choices=["speed", "determinism"])
    parser.add_argument("--pack", default="qwen2.5-0.5b")
    parser.add_argument("--parallel", default="1,2,4,8", help="batched sides (default 1,2,4,8)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--unshared", action="store_true",
                        help="speed: also each batched side with prefix sharing off (every prompt evaluated whole): "
                             "what sharing prefixes gains")
    parser.add_argument("--shapes", default="long-answers,long-prompts,judges")
    parser.add_argument("--requests", type=int, default=8, help="requests per shape (default 8)")
    parser.add_argument("--max-tokens", type=int, default=None,
                        help="cut each request's max_tokens (speed: 128, determinism: 64)")
    parser.add_argument("--suite", help="also time a real run of this suite per side")
    parser.add_argument("--suite-options", default="{}")
    parser.add_argument("--limit", type=int, default=240, help="determinism: requests (default 240)")
    parser.add_argument("--long-context", type=int, default=24, help="determinism: abstain long_context questions")
    parser.add_argument("--no-reversed", action="store_true",
                        help="determinism: single vs batched only, no reversed passes (each mode's noise floor)")
    parser.add_argument("--home", help="KNOWGAP_HOME holding the assembled pack")
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args(argv)
    if args.max_tokens is None:
        args.max_tokens = 128 if args.mode == "speed" else 64
    if args.home:
        os.environ["KNOWGAP_HOME"] = args.home
    path = ensure_pack(args.pack)
    llm, _ = local_mod._LLAMA_THREAD.submit(load_llama, path).result()
    print(f"{args.pack}: n_threads {llm.n_threads}, n_ctx {llm.n_ctx()}, load average {load():.2f}", file=sys.stderr)
    os.environ["KNOWGAP_HOME"] = tempfile.mkdtemp(prefix="knowgap-batching-home-")  # private response cache
    report = speed(args, path, llm) if args.mode == "speed" else determinism(args, path, llm)
    write_json(args.json, {"benchmark": "local_batching", "mode": args.mode, "pack": args.pack,
                           "threads": llm.n_threads, **report})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
