"""Engine overhead per trial with an instant model, against a bare loop measured in the same run.

    .venv/bin/python benchmarks/engine_overhead.py [--trials 20000] [--json OUT] [--profile]

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
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _shared import INSTANT_SPEC, MAX_TOKENS, SUITE, InstantModel, PhaseClock, case_prompt, print_table, write_json

import knowgap
from knowgap.engine.records import CallRecord, TrialRecord, utcnow
from knowgap.models.types import ChatRequest

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


def run_knowgap(n: int, runs_root: Path, *, use_cache: bool, mode: str, home: Path) -> dict[str, Any]:
    os.environ["KNOWGAP_HOME"] = str(home)  # the response cache lives in KNOWGAP_HOME/cache.sqlite
    PhaseClock.reset()
    model = InstantModel()
    t0 = time.perf_counter()
    result = knowgap.run(SUITE, models={"target": INSTANT_SPEC}, providers={INSTANT_SPEC: model},
                         options={"n": n}, use_cache=use_cache, runs_root=runs_root, progress=False)
    wall = time.perf_counter() - t0
    assert result.manifest.trials_ok == n, result.manifest
    assert PhaseClock.first_trial is not None and PhaseClock.metrics_start is not None
    return {"mode": mode, "trials": n, "wall_s": wall, "setup_s": PhaseClock.first_trial - t0,
            "exec_s": PhaseClock.metrics_start - PhaseClock.first_trial,
            "post_s": t0 + wall - PhaseClock.metrics_start, "provider_calls": model.calls,
            "bytes": (result.path / "trials.jsonl").stat().st_size}


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
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="knowgap-bench-"))
    n = args.trials
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
