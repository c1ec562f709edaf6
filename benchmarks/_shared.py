"""Pieces shared by the benchmark scripts: an instant model, a tiny registered suite, table and JSON output.

Not a benchmark itself. The scripts import it by name (``python benchmarks/X.py`` puts this folder first
on ``sys.path``).
"""

from __future__ import annotations

import functools
import gc
import json
import os
import platform
import resource
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from knowgap.engine.records import MetricValue, TrialRecord
from knowgap.engine.suite import Case, Configuration, Suite, SuiteOptions, Trial, TrialContext, TrialResult
from knowgap.models.base import ChatModel
from knowgap.models.types import ChatRequest, ChatResponse, Usage
from knowgap.stats import wilson
from knowgap.suites import register

SUITE = "bench-overhead"
INSTANT_SPEC = "instant:x"
MAX_TOKENS = 16


class InstantModel(ChatModel):
    """Answers every request at once with one fixed response (no I/O, no await point)."""

    spec = INSTANT_SPEC

    def __init__(self, text: str = "ok") -> None:
        self.response = ChatResponse(text=text, usage=Usage(prompt_tokens=8, completion_tokens=1),
                                     latency_s=0.0, finish_reason="stop", model=INSTANT_SPEC)
        self.calls = 0

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        return self.response

    def describe(self) -> dict[str, str]:
        return {"spec": self.spec, "backend": "instant (benchmark)"}


CONTEXT_SOURCE = (Path(__file__).resolve().parents[1]
                  / "src/knowgap/suites/abstain/data/policybench/sources/CPF_raw_QA.json")
"""Shipped English policy text (PolicyBench's CPF answers): the context of ``--context-chars``."""


@functools.lru_cache(maxsize=8)
def context_text(chars: int) -> str:
    """The first ``chars`` characters of the CPF answers, one after another (the same text on every call)."""
    answers = [str(row["answer"]) for row in json.loads(CONTEXT_SOURCE.read_text(encoding="utf-8"))]
    text = "\n".join(answers)
    while len(text) < chars:
        text += "\n" + text
    return text[:chars]


def with_context(question: str, context_chars: int) -> str:
    """``question`` after ``context_chars`` characters of policy text (a retrieval prompt's shape), or alone."""
    return f"{context_text(context_chars)}\n\n{question}" if context_chars else question


def case_prompt(i: int, context_chars: int = 0) -> str:
    return with_context(f"Synthetic question number {i}: what is {i} plus one?", context_chars)


class BenchCase(Case):
    prompt: str


class BenchOptions(SuiteOptions):
    n: int = Field(1000, ge=1, description="Synthetic cases.")
    context_chars: int = Field(0, ge=0, description="Characters of policy text before each question (0: none).")


class CollectorClock:
    """Seconds the garbage collector spent in this process since :meth:`start` (every generation)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._began = 0.0

    def start(self) -> CollectorClock:
        if self._tick not in gc.callbacks:
            gc.callbacks.append(self._tick)
        return self

    def _tick(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._began


COLLECTOR = CollectorClock()
"""This process's collector clock; a side starts it (``COLLECTOR.start()``) to have it counted."""


class PhaseClock:
    """Wall-clock and peak-RSS marks set from inside the suite (first trial, metrics start and end)."""

    first_trial: float | None = None
    metrics_start: float | None = None
    first_trial_cpu: float | None = None
    metrics_start_cpu: float | None = None
    """This process's CPU time (``time.process_time``) at the first trial and at the start of metrics."""
    first_trial_gc: float | None = None
    metrics_start_gc: float | None = None
    """The garbage collector's seconds (:data:`COLLECTOR`, once started) at the same two marks."""
    metrics_end: float | None = None
    rss_at_metrics_start_mb: float | None = None
    rss_at_metrics_end_mb: float | None = None
    hook: ClassVar[Any] = None
    """Called as hook(stage) when metrics() starts ("metrics_start", before the store is read) and after its
    first record ("first_record", once the store's iterator has indexed the file); memory_flat measures
    there."""

    @classmethod
    def reset(cls) -> None:
        cls.first_trial = cls.metrics_start = cls.metrics_end = None
        cls.first_trial_cpu = cls.metrics_start_cpu = None
        cls.first_trial_gc = cls.metrics_start_gc = None
        cls.rss_at_metrics_start_mb = cls.rss_at_metrics_end_mb = None


@register
class BenchSuite(Suite):
    """N synthetic cases x 1 configuration; one model call per trial; one proportion metric."""

    name = SUITE
    description = "benchmark suite: synthetic cases, one instant call per trial"
    Options = BenchOptions
    default_max_tokens = MAX_TOKENS
    options: BenchOptions

    def cases(self) -> list[Case]:
        return [BenchCase(id=f"c{i:07d}", prompt=case_prompt(i)) for i in range(self.options.n)]

    def configurations(self) -> list[Configuration]:
        return [Configuration(id="default", params={})]

    async def run_trial(self, trial: Trial, ctx: TrialContext) -> TrialResult:
        if PhaseClock.first_trial is None:
            PhaseClock.first_trial = time.perf_counter()
            PhaseClock.first_trial_cpu = time.process_time()
            PhaseClock.first_trial_gc = COLLECTOR.seconds
        case = trial.case
        assert isinstance(case, BenchCase)
        prompt = with_context(case.prompt, self.options.context_chars)  # built here: the cases stay small
        response = await ctx.generate("target", ChatRequest.simple(prompt, max_tokens=MAX_TOKENS))
        return TrialResult(output={"response": response.text}, scores={"correct": response.text == "ok"})

    def metrics(self, records: Iterable[TrialRecord]) -> list[MetricValue]:
        PhaseClock.metrics_start = time.perf_counter()
        PhaseClock.metrics_start_cpu = time.process_time()
        PhaseClock.metrics_start_gc = COLLECTOR.seconds
        PhaseClock.rss_at_metrics_start_mb = peak_rss_mb()
        if PhaseClock.hook is not None:
            PhaseClock.hook("metrics_start")
        k = n = errors = 0
        for i, r in enumerate(records):
            if i == 0 and PhaseClock.hook is not None:
                PhaseClock.hook("first_record")
            if r.status != "ok":
                errors += 1
                continue
            n += 1
            k += bool(r.scores.get("correct"))
        lo, hi = wilson(k, n) if n else (None, None)
        out = [MetricValue(name="correct", group="default", value=k / n if n else None, ci_low=lo, ci_high=hi,
                           n=n, kind="proportion", description="instant answer matched"),
               MetricValue(name="errors", group="default", value=float(errors), n=errors, kind="count")]
        PhaseClock.metrics_end = time.perf_counter()
        PhaseClock.rss_at_metrics_end_mb = peak_rss_mb()
        return out


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def current_rss_mb() -> float:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
    except OSError:  # not Linux
        return peak_rss_mb()


def machine() -> dict[str, Any]:
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "processor": platform.processor() or platform.machine(), "env_vars": len(os.environ)}


def print_table(headers: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None) -> None:
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    if title:
        print(f"\n{title}")
    for n, row in enumerate(cells):
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))))
        if n == 0:
            print("  ".join("-" * w for w in widths))


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 1:
            return f"{value:.2f}"
        return f"{value:.3f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def write_json(path: str | None, data: dict[str, Any]) -> None:
    if not path:
        return
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine(), **data}, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
