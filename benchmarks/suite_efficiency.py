"""How much of a real suite run on the embedded 0.5B model is model time, and where the rest goes.

    .venv/bin/python benchmarks/suite_efficiency.py [--suite starter] [--sample 4] [--option KEY=VALUE ...]
                                                    [--profile] [--json OUT]

One ``knowgap.run`` of a shipped suite (default ``starter --sample 4``: 8 trials, one target call each) on the 0.5B
pack (``local:qwen2.5-0.5b``, assembled into KNOWGAP_HOME, default the user cache, on first use), every role on it,
with ``use_cache=False`` (so every call reaches the model; its responses land in that home's response cache, as any
run's do) and the runs folder in a temporary directory. Baseline, from the run's own records: the pure model time,
the sum of ``ChatResponse.latency_s`` of the calls that reached the model (llama.cpp's ``create_chat_completion``
alone, timed inside the provider's lock).

Reported: wall time of the run (from ``knowgap.run`` to its return, reports included) and model time / wall time,
with and without loading the model (the load is timed apart, before the run: ``LocalModel.prepare``); the goal is
>= 95% of the wall time spent in the model, the load excluded. Where the rest goes, phase by phase from the
records' timestamps: setup (``knowgap.run`` until the first trial starts: suite, dataset, manifest, the
identity's sha256), non-model time inside trials (prompt building, scoring, rule judges, embeddings: the trials'
``duration_s`` minus their calls' latency), between trials (store appends, the progress bar, scheduling) and after
the last trial (metrics, report.md and report.html); the phases assume trials run one at a time, as the embedded
model's default concurrency of 1 makes them. ``--profile`` adds the main thread's cProfile, top functions
by own time (the model runs on the llama thread and shows there as waiting).

The script prints the machine's load average before and after: a ratio measured while other jobs run the CPU says
little (the model slows, so the ratio rises, while the rest slows too).

``--coalescing [--suites abstain,extract,clarify,partial,starter] [--concurrency 32] [--delay-ms 20]`` measures
instead what making identical in-flight calls once (:mod:`knowgap.engine.inflight`) saves: each suite runs twice
(``--sample`` cases, ``use_cache=False``) on an in-process model that answers every request after ``--delay-ms``
(so calls overlap as an HTTP server's do; the embedded model runs one call at a time), once with coalescing off
and once on. Reported per suite: the calls the trials asked for, the requests that reached the model, the distinct
ones among them, and the calls saved. abstain runs its HyDE retrieval under three system prompts (its one request
repeated across configurations).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from _shared import print_table, write_json

PACK = "qwen2.5-0.5b"
TARGET_SHARE = 0.95
DELAYED_SPEC = "delayed:bench"
SUITE_OPTIONS: dict[str, dict[str, Any]] = {"abstain": {"retrieval": ["hyde"],
                                                        "prompts": ["basic", "conservative", "opinion"]}}
REPLY = '{"summary": "ok", "sentiment": "positive", "conflicting_signals": false} I cannot answer from the context.'


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def _option(text: str) -> tuple[str, Any]:
    key, _, value = text.partition("=")
    if not value:
        raise SystemExit(f"--option {text!r}: expected KEY=VALUE")
    if value.lower() in ("true", "false"):
        return key, value.lower() == "true"
    try:
        return key, int(value)
    except ValueError:
        return key, value.split(",") if "," in value else value


def coalescing(suites: list[str], sample: int, concurrency: int, delay_s: float) -> list[dict[str, Any]]:
    """Each suite run with in-flight coalescing off, then on: calls asked, requests sent, distinct requests."""
    import asyncio

    import knowgap
    from knowgap.engine.inflight import InFlight
    from knowgap.models.base import ChatModel
    from knowgap.models.types import ChatRequest, ChatResponse, Usage
    from knowgap.suites import get_suite

    class Delayed(ChatModel):
        spec = DELAYED_SPEC
        default_concurrency = concurrency

        def __init__(self) -> None:
            self.sent: list[str] = []

        async def chat(self, request: ChatRequest) -> ChatResponse:
            self.sent.append(request.fingerprint())
            await asyncio.sleep(delay_s)
            return ChatResponse(text=REPLY, usage=Usage(prompt_tokens=10, completion_tokens=5), latency_s=delay_s)

    out = []
    for suite in suites:
        options = {"sample": sample, **SUITE_OPTIONS.get(suite, {})}
        row: dict[str, Any] = {"suite": suite, "options": options}
        for enabled in (False, True):
            InFlight.enabled = enabled
            model = Delayed()
            with tempfile.TemporaryDirectory() as tmp:
                t = time.perf_counter()
                result = knowgap.run(suite, models=dict.fromkeys(get_suite(suite).roles, DELAYED_SPEC),
                                     options=options, providers={DELAYED_SPEC: model}, concurrency=concurrency,
                                     use_cache=False, runs_root=tmp, progress=False)
                wall = time.perf_counter() - t
                asked = sum(len(r.calls) for r in knowgap.iter_trials(result.run_id, runs_root=tmp))
            side = "on" if enabled else "off"
            row |= {"asked": asked, "distinct": len(set(model.sent)), f"sent_{side}": len(model.sent),
                    f"wall_{side}_s": wall}
        InFlight.enabled = True
        out.append(row)
    print_table(["suite", "calls asked", "sent (off)", "sent (on)", "distinct", "saved"],
                [(r["suite"], r["asked"], r["sent_off"], r["sent_on"], r["distinct"], r["sent_off"] - r["sent_on"])
                 for r in out],
                title=f"identical in-flight calls made once: --sample {sample}, --concurrency {concurrency}, "
                      f"model answers after {delay_s * 1000:.0f} ms")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="starter")
    parser.add_argument("--sample", type=int, default=4)
    parser.add_argument("--option", action="append", default=[], help="a suite option, KEY=VALUE (repeatable)")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--coalescing", action="store_true", help="measure in-flight coalescing instead")
    parser.add_argument("--suites", default="abstain,extract,clarify,partial,starter")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.coalescing:
        rows = coalescing(args.suites.split(","), args.sample, args.concurrency, args.delay_ms / 1000)
        write_json(args.json, {"coalescing": rows, "sample": args.sample, "concurrency": args.concurrency,
                               "delay_ms": args.delay_ms})
        return 0

    import knowgap
    from knowgap.models.local import LocalModel
    from knowgap.suites import get_suite

    spec = f"local:{PACK}"
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        LocalModel(spec, PACK).prepare()  # assembled (first time) and loaded once per process: the run reuses it
        load_s = time.perf_counter() - t
        roles = get_suite(args.suite).roles
        options: dict[str, Any] = {"sample": args.sample, **dict(_option(o) for o in args.option)}
        profiler = cProfile.Profile() if args.profile else None
        started = time.time()
        t = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        result = knowgap.run(args.suite, models=dict.fromkeys(roles, spec), options=options, use_cache=False,
                             runs_root=Path(tmp) / "runs", progress=False)
        if profiler is not None:
            profiler.disable()
        wall = time.perf_counter() - t
        ended = time.time()
        records = knowgap.iter_trials(result.run_id, runs_root=Path(tmp) / "runs")
    load_after = os.getloadavg()

    calls = [c for r in records for c in r.calls if c.response is not None and not c.cached]
    model_s = sum(c.response.latency_s for c in calls if c.response is not None)
    in_trials = sum(r.duration_s for r in records)
    starts = sorted(_seconds(r.started_at) for r in records)
    ends = sorted(_seconds(r.started_at) + r.duration_s for r in records)
    setup = starts[0] - started if starts else wall
    after = ended - ends[-1] if ends else 0.0
    between = max(0.0, wall - setup - after - in_trials)
    share = model_s / wall if wall else 0.0
    share_with_load = model_s / (wall + load_s) if wall else 0.0
    threads = result.manifest.models.get("target", {})
    print(f"{args.suite} {options} on {PACK}: {len(records)} trials, {len(calls)} model calls "
          f"({sum(c.response.usage.completion_tokens for c in calls if c.response)} completion tokens), "
          f"threads {threads.get('threads', '?')} ({threads.get('threads_why', '')}), "
          f"status {result.status}")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (2-core shared machine: "
          "above ~0.3 the figures are measured under load)")
    parts = [
        ("model (sum of latency_s)", model_s, model_s / wall),
        ("non-model inside trials (prompts, scoring, judges, embeddings)", in_trials - model_s,
         (in_trials - model_s) / wall),
        ("setup (until the first trial starts)", setup, setup / wall),
        ("between trials (store, progress, scheduling)", between, between / wall),
        ("after the last trial (metrics, reports)", after, after / wall),
        ("wall (knowgap.run)", wall, 1.0),
        ("model load (prepare, before the run)", load_s, load_s / wall),
    ]
    print_table(["part", "seconds", "share of wall"], parts, title="where the time goes")
    verdict = "met" if share >= TARGET_SHARE else "NOT met"
    print(f"\nmodel time / wall = {share:.1%} (target >= {TARGET_SHARE:.0%}: {verdict}); "
          f"with the model load counted: {share_with_load:.1%}")
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
        print("\nmain thread, top 25 by own time:\n" + out.getvalue())
    write_json(args.json, {"suite": args.suite, "options": options, "trials": len(records), "calls": len(calls),
                           "wall_s": wall, "model_s": model_s, "model_share": share,
                           "model_share_with_load": share_with_load, "load_s": load_s, "setup_s": setup,
                           "non_model_in_trials_s": in_trials - model_s, "between_trials_s": between,
                           "after_s": after, "loadavg_before": load_before, "loadavg_after": load_after,
                           "threads": threads.get("threads"), "threads_why": threads.get("threads_why")})
    return 0


if __name__ == "__main__":
    sys.exit(main())
