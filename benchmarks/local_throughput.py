"""Local-model throughput through knowgap vs llama-cpp-python called directly, on the same prompts.

    .venv/bin/python benchmarks/local_throughput.py [--prompts 12] [--max-tokens 64] [--rounds 2]
                                                    [--diagnose] [--json OUT]

The 0.5B pack (``ensure_pack("qwen2.5-0.5b")``, assembled once into KNOWGAP_HOME, default the user cache) is
loaded once with ``knowgap.models.local.load_llama`` -- the loader knowgap itself uses, which turns llama.cpp's
extra (AMX) buffer types off where the build has AMX -- so both sides use the identical ``Llama`` object
(load_llama caches one per file per process; the script checks that only one was loaded).

- ``direct``: ``llm.create_chat_completion(messages, temperature=0, max_tokens)`` in a plain loop, run on
  the same OS thread knowgap uses for llama.cpp (its OpenMP thread team is per calling thread and idle teams
  spin: a baseline on another thread would leave a spinning team that steals the cores from the other side);
- ``knowgap``: ``knowgap.run`` of a suite with one trial per prompt (``use_cache=False``, spec
  ``local:PATH.gguf``): planning, ModelClient, LocalModel (worker thread), run store, metrics, report.

Sides alternate (direct, knowgap, direct, knowgap, ...) to cancel warm-up and drift. Reported: completion
tokens/s per side and the ratio knowgap / direct (target >= 95%), and whether both sides produced the same
text for every prompt. ``--diagnose`` adds two layers to the rotation to locate a gap: ``direct-thread``
(the direct loop in a NEW thread each pass, no knowgap: shows the cost of a second OpenMP team) and
``client`` (knowgap's ModelClient + LocalModel, no runner).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

from _shared import print_table, write_json
from pydantic import Field

import knowgap
from knowgap.engine.gateway import ModelClient, RetryPolicy
from knowgap.engine.records import MetricValue
from knowgap.engine.suite import Case, Configuration, Suite, SuiteOptions, Trial, TrialContext, TrialResult
from knowgap.models import local as local_mod
from knowgap.models.local import LocalModel, load_llama
from knowgap.models.packs import ensure_pack
from knowgap.models.types import ChatRequest
from knowgap.suites import register

PACK = "qwen2.5-0.5b"
TARGET_RATIO = 0.95
PROMPTS = [
    "Explain in two sentences what a refund policy is.",
    "用两句话解释什么是劳动合同。",
    "List three things a library card lets you do.",
    "简要说明押金在租期结束后如何退还。",
    "What should a customer do if a parcel arrives damaged?",
    "请说明公交老年卡的用途。",
    "Summarise why a product warranty matters.",
    "什么是民间借贷？请简短回答。",
    "Write a short polite email asking a landlord to fix a leaking tap.",
    "解释一下什么是个人所得税专项附加扣除。",
    "Give three tips for keeping a password safe.",
    "请用简单的话说明什么是社保转移。",
]


def prompts(k: int) -> list[str]:
    return [PROMPTS[i % len(PROMPTS)] + ("" if i < len(PROMPTS) else f" (variant {i // len(PROMPTS)})")
            for i in range(k)]


class LocalCase(Case):
    prompt: str


class LocalOptions(SuiteOptions):
    prompts: int = Field(12, ge=1)
    max_tokens: int = Field(64, ge=1)


@register
class LocalBenchSuite(Suite):
    name = "bench-local"
    description = "benchmark suite: one real prompt per trial"
    Options = LocalOptions
    options: LocalOptions
    roles: ClassVar[tuple[str, ...]] = ("target",)

    def cases(self) -> list[Case]:
        return [LocalCase(id=f"p{i:03d}", prompt=p) for i, p in enumerate(prompts(self.options.prompts))]

    def configurations(self) -> list[Configuration]:
        return [Configuration(id="default")]

    async def run_trial(self, trial: Trial, ctx: TrialContext) -> TrialResult:
        case = trial.case
        assert isinstance(case, LocalCase)
        response = await ctx.generate("target", request(case.prompt, self.options.max_tokens))
        return TrialResult(output={"text": response.text}, scores={"tokens": response.usage.completion_tokens})

    def metrics(self, records: Any) -> list[MetricValue]:
        tokens = sum(int(r.scores.get("tokens") or 0) for r in records)
        return [MetricValue(name="completion_tokens", group="default", value=float(tokens), kind="count")]


def request(prompt: str, max_tokens: int) -> ChatRequest:
    return ChatRequest.simple(prompt, temperature=0.0, max_tokens=max_tokens)


# the sides ------------------------------------------------------------------------------------------
Result = dict[str, Any]  # {"tokens": int, "seconds": float, "texts": [str], "call_s": float}


def run_direct(llm: Any, texts: list[str], max_tokens: int) -> Result:
    out_texts, tokens, call_s = [], 0, 0.0
    start = time.perf_counter()
    for text in texts:
        r = request(text, max_tokens)
        t0 = time.perf_counter()
        out = llm.create_chat_completion(messages=[m.model_dump() for m in r.messages], temperature=r.temperature,
                                         max_tokens=r.max_tokens)
        call_s += time.perf_counter() - t0
        tokens += out["usage"]["completion_tokens"]
        out_texts.append(out["choices"][0]["message"].get("content") or "")
    return {"tokens": tokens, "seconds": time.perf_counter() - start, "texts": out_texts, "call_s": call_s}


def run_direct_thread(llm: Any, texts: list[str], max_tokens: int) -> Result:
    box: list[Result] = []
    thread = threading.Thread(target=lambda: box.append(run_direct(llm, texts, max_tokens)))
    start = time.perf_counter()
    thread.start()
    thread.join()
    return {**box[0], "seconds": time.perf_counter() - start}


def run_client(spec: str, path: Path, texts: list[str], max_tokens: int) -> Result:
    client = ModelClient(LocalModel(spec, str(path)), run_id="bench", cache=None, use_cache=False,
                         concurrency=None, retry=RetryPolicy())

    async def go() -> list[Any]:
        return [await client.call("target", request(t, max_tokens), 0) for t in texts]

    start = time.perf_counter()
    records = asyncio.run(go())
    seconds = time.perf_counter() - start
    assert all(r.response is not None for r in records), [r.error for r in records]
    return {"tokens": sum(r.response.usage.completion_tokens for r in records), "seconds": seconds,
            "texts": [r.response.text for r in records], "call_s": sum(r.response.latency_s for r in records)}


def run_knowgap(spec: str, texts: list[str], max_tokens: int, runs_root: Path) -> Result:
    start = time.perf_counter()
    result = knowgap.run("bench-local", models={"target": spec}, options={"prompts": len(texts),
                         "max_tokens": max_tokens}, use_cache=False, runs_root=runs_root, progress=False)
    seconds = time.perf_counter() - start
    assert result.manifest.trials_ok == len(texts), result.manifest
    records = sorted(knowgap.iter_trials(result.run_id, runs_root), key=lambda r: r.case_id)
    responses = [r.calls[0].response for r in records]
    assert all(resp is not None for resp in responses)
    return {"tokens": sum(r.usage.completion_tokens for r in responses if r), "seconds": seconds,
            "texts": [r.text for r in responses if r], "call_s": sum(r.latency_s for r in responses if r)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", type=int, default=12, help="prompts per pass (default 12)")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2, help="alternations of the sides (default 2)")
    parser.add_argument("--diagnose", action="store_true",
                        help="also rotate direct-thread and client layers (to locate a gap)")
    parser.add_argument("--home", help="KNOWGAP_HOME holding the assembled pack (default: the usual one)")
    parser.add_argument("--json", metavar="OUT", help="also write the results as JSON to OUT")
    args = parser.parse_args(argv)

    if args.home:
        os.environ["KNOWGAP_HOME"] = args.home
    t0 = time.perf_counter()
    path = ensure_pack(PACK)
    llm, _lock = local_mod._LLAMA_THREAD.submit(load_llama, path).result()
    load_s = time.perf_counter() - t0
    spec = f"local:{path}"
    texts = prompts(args.prompts)
    sides = ["direct", "knowgap"] + (["direct-thread", "client"] if args.diagnose else [])
    work = Path(tempfile.mkdtemp(prefix="knowgap-local-"))
    os.environ["KNOWGAP_HOME"] = str(work / "home")  # the run's response cache: private (pack path is fixed)

    def one(side: str, items: list[str]) -> Result:
        if side == "direct":
            # On knowgap's llama thread: one OpenMP team serves both sides, as in a knowgap process.
            return local_mod._LLAMA_THREAD.submit(run_direct, llm, items, args.max_tokens).result()
        if side == "direct-thread":
            return run_direct_thread(llm, items, args.max_tokens)
        if side == "client":
            return run_client(spec, path, items, args.max_tokens)
        return run_knowgap(spec, items, args.max_tokens, work / "runs")

    for side in sides:  # warm-up: one short pass per side
        one(side, texts[:1])
    passes: dict[str, list[Result]] = {s: [] for s in sides}
    for rnd in range(args.rounds):
        order = sides if rnd % 2 == 0 else sides[1:] + sides[:1]
        for side in order:
            passes[side].append(one(side, texts))
            print(f"  round {rnd + 1} {side:13s} {passes[side][-1]['tokens'] / passes[side][-1]['seconds']:6.2f} "
                  "tokens/s", flush=True)
    assert len(local_mod._LOADED) == 1, "both sides must share one Llama object"

    rows, summary = [], {}
    for side, results in passes.items():
        tokens = sum(r["tokens"] for r in results)
        seconds = sum(r["seconds"] for r in results)
        call_s = sum(r["call_s"] for r in results)
        rates = [r["tokens"] / r["seconds"] for r in results]
        summary[side] = {"tokens": tokens, "seconds": seconds, "call_s": call_s, "tokens_per_s": tokens / seconds,
                         "pass_rates": rates, "tokens_per_call_s": tokens / call_s if call_s else None}
    base = summary["direct"]["tokens_per_s"]
    reference = passes["direct"][0]["texts"]
    for side, s in summary.items():
        same = sum(all(r["texts"][i] == reference[i] for r in passes[side]) for i in range(len(reference)))
        s["ratio"] = s["tokens_per_s"] / base
        s["same_outputs"] = same
        rows.append((side, s["tokens"], s["seconds"], s["tokens_per_s"], statistics.median(s["pass_rates"]),
                     s["tokens_per_call_s"] or 0.0, f"{s['ratio']:.1%}", f"{same}/{len(reference)}"))
    ratio = summary["knowgap"]["ratio"]
    print(f"\nlocal throughput: {PACK}, {args.prompts} prompts x {args.rounds} rounds per side, max_tokens "
          f"{args.max_tokens}, temperature 0, n_threads {llm.n_threads} "
          f"(model load {load_s:.1f}s)")
    print_table(["side", "tokens", "seconds", "tokens/s", "median pass", "tokens/s in call", "vs direct",
                 "same text"], rows)
    print(f"\n'tokens/s in call' counts only the time inside create_chat_completion. knowgap / direct = {ratio:.1%} "
          f"(target >= {TARGET_RATIO:.0%}) -> {'OK' if ratio >= TARGET_RATIO else 'MISSED'}")
    write_json(args.json, {"benchmark": "local_throughput", "pack": PACK, "prompts": args.prompts,
                           "max_tokens": args.max_tokens, "rounds": args.rounds, "target_ratio": TARGET_RATIO,
                           "ratio": ratio, "sides": summary})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
