"""Engine overhead per trial with an instant model, against a bare loop measured in the same run.

    .venv/bin/python benchmarks/engine_overhead.py [--trials 20000] [--json OUT] [--profile]
    .venv/bin/python benchmarks/engine_overhead.py --otel [--otel-rounds 3] [--trials 5000]
        [--otel-latency-ms 20 --otel-concurrency 16]

knowgap side: ``knowgap.run`` on a tiny suite (N synthetic cases x 1 configuration, one
``ctx.generate("target", ...)`` per trial) with an InstantModel passed through ``providers=``, into a real
run store (trials.jsonl) and a real SQLite response cache in a temporary KNOWGAP_HOME. Three cache modes:

- ``cache on, cold``: every call misses the cache, reaches the model and is written to the cache;
- ``cache on, warm``: the same run again; every call is served from the cache (no provider call);
- ``cache off``: ``use_cache=False``; a run-scoped cache lookup (always a miss) and a cache write per call.

Baseline: an asyncio loop that builds the same request, awaits the same instant model, builds the same
TrialRecord and appends ``model_dump_json()`` + newline to a file, flushing per line as the run store does.

Reported: ms per trial and trials/s end to end (``knowgap.run`` from call to return: setup, execution,
metrics, report), the execution phase alone, and overhead = knowgap per trial - baseline per trial.
Target: overhead < 0.5 ms per trial (> 2,000 trials/s into the run store).

``--otel``: the cost of ``--otel`` (docs/tracing.md), paired in the same run. The cache-off mode runs without and
with ``otel=True``, alternated ``--otel-rounds`` times, every run in a fresh KNOWGAP_HOME; the spans (2 a trial:
the trial and its call) go through the SDK's OTLP/HTTP exporter to a real receiver in another process on 127.0.0.1
(tests/fakes/otlp_receiver.py, which decodes every body and counts its spans), and the run returns only after its
spans were flushed, so the time includes exporting them. Reported: the median ms per trial of each side, the ratio
on / off (end to end and execution phase), the added ms per trial, and the spans the receiver got of those ended.
The instant model is the worst case; ``--otel-latency-ms L --otel-concurrency C`` measures the same with a model
that answers after L ms, C trials in flight (exporting then happens while the model answers).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from _shared import (
    INSTANT_SPEC,
    MAX_TOKENS,
    SUITE,
    BenchCase,
    InstantModel,
    PhaseClock,
    case_prompt,
    print_table,
    write_json,
)

import knowgap
from knowgap.engine.records import CallRecord, TrialRecord, utcnow
from knowgap.models.types import ChatRequest, ChatResponse

TARGET_OVERHEAD_MS = 0.5


async def _bare_loop(n: int, out: Path) -> None:
    model = InstantModel()
    with out.open("a", encoding="utf-8") as fh:
        for i in range(n):
            started, t0 = utcnow(), time.perf_counter()
            request = ChatRequest.simple(case_prompt(i), max_tokens=MAX_TOKENS)
            response = await model.chat(request)
            call = CallRecord(role="target", model=INSTANT_SPEC, request=request, response=response)
            record = TrialRecord(trial_id=f"c{i:07d}|default|r0", case_id=f"c{i:07d}", config_id="default",
                                 config={}, repeat=0, status="ok", calls=[call],
                                 output={"response": response.text}, scores={"correct": response.text == "ok"},
                                 started_at=started, duration_s=time.perf_counter() - t0)
            fh.write(record.model_dump_json() + "\n")
            fh.flush()


def run_baseline(n: int, work: Path) -> dict[str, Any]:
    out = work / f"baseline-{time.monotonic_ns()}.jsonl"
    t0 = time.perf_counter()
    asyncio.run(_bare_loop(n, out))
    wall = time.perf_counter() - t0
    size = out.stat().st_size
    out.unlink()
    return {"mode": "baseline (bare loop)", "trials": n, "wall_s": wall, "exec_s": wall, "bytes": size}


class SlowModel(InstantModel):
    """The instant model's answer after ``latency_s`` (an awaited sleep, as a network call waits)."""

    def __init__(self, latency_s: float) -> None:
        super().__init__()
        self.latency_s = latency_s

    async def chat(self, request: ChatRequest) -> ChatResponse:
        await asyncio.sleep(self.latency_s)
        return await super().chat(request)


def run_knowgap(n: int, runs_root: Path, *, use_cache: bool, mode: str, home: Path,
                otel: bool = False, latency_s: float = 0.0, concurrency: int | None = None) -> dict[str, Any]:
    os.environ["KNOWGAP_HOME"] = str(home)  # the response cache lives in KNOWGAP_HOME/cache.sqlite
    PhaseClock.reset()
    model = SlowModel(latency_s) if latency_s else InstantModel()
    t0 = time.perf_counter()
    result = knowgap.run(SUITE, models={"target": INSTANT_SPEC}, providers={INSTANT_SPEC: model},
                         options={"n": n}, use_cache=use_cache, runs_root=runs_root, progress=False, otel=otel,
                         concurrency=concurrency)
    wall = time.perf_counter() - t0
    assert result.manifest.trials_ok == n, result.manifest
    assert PhaseClock.first_trial is not None and PhaseClock.metrics_start is not None
    return {"mode": mode, "trials": n, "wall_s": wall, "setup_s": PhaseClock.first_trial - t0,
            "exec_s": PhaseClock.metrics_start - PhaseClock.first_trial,
            "post_s": t0 + wall - PhaseClock.metrics_start, "provider_calls": model.calls,
            "bytes": (result.path / "trials.jsonl").stat().st_size}


RECEIVER = Path(__file__).resolve().parents[1] / "tests" / "fakes" / "otlp_receiver.py"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _received(port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/count", timeout=5) as answer:
        return int(answer.read())


def otel_pairs(n: int, work: Path, rounds: int, latency_s: float = 0.0,
               concurrency: int | None = None) -> dict[str, Any]:
    """Cache-off runs without and with otel=True, alternated ``rounds`` times, spans to a receiver process; the
    model answers at once, or after ``latency_s`` with ``concurrency`` trials in flight."""
    port = _free_port()
    receiver = subprocess.Popen([sys.executable, str(RECEIVER), "--port", str(port)])
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                _received(port)
                break
            except OSError:
                if time.monotonic() > deadline or receiver.poll() is not None:
                    raise RuntimeError("the OTLP receiver did not start") from None
                time.sleep(0.2)
        run_knowgap(200, work / "otel-warmup", use_cache=False, mode="warm-up", home=work / "home-otel-w", otel=True)
        off: list[dict[str, Any]] = []
        on: list[dict[str, Any]] = []
        for i in range(rounds):
            for side, rows in ((False, off), (True, on)) if i % 2 == 0 else ((True, on), (False, off)):
                before = _received(port)
                row = run_knowgap(n, work / f"otel-{i}-{side}", use_cache=False, home=work / f"home-otel-{i}-{side}",
                                  mode=f"cache off, otel {'on' if side else 'off'}", otel=side, latency_s=latency_s,
                                  concurrency=concurrency)
                row["spans_received"] = _received(port) - before
                rows.append(row)
    finally:
        receiver.terminate()
        receiver.wait(10)
        os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)

    def med(rows: list[dict[str, Any]], key: str) -> float:
        return statistics.median(1000 * r[key] / n for r in rows)

    return {"rounds": rounds, "trials": n, "spans_per_run": 2 * n,
            "off_ms_per_trial": med(off, "wall_s"), "on_ms_per_trial": med(on, "wall_s"),
            "off_exec_ms_per_trial": med(off, "exec_s"), "on_exec_ms_per_trial": med(on, "exec_s"),
            "spans_received": [r["spans_received"] for r in on], "runs": off + on}


def otel_span_costs(n: int, verdicts: int = 3) -> dict[str, float]:
    """ms per trial to make a trial's spans through knowgap's RunTracer (a trial of ``verdicts`` verdicts and its
    call, into a list) and to encode them with the OTLP exporter's own encoder, in this thread alone."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    from knowgap.engine.records import Verdict
    from knowgap.engine.suite import Configuration, Trial
    from knowgap.engine.tracing import RunTracer, TraceOptions

    kept: list[ReadableSpan] = []

    class Keep(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            kept.extend(spans)
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(Keep()))
    tracer = RunTracer(TraceOptions(provider=provider), run_id="bench-overhead-1", suite=SUITE, version="bench")
    model = InstantModel()
    config = Configuration(id="prompt=plain")
    request = ChatRequest.simple(case_prompt(0), max_tokens=MAX_TOKENS)
    call = CallRecord(role="target", model=INSTANT_SPEC, request=request, response=model.response)
    judged = [Verdict(metric=f"metric_{k}", verdict="right" if k % 2 else "wrong") for k in range(verdicts)]

    async def one_call() -> CallRecord:
        return call

    async def one_trial(i: int) -> TrialRecord:
        await tracer.call(model, "target", request, one_call())
        return TrialRecord(trial_id=f"c{i:07d}|prompt=plain|r0", case_id=f"c{i:07d}", config_id="prompt=plain",
                           calls=[call], verdicts=judged)

    async def trials() -> None:
        for i in range(n):
            trial = Trial(case=BenchCase(id=f"c{i:07d}", prompt=""), config=config)
            await tracer.trial(trial, one_trial(i))

    t0 = time.perf_counter()
    asyncio.run(trials())
    made = time.perf_counter() - t0
    t0 = time.perf_counter()
    for start in range(0, len(kept), 512):
        encode_spans(kept[start:start + 512]).SerializePartialToString()
    encoded = time.perf_counter() - t0
    tracer.close()
    return {"make_ms_per_trial": 1000 * made / n, "encode_ms_per_trial": 1000 * encoded / n, "verdicts": verdicts}


def profile_run(n: int, runs_root: Path, top: int) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    run_knowgap(n, runs_root / "runs", use_cache=False, mode="profile", home=runs_root / "home")
    profiler.disable()
    buf = io.StringIO()
    stats = pstats.Stats(profiler, stream=buf)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=20_000, help="trials per measurement (default 20000)")
    parser.add_argument("--json", metavar="OUT", help="also write the results as JSON to OUT")
    parser.add_argument("--profile", action="store_true",
                        help="also run the cache-off mode under cProfile and print the hot spots")
    parser.add_argument("--profile-trials", type=int, default=5_000)
    parser.add_argument("--keep", action="store_true", help="keep the temporary runs folder and cache")
    parser.add_argument("--otel", action="store_true",
                        help="only measure --otel: cache-off runs without and with otel=True, alternated")
    parser.add_argument("--otel-rounds", type=int, default=3, help="pairs of runs with --otel (default 3)")
    parser.add_argument("--otel-latency-ms", type=float, default=0.0,
                        help="with --otel: the model answers after this many ms (default 0: at once)")
    parser.add_argument("--otel-concurrency", type=int, default=None,
                        help="with --otel: trials in flight at once (default: the model's own limit)")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="knowgap-bench-"))
    n = args.trials
    if args.otel:
        try:
            result = otel_pairs(n, work, args.otel_rounds, args.otel_latency_ms / 1000, args.otel_concurrency)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        result["spans"] = otel_span_costs(min(n, 3000))
        ratio = result["on_ms_per_trial"] / result["off_ms_per_trial"]
        exec_ratio = result["on_exec_ms_per_trial"] / result["off_exec_ms_per_trial"]
        model = f"model answering after {args.otel_latency_ms:g} ms" if args.otel_latency_ms else "instant model"
        print(f"--otel on vs off: {n:,} trials ({model}, concurrency {args.otel_concurrency or 'default'}, cache "
              f"off), {args.otel_rounds} pairs alternated, medians; load average {os.getloadavg()[0]:.2f}")
        print_table(["side", "ms/trial", "exec ms/trial", "trials/s"],
                    [("otel off", result["off_ms_per_trial"], result["off_exec_ms_per_trial"],
                      1000 / result["off_ms_per_trial"]),
                     ("otel on", result["on_ms_per_trial"], result["on_exec_ms_per_trial"],
                      1000 / result["on_ms_per_trial"])])
        print(f"\non / off: {ratio:.3f} end to end (+{result['on_ms_per_trial'] - result['off_ms_per_trial']:.3f} "
              f"ms a trial, flush included), {exec_ratio:.3f} in the execution phase; spans received per run "
              f"{result['spans_received']} of {result['spans_per_run']:,}")
        costs = result["spans"]
        print(f"a trial's spans (the trial with {costs['verdicts']} verdicts and its call), this thread alone: "
              f"{costs['make_ms_per_trial']:.3f} ms to make, {costs['encode_ms_per_trial']:.3f} ms to encode")
        write_json(args.json, {"benchmark": "engine_overhead --otel", "ratio": ratio, "exec_ratio": exec_ratio,
                               "latency_ms": args.otel_latency_ms, "concurrency": args.otel_concurrency,
                               "load_average": os.getloadavg(), **result})
        return 0
    rows: list[dict[str, Any]] = []
    try:
        run_baseline(min(n, 2000), work)  # warm-up: imports, pydantic validators, file system
        run_knowgap(200, work / "warmup", use_cache=True, mode="warm-up", home=work / "home-warmup")
        base_a = run_baseline(n, work)
        # every mode gets its own private KNOWGAP_HOME (never the user's cache); warm re-uses cold's
        rows.append(run_knowgap(n, work / "runs-cold", use_cache=True, mode="knowgap cache on, cold",
                                home=work / "home-a"))
        rows.append(run_knowgap(n, work / "runs-warm", use_cache=True, mode="knowgap cache on, warm",
                                home=work / "home-a"))
        rows.append(run_knowgap(n, work / "runs-off", use_cache=False, mode="knowgap cache off",
                                home=work / "home-b"))
        base_b = run_baseline(n, work)
        baseline = min(base_a, base_b, key=lambda r: r["wall_s"])
        base_ms = 1000 * baseline["wall_s"] / n
        profile = profile_run(args.profile_trials, work / "runs-profile", 30) if args.profile else None
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}", file=sys.stderr)

    for r in rows:
        r["ms_per_trial"] = 1000 * r["wall_s"] / n
        r["trials_per_s"] = n / r["wall_s"]
        r["exec_ms_per_trial"] = 1000 * r["exec_s"] / n
        r["overhead_ms"] = r["ms_per_trial"] - base_ms
        r["exec_overhead_ms"] = r["exec_ms_per_trial"] - base_ms
        r["ratio_vs_baseline"] = r["ms_per_trial"] / base_ms
        r["meets_target"] = r["overhead_ms"] < TARGET_OVERHEAD_MS
    for b in (base_a, base_b):
        b["ms_per_trial"] = 1000 * b["wall_s"] / n
        b["trials_per_s"] = n / b["wall_s"]

    print(f"engine overhead: {n:,} trials, instant model, 1 call per trial "
          f"(target: overhead < {TARGET_OVERHEAD_MS} ms/trial)")
    table = [(b["mode"], b["trials_per_s"], b["ms_per_trial"], b["ms_per_trial"], "", "", "1.00x")
             for b in (base_a, base_b)]
    table += [(r["mode"], r["trials_per_s"], r["ms_per_trial"], r["exec_ms_per_trial"], r["overhead_ms"],
               r["exec_overhead_ms"], f"{r['ratio_vs_baseline']:.2f}x") for r in rows]
    print_table(["mode", "trials/s", "ms/trial", "exec ms/trial", "overhead ms", "exec overhead ms",
                 "vs baseline"], table)
    print(f"\nbaseline = faster of the two bare loops: {base_ms:.3f} ms/trial, "
          f"{baseline['bytes'] / n:.0f} B/trial written. 'exec' = execution phase only "
          "(first trial to metrics()); the rest is setup + metrics + counts + report.")
    for r in rows:
        print(f"  {r['mode']}: setup {r['setup_s']:.2f}s, execution {r['exec_s']:.2f}s, "
              f"metrics+report {r['post_s']:.2f}s, provider calls {r['provider_calls']:,}, "
              f"trials.jsonl {r['bytes'] / n:.0f} B/trial  -> {'OK' if r['meets_target'] else 'MISSED'}")
    if profile:
        print("\ncProfile of the cache-off mode:\n" + profile)
    write_json(args.json, {"benchmark": "engine_overhead", "trials": n, "target_overhead_ms": TARGET_OVERHEAD_MS,
                           "baseline_ms_per_trial": base_ms, "baselines": [base_a, base_b], "knowgap": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
