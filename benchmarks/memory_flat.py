"""Memory stays flat as trials grow: peak RSS of 1k / 10k / 100k instant-model trials, each in a fresh process.

    .venv/bin/python benchmarks/memory_flat.py [--sizes 1000,10000,100000] [--shape cases,repeats]
                                               [--json OUT] [--trace]

For each size three fresh subprocesses run:

- ``run``: ``knowgap.run`` of the benchmark suite with the instant model into a real run store and response
  cache. Peak RSS (``ru_maxrss``) is read after the imports, when ``metrics()`` starts (= peak of setup +
  execution), when it ends, and after ``knowgap.run`` returns: the **whole run**, with the status count pass
  and every report it writes (report.md, report.html).
- ``metrics``: the metrics phase alone on the stored run (``suite.metrics(store.iter_records())``, then the
  runner's status count over ``iter_records()``), so its own peak is not hidden by the execution peak.
- ``report``: what ``knowgap report RUN`` does on the stored run, alone: ``report.html`` rewritten, then the
  ``--md`` summary, then ``--csv`` (peak RSS after each, cumulative).

Two shapes: ``cases`` (N cases x 1 configuration: the suite's dataset itself grows with N) and ``repeats``
(1,000 cases x N/1,000 repeats: the dataset is fixed, only trials grow; isolates the engine).
The figure of merit is the whole run's peak RSS at the largest size / at the smallest (target: <= 1.5x).
``--trace`` reruns the children under tracemalloc and prints the Python allocations alive at the end of
execution, while the metrics phase reads the store, and once ``knowgap report`` has loaded the run, by source
line, with the Python heap's peak in each phase.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from _shared import (
    INSTANT_SPEC,
    SUITE,
    BenchOptions,
    BenchSuite,
    InstantModel,
    PhaseClock,
    peak_rss_mb,
    print_table,
    write_json,
)

import knowgap
from knowgap.engine.store import RunStore
from knowgap.report import load_run_data, summary_markdown, write_csv, write_html

TARGET_RATIO = 1.5
BASE_CASES = 1000
HERE = Path(__file__).resolve()


def _shape(n: int, shape: str) -> tuple[int, int]:
    """(cases, repeats) for n trials."""
    if shape == "cases" or n <= BASE_CASES:
        return n, 1
    if n % BASE_CASES:
        raise SystemExit(f"--shape repeats needs sizes that are multiples of {BASE_CASES}")
    return BASE_CASES, n // BASE_CASES


def _top(snapshot: tracemalloc.Snapshot, limit: int) -> list[dict[str, Any]]:
    stats = snapshot.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__),
                                    tracemalloc.Filter(False, "<frozen importlib._bootstrap*>")])
    return [{"where": f"{Path(s.traceback[0].filename).name}:{s.traceback[0].lineno}", "mb": s.size / 2**20,
             "blocks": s.count} for s in stats.statistics("lineno")[:limit]]


# children -------------------------------------------------------------------------------------------
def child_run(n: int, shape: str, root: Path, trace: bool) -> dict[str, Any]:
    cases, repeats = _shape(n, shape)
    out: dict[str, Any] = {"rss_imports_mb": peak_rss_mb()}
    if trace:
        tracemalloc.start(1)

        def hook(stage: str) -> None:
            current, peak = tracemalloc.get_traced_memory()
            out[f"traced_{stage}_mb"] = current / 2**20
            if stage == "metrics_start":
                out["traced_exec_peak_mb"] = peak / 2**20
                tracemalloc.reset_peak()
            out[f"top_{stage}"] = _top(tracemalloc.take_snapshot(), 8)

        PhaseClock.hook = hook
    t0 = time.perf_counter()
    result = knowgap.run(SUITE, models={"target": INSTANT_SPEC}, providers={INSTANT_SPEC: InstantModel()},
                         options={"n": cases}, repeats=repeats, runs_root=root, progress=False)
    out["wall_s"] = time.perf_counter() - t0
    if trace:
        out["traced_metrics_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    assert result.manifest.trials_ok == n, result.manifest
    out.update(run_id=result.run_id, rss_exec_peak_mb=PhaseClock.rss_at_metrics_start_mb,
               rss_metrics_peak_mb=PhaseClock.rss_at_metrics_end_mb, rss_run_peak_mb=peak_rss_mb(),
               store_mb=(result.path / "trials.jsonl").stat().st_size / 2**20,
               cache_mb=sum(f.stat().st_size for f in Path(os.environ["KNOWGAP_HOME"]).glob("cache.sqlite*"))
               / 2**20)
    return out


def child_metrics(n: int, shape: str, root: Path, run_id: str) -> dict[str, Any]:
    cases, _ = _shape(n, shape)
    store = RunStore.open(root, run_id)
    suite = BenchSuite(BenchOptions.model_validate({"n": cases}))
    before = peak_rss_mb()
    t0 = time.perf_counter()
    metrics = suite.metrics(store.iter_records())
    ok = sum(r.status == "ok" for r in store.iter_records())
    assert ok == n and metrics[0].n == n
    return {"rss_before_mb": before, "rss_peak_mb": peak_rss_mb(), "wall_s": time.perf_counter() - t0}


def child_report(root: Path, run_id: str, trace: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"rss_before_mb": peak_rss_mb()}
    if trace:
        tracemalloc.start(1)
    t0 = time.perf_counter()
    data = [load_run_data(run_id, root)]
    if trace:
        out["traced_loaded_mb"] = tracemalloc.get_traced_memory()[0] / 2**20
        out["top_loaded"] = _top(tracemalloc.take_snapshot(), 8)
    write_html(data, data[0].path / "report.html")
    out["rss_html_mb"] = peak_rss_mb()
    text = summary_markdown(data)
    out["rss_md_mb"] = peak_rss_mb()
    write_csv(data, data[0].path / "trials.csv")
    assert text and (data[0].path / "trials.csv").stat().st_size > 0
    out.update(rss_peak_mb=peak_rss_mb(), wall_s=time.perf_counter() - t0)
    if trace:
        out["traced_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return out


# parent ---------------------------------------------------------------------------------------------
def _spawn(*args: str, env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, str(HERE), *args], capture_output=True, text=True, env=env,
                          check=False)
    if proc.returncode != 0:
        raise SystemExit(f"child {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def measure(sizes: list[int], shape: str, work: Path, trace: bool) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        root, home = work / f"{shape}-{n}" / "runs", work / f"{shape}-{n}" / "home"
        env = {**os.environ, "KNOWGAP_HOME": str(home)}
        run = _spawn("--child", "run", "--n", str(n), "--shape", shape, "--root", str(root),
                     *(["--trace"] if trace else []), env=env)
        metrics = _spawn("--child", "metrics", "--n", str(n), "--shape", shape, "--root", str(root),
                         "--run-id", run["run_id"], env=env)
        report = _spawn("--child", "report", "--root", str(root), "--run-id", run["run_id"],
                        *(["--trace"] if trace else []), env=env)
        rows.append({"shape": shape, "trials": n, "cases_repeats": _shape(n, shape), **run,
                     "metrics_only": metrics, "report_only": report})
        print(f"  {shape:7s} {n:>9,} trials: run peak {run['rss_run_peak_mb']:.1f} MiB in {run['wall_s']:.1f}s, "
              f"metrics-only peak {metrics['rss_peak_mb']:.1f} MiB, report-only peak {report['rss_peak_mb']:.1f} "
              f"MiB in {report['wall_s']:.1f}s (load {os.getloadavg()[0]:.2f})", file=sys.stderr, flush=True)
        shutil.rmtree(work / f"{shape}-{n}", ignore_errors=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated trial counts")
    parser.add_argument("--shape", default="cases,repeats", help="cases, repeats or both (comma-separated)")
    parser.add_argument("--trace", action="store_true", help="run the children under tracemalloc (slower)")
    parser.add_argument("--json", metavar="OUT", help="also write the results as JSON to OUT")
    parser.add_argument("--child", choices=["run", "metrics", "report"], help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--run-id", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child == "run":
        print(json.dumps(child_run(args.n, args.shape, args.root, args.trace)))
        return 0
    if args.child == "metrics":
        print(json.dumps(child_metrics(args.n, args.shape, args.root, args.run_id)))
        return 0
    if args.child == "report":
        print(json.dumps(child_report(args.root, args.run_id, args.trace)))
        return 0

    sizes = sorted(int(s) for s in args.sizes.split(","))
    shapes = [s.strip() for s in args.shape.split(",") if s.strip()]
    work = Path(tempfile.mkdtemp(prefix="knowgap-mem-"))
    try:
        rows = [r for shape in shapes for r in measure(sizes, shape, work, args.trace)]
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"memory: peak RSS (MiB) per run size, fresh process each (target: whole run at {sizes[-1]:,} / at "
          f"{sizes[0]:,} <= {TARGET_RATIO}x); load average {os.getloadavg()[0]:.2f} at the end")
    table = []
    for r in rows:
        c, rep = r["cases_repeats"]
        table.append((r["shape"], r["trials"], f"{c:,}x{rep:,}", r["store_mb"], r["cache_mb"], r["rss_imports_mb"],
                      r["rss_exec_peak_mb"], r["rss_run_peak_mb"], r["metrics_only"]["rss_peak_mb"],
                      r["metrics_only"]["rss_peak_mb"] - r["metrics_only"]["rss_before_mb"],
                      r["report_only"]["rss_peak_mb"],
                      r["report_only"]["rss_peak_mb"] - r["report_only"]["rss_before_mb"],
                      r["wall_s"], r["report_only"]["wall_s"]))
    print_table(["shape", "trials", "cases x rep", "store MiB", "cache MiB", "imports", "exec peak",
                 "whole-run peak", "metrics-only peak", "metrics delta", "report-only peak", "report delta", "run s",
                 "report s"], table)
    summary = {}
    print()
    for shape in shapes:
        mine = [r for r in rows if r["shape"] == shape]
        lo, hi = mine[0], mine[-1]
        ratios = {"exec_peak": hi["rss_exec_peak_mb"] / lo["rss_exec_peak_mb"],
                  "run_peak": hi["rss_run_peak_mb"] / lo["rss_run_peak_mb"],
                  "metrics_only_peak": hi["metrics_only"]["rss_peak_mb"] / lo["metrics_only"]["rss_peak_mb"],
                  "report_only_peak": hi["report_only"]["rss_peak_mb"] / lo["report_only"]["rss_peak_mb"]}
        per_trial_kb = {"exec": 1024 * (hi["rss_exec_peak_mb"] - lo["rss_exec_peak_mb"]) / (hi["trials"] - lo["trials"])
                        if hi["trials"] > lo["trials"] else 0.0,
                        "run": 1024 * (hi["rss_run_peak_mb"] - lo["rss_run_peak_mb"]) / (hi["trials"] - lo["trials"])
                        if hi["trials"] > lo["trials"] else 0.0}
        ok = ratios["run_peak"] <= TARGET_RATIO
        summary[shape] = {"ratios": ratios, "growth_kb_per_trial": per_trial_kb, "meets_target": ok}
        print(f"{shape}: {hi['trials']:,} vs {lo['trials']:,} trials: whole-run peak {ratios['run_peak']:.2f}x "
              f"(target <= {TARGET_RATIO}x: {'OK' if ok else 'MISSED'}), execution peak {ratios['exec_peak']:.2f}x, "
              f"metrics-only peak {ratios['metrics_only_peak']:.2f}x, report-only peak "
              f"{ratios['report_only_peak']:.2f}x; whole-run growth {per_trial_kb['run']:.2f} KiB/trial")
    if args.trace:
        for r in rows:
            print(f"\ntracemalloc, {r['shape']} {r['trials']:,} trials: Python heap peak {r['traced_exec_peak_mb']:.1f}"
                  f" MiB in setup+execution, {r['traced_metrics_peak_mb']:.1f} MiB in metrics+report; alive at "
                  f"metrics start {r['traced_metrics_start_mb']:.1f} MiB, after the store indexed "
                  f"{r['traced_first_record_mb']:.1f} MiB")
            for stage in ("metrics_start", "first_record"):
                print(f"  top allocations alive at {stage}:")
                for t in r[f"top_{stage}"][:6]:
                    print(f"    {t['mb']:8.2f} MiB {t['blocks']:>9,} blocks  {t['where']}")
            rep = r["report_only"]
            print(f"  report alone (knowgap report RUN: html, --md, --csv): Python heap peak "
                  f"{rep['traced_peak_mb']:.1f} MiB; alive once the run is loaded {rep['traced_loaded_mb']:.1f} MiB, "
                  "by line:")
            for t in rep["top_loaded"][:6]:
                print(f"    {t['mb']:8.2f} MiB {t['blocks']:>9,} blocks  {t['where']}")
    write_json(args.json, {"benchmark": "memory_flat", "target_ratio": TARGET_RATIO, "sizes": sizes,
                           "rows": rows, "summary": summary})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
