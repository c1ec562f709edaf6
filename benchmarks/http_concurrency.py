"""HTTP throughput against the Little's-law limit: knowgap, a bare httpx loop and inspect_ai, same server, same run.

    .venv/bin/python benchmarks/http_concurrency.py --requests 2000 --concurrency 64 --latency-ms 50 [--json OUT]
        [--sizes 2000,10000,50000] [--server-workers 1] [--sides knowgap,bare,inspect] [--rounds 3] [--profile]
        [--context-chars 8000] [--cache-rows 500000]

A real OpenAI-compatible server process on 127.0.0.1 (``tests/fakes/latency_server.py``: a raw asyncio HTTP/1.1
server) answers every chat completion after L ms. With C requests in flight no client can do better than
``limit_rps = C / L`` (Little's law). Each side runs in a fresh subprocess (so its peak RSS is its own):

- ``knowgap``: ``knowgap.run`` on a tiny suite (N synthetic cases x 1 configuration, one call per trial; the
  ``bench-overhead`` suite of ``_shared.py``) against ``openai-compat:m@URL`` with ``concurrency=C``, into a real
  run store and a real SQLite response cache (a fresh KNOWGAP_HOME: every call a miss, written to the cache);
  ``knowgap_rps`` = N / the execution phase (first trial to the start of metrics), ``knowgap_rps_end_to_end`` =
  N / the whole ``knowgap.run`` (setup, execution, metrics, reports); ``--cache-rows R`` starts it from a cache
  already holding R responses of other runs (a user's cache after many runs; built once per benchmark, copied into
  each knowgap side's KNOWGAP_HOME): every call still a miss;
- ``bare``: an asyncio loop of C workers posting the same N request bodies with one ``httpx.AsyncClient`` (pool of
  C connections) and parsing each answer's JSON; ``bare-sharded``: the same loop over knowgap's ``HttpPool`` with httpx
  (clients of 8 connections: one httpx pool's costs grow with the square of the calls in flight,
  encode/httpx#3215); ``bare-aiohttp``: the same loop with aiohttp. The baseline is the fastest of the three;
- ``knowgap-splitK`` (only when asked for in ``--sides``, e.g. ``knowgap-split2``): K knowgap processes at once,
  each with its own run store and cache, N / K trials and concurrency C / K: a bound on what running one run's
  trials in K processes could reach on this machine, before any cost of passing trials between them;
- ``knowgap-progress`` (only when asked for in ``--sides``): the knowgap side with its live rich progress bar
  drawing as on a terminal;
- ``inspect``: inspect_ai (if importable) on the same N prompts with ``generate()`` and ``match()``, its
  ``openai-api`` provider pointed at the server, ``max_connections=C``, logs into a temporary folder.

Each side also reports its process's CPU time per request over the timed phase (``cpu_ms_per_request``): when the
client is CPU-bound (C = 256 on 2 cores) that is its cost per request, and it moves far less with the machine's
load than requests/s. ``--rounds R`` runs the sides R times, alternated, and reports each round and the medians.

Goal: knowgap >= 90% of the best bare loop at C = 64 and C = 256 with L = 50 ms; peak RSS flat as N grows
(``--sizes``: one knowgap run per size, each in a fresh process; ``rss_ratio`` = largest / smallest).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import hashlib
import io
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _shared import COLLECTOR, MAX_TOKENS, SUITE, PhaseClock, case_prompt, peak_rss_mb, print_table, write_json

REPO = Path(__file__).resolve().parents[1]
SERVER = REPO / "tests" / "fakes" / "latency_server.py"
TARGET_RATIO = 0.9


# sides (each in its own process) ---------------------------------------------------------------------------


def side_knowgap(url: str, n: int, concurrency: int, work: Path, profile: bool,
                 progress: bool = False, context_chars: int = 0) -> dict[str, Any]:
    os.environ["KNOWGAP_HOME"] = str(work / "home")  # a private response cache, never the user's
    if progress:
        os.environ["FORCE_COLOR"] = "1"  # rich draws its live bar as on a terminal (stderr is discarded)
    import knowgap

    spec = f"openai-compat:m@{url}"
    PhaseClock.reset()
    COLLECTOR.start()
    profiler = cProfile.Profile() if profile else None
    t0 = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    result = knowgap.run(SUITE, models={"target": spec}, options={"n": n, "context_chars": context_chars},
                         concurrency=concurrency,
                         runs_root=work / "runs", progress=progress)
    if profiler is not None:
        profiler.disable()
    wall = time.perf_counter() - t0
    assert result.manifest.trials_ok == n, result.manifest.error_causes
    assert PhaseClock.first_trial is not None and PhaseClock.metrics_start is not None
    exec_s = PhaseClock.metrics_start - PhaseClock.first_trial
    assert PhaseClock.first_trial_cpu is not None and PhaseClock.metrics_start_cpu is not None
    cpu_s = PhaseClock.metrics_start_cpu - PhaseClock.first_trial_cpu
    assert PhaseClock.first_trial_gc is not None and PhaseClock.metrics_start_gc is not None
    gc_s = PhaseClock.metrics_start_gc - PhaseClock.first_trial_gc
    try:
        from knowgap.models.http_pool import http_client_kind

        client = http_client_kind()
    except ImportError:  # a knowgap from before HttpPool (PYTHONPATH=OLD/src to compare)
        client = "httpx, one client (before HttpPool)"
    out: dict[str, Any] = {"rps": n / exec_s, "rps_end_to_end": n / wall, "exec_s": exec_s, "wall_s": wall,
                           "requests": n, "exec_from": PhaseClock.first_trial, "exec_to": PhaseClock.metrics_start,
                           "cpu_ms_per_request": 1000 * cpu_s / n, "gc_ms_per_request": 1000 * gc_s / n,
                           "provider_calls": result.provider_calls, "peak_rss_mb": peak_rss_mb(),
                           "exec_peak_rss_mb": PhaseClock.rss_at_metrics_start_mb, "http_client": client}
    if profiler is not None:
        buf = io.StringIO()
        stats = pstats.Stats(profiler, stream=buf)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(40)
        out["profile"] = buf.getvalue()
    return out


def _body(i: int, context_chars: int) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": case_prompt(i, context_chars)}],
            "temperature": 0.0, "max_tokens": MAX_TOKENS}


def _client(kind: str, concurrency: int) -> Any:
    """``bare``: one httpx.AsyncClient with C connections (the loop a user would write); ``bare-sharded``: knowgap's
    HttpPool alone (httpx clients of 8 connections each); ``bare-aiohttp``: an aiohttp session, C connections."""
    import httpx

    timeout = httpx.Timeout(None, connect=10.0)
    if kind == "bare":
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        return httpx.AsyncClient(limits=limits, timeout=timeout)
    from knowgap.models.http_pool import CLIENT_ENV, HttpPool

    os.environ[CLIENT_ENV] = "httpx"  # the shards (with aiohttp installed the pool would use it)
    return HttpPool(headers={}, timeout=timeout, connections=concurrency)


async def _bare(kind: str, url: str, n: int, concurrency: int, context_chars: int) -> tuple[float, float]:
    todo = iter(range(n))
    texts = 0
    if kind == "bare-aiohttp":
        import aiohttp

        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency))

        async def post(i: int) -> str:
            async with session.post(f"{url}/chat/completions", json=_body(i, context_chars)) as resp:
                resp.raise_for_status()
                return str((await resp.json())["choices"][0]["message"]["content"])
        close = session.close
    else:
        client = _client(kind, concurrency)

        async def post(i: int) -> str:
            resp = await client.post(f"{url}/chat/completions", json=_body(i, context_chars))
            if resp.status_code != 200:
                raise RuntimeError(f"HTTP {resp.status_code}: {resp.text[:200]}")
            return str(resp.json()["choices"][0]["message"]["content"])
        close = client.aclose

    async def worker() -> None:
        nonlocal texts
        for i in todo:
            text = await post(i)
            texts += bool(text)

    t0, cpu0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    await close()
    assert texts == n
    return elapsed, cpu


def side_bare(kind: str, url: str, n: int, concurrency: int, context_chars: int = 0) -> dict[str, Any]:
    COLLECTOR.start()
    elapsed, cpu = asyncio.run(_bare(kind, url, n, concurrency, context_chars))
    return {"rps": n / elapsed, "exec_s": elapsed, "cpu_ms_per_request": 1000 * cpu / n,
            "gc_ms_per_request": 1000 * COLLECTOR.seconds / n, "peak_rss_mb": peak_rss_mb()}


def side_inspect(url: str, n: int, concurrency: int, work: Path, context_chars: int = 0) -> dict[str, Any]:
    """inspect_ai's engine against the same server. Its ``openai-api`` provider needs the ``openai`` package; when
    that is missing, a minimal inspect ModelAPI posts the same chat-completions bodies over knowgap's HttpPool (the
    same transport as the knowgap side: aiohttp when installed), so the sides differ in their engines only."""
    try:
        from inspect_ai import Task
        from inspect_ai import eval as inspect_eval
        from inspect_ai.dataset import MemoryDataset, Sample
        from inspect_ai.model import ModelAPI, ModelOutput, modelapi
        from inspect_ai.scorer import match
        from inspect_ai.solver import generate
    except ImportError as exc:
        return {"rps": None, "why": f"inspect_ai is not importable ({exc})"}
    try:
        import openai  # noqa: F401

        model, provider = "openai-api/bench/m", "openai-api (openai SDK)"
        os.environ["BENCH_API_KEY"] = "none"  # the provider wants a key; the server ignores it
        os.environ["BENCH_BASE_URL"] = url
    except ImportError:
        import httpx

        from knowgap.models.http_pool import HttpPool

        class BenchAPI(ModelAPI):
            def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                         **_: Any) -> None:
                super().__init__(model_name, base_url=base_url, api_key=api_key)
                self.pool = HttpPool(headers={}, timeout=httpx.Timeout(None, connect=10.0), connections=concurrency)

            async def generate(self, input: Any, tools: Any, tool_choice: Any, config: Any) -> ModelOutput:  # noqa: A002
                messages = [{"role": m.role, "content": m.text} for m in input]
                resp = await self.pool.post(f"{url}/chat/completions", json={
                    "model": "m", "messages": messages, "temperature": 0.0, "max_tokens": MAX_TOKENS})
                if resp.status_code != 200:
                    raise RuntimeError(f"HTTP {resp.status_code}: {resp.text[:200]}")
                return ModelOutput.from_content("m", resp.json()["choices"][0]["message"]["content"])

            def max_connections(self) -> int:
                return concurrency

        modelapi(name="knowgapbench")(BenchAPI)
        model, provider = "knowgapbench/m", "a minimal ModelAPI over HttpPool (no openai package)"
    task = Task(dataset=MemoryDataset([Sample(input=case_prompt(i, context_chars), target="ok") for i in range(n)]),
                solver=generate(), scorer=match())
    t0 = time.perf_counter()
    logs = inspect_eval(task, model=model, max_connections=concurrency, max_samples=concurrency,
                        max_tokens=MAX_TOKENS, temperature=0.0, log_dir=str(work / "inspect-logs"), display="none")
    elapsed = time.perf_counter() - t0
    log = logs[0]
    samples = log.results.completed_samples if log.results else 0
    if log.status != "success" or samples != n:
        return {"rps": None, "why": f"inspect_ai ended {log.status} with {samples} of {n} samples: {log.error}"}
    return {"rps": n / elapsed, "exec_s": elapsed, "peak_rss_mb": peak_rss_mb(), "provider": provider}


def filled_cache(path: Path, rows: int) -> Path:
    """A response cache at ``path`` holding ``rows`` responses of other runs (keys as random as real ones)."""
    import sqlite3

    from knowgap.engine.cache import ResponseCache

    ResponseCache(path).close()  # the schema knowgap writes
    answer = json.dumps({"text": "A typical short answer of a model to one question of a suite.",
                         "usage": {"prompt_tokens": 40, "completion_tokens": 12}, "latency_s": 0.8})
    db = sqlite3.connect(str(path), isolation_level=None)
    try:
        db.execute("BEGIN")
        db.executemany("INSERT INTO responses (key, spec, run_id, response, created, identity) VALUES (?,?,?,?,?,?)",
                       ((hashlib.sha256(f"earlier call {i}".encode()).hexdigest(), "openai-compat:old@http://x/v1",
                         f"earlier-run-{i // 1000}", answer, time.time(), "old") for i in range(rows)))
        db.execute("COMMIT")
    finally:
        db.close()
    return path


def run_side(side: str, url: str, n: int, concurrency: int, profile: bool = False,
             context_chars: int = 0, cache: Path | None = None) -> dict[str, Any]:
    """One side in a fresh process (``knowgap-splitK``: K at once); its JSON result. ``cache``: a response cache
    each knowgap process starts from."""
    parts = int(side.removeprefix("knowgap-split")) if side.startswith("knowgap-split") else 1
    works = [Path(tempfile.mkdtemp(prefix=f"knowgap-http-{side}-")) for _ in range(parts)]
    try:
        procs = []
        for i, work in enumerate(works):
            if cache is not None and side.startswith("knowgap"):
                (work / "home").mkdir()
                shutil.copyfile(cache, work / "home" / "cache.sqlite")
            share = n // parts + (1 if i < n % parts else 0)
            cmd = [sys.executable, __file__, "--side", "knowgap" if parts > 1 else side, "--url", url,
                   "--requests", str(share), "--concurrency", str(max(1, concurrency // parts)), "--work", str(work),
                   "--context-chars", str(context_chars)] + (["--profile"] if profile and parts == 1 else [])
            procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        streams = [proc.communicate() for proc in procs]  # every process waited for, failed or not
        for proc, (_, stderr) in zip(procs, streams, strict=True):
            if proc.returncode != 0:
                return {"rps": None, "why": f"{side} side failed (exit {proc.returncode}): {stderr[-2000:]}"}
        outs = [dict(json.loads(stdout.strip().splitlines()[-1])) for stdout, _ in streams]
        return outs[0] if parts == 1 else _together(outs, n)
    finally:
        for work in works:
            shutil.rmtree(work, ignore_errors=True)


def _together(outs: list[dict[str, Any]], n: int) -> dict[str, Any]:
    """K knowgap processes run at once as one side: ``n`` trials over the span from the first one's first trial to
    the last one's end of execution (perf_counter is the system's monotonic clock, the same in every process)."""
    span = max(o["exec_to"] for o in outs) - min(o["exec_from"] for o in outs)
    return {"rps": n / span, "exec_s": span, "processes": len(outs),
            "rps_end_to_end": n / max(o["wall_s"] for o in outs),
            "cpu_ms_per_request": sum(o["cpu_ms_per_request"] * o["requests"] for o in outs) / n,
            "gc_ms_per_request": sum(o["gc_ms_per_request"] * o["requests"] for o in outs) / n,
            "peak_rss_mb": sum(o["peak_rss_mb"] for o in outs), "http_client": outs[0].get("http_client"),
            "each_rps": [o["rps"] for o in outs]}


# driver -------------------------------------------------------------------------------------------------------


def _server(latency_ms: float, workers: int) -> Any:
    sys.path.insert(0, str(REPO))
    from tests.fakes.latency_server import latency_server

    return latency_server("--latency-ms", str(latency_ms), "--workers", str(workers))


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median requests/s (the lower middle one of an even count); a failed run when all failed."""
    done = sorted((r for r in runs if r.get("rps")), key=lambda r: r["rps"])
    return dict(done[(len(done) - 1) // 2]) if done else runs[0]


def _ratio(results: dict[str, dict[str, Any]]) -> float | None:
    """knowgap / the best bare loop, within one round."""
    bares = [r["rps"] for side, r in results.items() if side.startswith("bare") and r.get("rps")]
    knowgap = results.get("knowgap", {}).get("rps")
    return knowgap / max(bares) if knowgap and bares else None


def measure(args: argparse.Namespace, sides: list[str]) -> dict[str, Any]:
    n, c, latency_ms = args.requests, args.concurrency, args.latency_ms
    with _server(latency_ms, args.server_workers) as server, tempfile.TemporaryDirectory() as tmp:
        cache = filled_cache(Path(tmp) / "cache.sqlite", args.cache_rows) if args.cache_rows else None
        run_side("bare", server.base_url, min(n, 500), c)  # warm-up: the server's and the OS's first connections
        rounds = [{side: run_side(side, server.base_url, n, c, profile=args.profile and side == "knowgap" and r == 0,
                                  context_chars=args.context_chars, cache=cache)
                   for side in sides} for r in range(args.rounds)]  # sides alternated: A, B, A, B
        results = {side: _median_run([rnd[side] for rnd in rounds]) for side in sides}
        if args.profile and "knowgap" in results:
            results["knowgap"]["profile"] = rounds[0]["knowgap"].get("profile")
        if "knowgap-progress" in results:
            results["knowgap-progress"]["note"] = "knowgap with its live progress bar"
        sizes: list[dict[str, Any]] = []
        for size in args.sizes:
            r = run_side("knowgap", server.base_url, size, c, cache=cache)
            sizes.append({"requests": size, "rps": r.get("rps"), "exec_peak_rss_mb": r.get("exec_peak_rss_mb"),
                          "peak_rss_mb": r.get("peak_rss_mb")})
    limit = c / (latency_ms / 1000)
    knowgap, bare = results.get("knowgap", {}), results.get("bare", {})
    inspect = results.get("inspect", {})
    bares = {side: r["rps"] for side, r in results.items() if side.startswith("bare") and r.get("rps")}
    with_bar = results.get("knowgap-progress", {})
    best = max(bares.values()) if bares else None
    ratios = [_ratio(rnd) for rnd in rounds]
    ratio = statistics.median(r for r in ratios if r is not None) if any(r is not None for r in ratios) else None
    rss = [s["peak_rss_mb"] for s in sizes if s.get("peak_rss_mb")]
    exec_rss = [s["exec_peak_rss_mb"] for s in sizes if s.get("exec_peak_rss_mb")]
    return {
        "benchmark": "http_concurrency", "requests": n, "concurrency": c, "latency_ms": latency_ms,
        "context_chars": args.context_chars, "cache_rows": args.cache_rows,
        "server_workers": args.server_workers, "limit_rps": limit,
        "knowgap_rps": knowgap.get("rps"), "knowgap_rps_end_to_end": knowgap.get("rps_end_to_end"),
        "knowgap_http_client": knowgap.get("http_client"), "knowgap_progress_rps": with_bar.get("rps"),
        "bare_rps": bare.get("rps"), "bare_sharded_rps": bares.get("bare-sharded"),
        "bare_aiohttp_rps": bares.get("bare-aiohttp"), "best_bare_rps": best, "inspect_rps": inspect.get("rps"),
        "knowgap_vs_best_bare": ratio,
        "knowgap_vs_bare": knowgap["rps"] / bare["rps"] if knowgap.get("rps") and bare.get("rps") else None,
        "best_bare_vs_limit": best / limit if best else None,
        "knowgap_peak_rss_mb": knowgap.get("peak_rss_mb"), "bare_peak_rss_mb": bare.get("peak_rss_mb"),
        "inspect_peak_rss_mb": inspect.get("peak_rss_mb"), "inspect_why": inspect.get("why"),
        "meets_target": ratio is not None and ratio >= TARGET_RATIO,
        "rounds": [{side: {"rps": r.get("rps"), "cpu_ms_per_request": r.get("cpu_ms_per_request"),
                           "gc_ms_per_request": r.get("gc_ms_per_request")}
                    for side, r in rnd.items()} for rnd in rounds],
        "knowgap_vs_best_bare_by_round": ratios,
        "sizes": sizes, "rss_ratio": max(rss) / min(rss) if len(rss) > 1 else None,
        "exec_rss_ratio": max(exec_rss) / min(exec_rss) if len(exec_rss) > 1 else None,
        "sides": {k: {kk: vv for kk, vv in v.items() if kk != "profile"} for k, v in results.items()},
        "profile": knowgap.get("profile"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests (= trials) per side (default 2000)")
    parser.add_argument("--concurrency", type=int, default=64, help="requests in flight (default 64)")
    parser.add_argument("--latency-ms", type=float, default=50.0, help="server latency per answer (default 50)")
    parser.add_argument("--json", metavar="OUT", help="also write the results as JSON to OUT")
    parser.add_argument("--sides", default="knowgap,bare,bare-sharded,bare-aiohttp,inspect",
                        help="which sides to run (default: all but knowgap-progress, knowgap with its live "
                             "progress bar)")
    parser.add_argument("--sizes", default="", help="also run knowgap alone at these sizes for its peak RSS "
                                                    "(e.g. 2000,10000,50000)")
    parser.add_argument("--server-workers", type=int, default=1, help="server processes (default 1)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run the sides this many times, alternated (A, B, A, B); the figures are each side's "
                             "median run and the median of the rounds' knowgap / best bare ratios (default 1)")
    parser.add_argument("--profile", action="store_true", help="cProfile the knowgap side and print its hot spots")
    parser.add_argument("--context-chars", type=int, default=0,
                        help="characters of English policy text before each question, on every side (default 0: "
                             "a one-line question; 4000-32000 is the size of a retrieval prompt)")
    parser.add_argument("--cache-rows", type=int, default=0,
                        help="start the knowgap side from a response cache holding this many responses of other "
                             "runs (default 0: an empty cache; 500000 is about 270 MB)")
    parser.add_argument("--side", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    if args.side:  # one side, in this (fresh) process: print its result as one JSON line
        work = Path(args.work)
        if args.side in ("knowgap", "knowgap-progress"):
            out = side_knowgap(args.url, args.requests, args.concurrency, work, args.profile,
                               progress=args.side == "knowgap-progress", context_chars=args.context_chars)
        elif args.side.startswith("bare"):
            out = side_bare(args.side, args.url, args.requests, args.concurrency, args.context_chars)
        else:
            out = side_inspect(args.url, args.requests, args.concurrency, work, args.context_chars)
        print(json.dumps(out))
        return 0

    sides = [s.strip() for s in args.sides.split(",") if s.strip()]
    data = measure(args, sides)
    print(f"HTTP throughput: {data['requests']:,} requests, concurrency {data['concurrency']}, server latency "
          f"{data['latency_ms']:g} ms, {data['server_workers']} server process(es); limit C/L = "
          f"{data['limit_rps']:,.0f} requests/s"
          + (f"; {data['context_chars']:,} characters of context in every prompt" if data["context_chars"] else "")
          + (f"; knowgap's cache starts with {data['cache_rows']:,} responses" if data["cache_rows"] else ""))
    if len(data["rounds"]) > 1:
        sides = list(data["rounds"][0])
        print_table(["round"] + [f"{side} /s" for side in sides] + [f"{side} CPU ms" for side in sides]
                    + ["knowgap / best bare"],
                    [[i + 1] + [rnd[side]["rps"] for side in sides]
                     + [rnd[side]["cpu_ms_per_request"] for side in sides]
                     + [data["knowgap_vs_best_bare_by_round"][i]] for i, rnd in enumerate(data["rounds"])],
                    title="each round (CPU ms: this side's process CPU time per request, execution phase)")
        print("\nmedian run of each side:")
    rows = [(side, r.get("rps"), (r["rps"] / data["limit_rps"]) if r.get("rps") else None,
             (r["rps"] / data["best_bare_rps"]) if r.get("rps") and data["best_bare_rps"] else None,
             r.get("cpu_ms_per_request"), r.get("gc_ms_per_request"), r.get("peak_rss_mb"))
            for side, r in data["sides"].items()]
    print_table(["side", "requests/s", "of limit", "of best bare", "CPU ms/request", "GC ms/request", "peak RSS MiB"],
                rows)
    if data["knowgap_rps_end_to_end"]:
        print(f"knowgap end to end (setup + execution + metrics + reports): {data['knowgap_rps_end_to_end']:,.0f}/s")
    if data["inspect_why"]:
        print(f"inspect_ai: {data['inspect_why']}")
    if data["sizes"]:
        print_table(["requests", "knowgap requests/s", "execution peak RSS MiB", "whole run peak RSS MiB"],
                    [(s["requests"], s["rps"], s["exec_peak_rss_mb"], s["peak_rss_mb"]) for s in data["sizes"]],
                    title="memory by size (execution: up to metrics(); whole run: metrics, reports included)")
        if data["rss_ratio"] and data["exec_rss_ratio"]:
            print(f"peak RSS largest / smallest: execution {data['exec_rss_ratio']:.2f}x, "
                  f"whole run {data['rss_ratio']:.2f}x")
    if data["knowgap_vs_best_bare"] is not None:
        print(f"\nknowgap / best bare loop = {data['knowgap_vs_best_bare']:.2f} (target >= {TARGET_RATIO}): "
              f"{'met' if data['meets_target'] else 'MISSED'}")
    if data["profile"]:
        print("\ncProfile of the knowgap side:\n" + data["profile"])
    write_json(args.json, {k: v for k, v in data.items() if k != "profile"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
