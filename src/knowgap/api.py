"""The public Python API. The CLI is a thin layer over these functions.

>>> import knowgap
>>> result = knowgap.run("starter", models={"target": "local:qwen2.5-0.5b"}, options={"sample": 4})
>>> [(m.group, m.name, m.value) for m in result.metrics]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from knowgap.engine.cache import ResponseCache
from knowgap.engine.records import Executor, Manifest, MetricValue, RunConfig, TrialRecord
from knowgap.engine.repair import RepairResult, repair_run
from knowgap.engine.runner import RunResult, resume_config, start_run
from knowgap.engine.stopping_rule import StoppingRule
from knowgap.engine.store import DamagedRun, RunStore, scan_runs
from knowgap.engine.store import list_runs as _list_runs
from knowgap.engine.suite import Suite
from knowgap.engine.tracing import TraceOptions
from knowgap.errors import KnowgapError, first_validation_error
from knowgap.models.base import ChatModel
from knowgap.models.packs import PackStatus, pack_statuses
from knowgap.models.registry import DEFAULT_MODEL
from knowgap.paths import cache_path, runs_dir
from knowgap.report.failures import FailureList
from knowgap.report.html import write_html_report
from knowgap.report.markdown import write_report
from knowgap.report.sequential import ThresholdsArg, judge_corrected, stopping_rule
from knowgap.suites import available, get_suite

_FLAGS = {"timeout_s": "--timeout", "max_retries": "--max-retries", "repeats": "--repeats",
          "concurrency": "--concurrency", "executor": "--executor", "ray_address": "--ray-address",
          "rpm": "--rpm", "tpm": "--tpm"}


def run(suite: str, *, models: Mapping[str, str] | None = None, options: Mapping[str, Any] | None = None,
        repeats: int = 1, seed: int = 0, concurrency: int | None = None, use_cache: bool = True,
        timeout_s: float = 300.0, max_retries: int = 6, prices: Mapping[str, tuple[float, float]] | None = None,
        runs_root: str | Path | None = None, providers: Mapping[str, ChatModel] | None = None,
        progress: bool = False, executor: Executor = "local", ray_address: str | None = None,
        rpm: int | None = None, tpm: int | None = None, until: str | None = None,
        thresholds: ThresholdsArg | None = None, alpha: float = 0.05, max_calls: int | None = None,
        max_cost: float | None = None, order_seed: int | None = None, against: str | None = None,
        compare: Sequence[str] = (), margin: float = 0.0, otel: Any = False, otel_content: bool = False) -> RunResult:
    """Run ``suite`` and return its metrics; every trial is stored under ``runs_root/<run-id>/``.

    ``models`` maps roles (target, judge, generator) to model specs; ``providers`` maps a spec to a ready
    ChatModel object (for models that are not reachable by spec, e.g. your own Python callable; not with
    ``executor="ray"``, which builds every model from its spec on the workers). ``rpm`` / ``tpm`` limit each
    model to that many requests / tokens (prompt + completion) per minute.

    ``executor="ray"`` runs the trials on a Ray cluster's workers (``ray_address``: the cluster to join; None
    starts or joins a local Ray), this process keeping the run store and the response cache (docs/scale.md).

    ``until`` runs the cases in a random order (seeded by ``seed``) and stops early (docs/statistics.md):
    ``"decided"`` when an anytime-valid confidence sequence at level ``alpha`` decides every threshold of
    ``thresholds`` (a gate file, or a list of ``"METRIC[GROUP] OP VALUE"`` strings), ``"width=0.05"`` when every
    sequence is that narrow, ``"all"`` never; ``max_calls`` / ``max_cost`` (USD, from ``prices``) stop it too;
    ``order_seed`` seeds the order apart from the trials' own seeds (default ``seed``). ``against`` (a finished run
    of the same plan, e.g. main's) with ``compare`` (``["accuracy", "leak_rate[view=full]"]``) stops when the sign
    of each paired difference, this run minus that one unit by unit, is decided, or its lying within ``margin``;
    a difference decided worse fails. A run
    stopped before every case ran has status ``stopped``; ``resume(run, until="all")`` continues it. The result's
    ``manifest.sequential`` holds each sequence, where it stopped and why.

    ``otel=True`` exports a span per trial and per model call by OpenTelemetry's GenAI conventions through the
    OTLP/HTTP exporter (``OTEL_EXPORTER_OTLP_*`` variables; extra ``knowgap[otel]``; docs/tracing.md), flushed
    before this returns; ``otel`` may instead be your own ``TracerProvider``. ``otel_content`` adds the prompts,
    answers and verdict reasons (redacted).

    Trial errors do not raise: the result's ``status`` is ``finished``, ``finished_with_errors``, ``failed`` or
    ``stopped`` (``ok`` is True for ``finished``, and ``stopped`` with no errored trial) and ``error_causes`` says why
    trials errored. A bad setting (``timeout_s <= 0``, ``max_retries < 0``, ``repeats < 1``, a bad suite option)
    raises KnowgapError.
    """
    baseline = str(RunStore.open(runs_dir(runs_root), against).path) if against is not None else None
    rule = stopping_rule(until, thresholds, suite=suite, seed=seed if order_seed is None else order_seed,
                         alpha=alpha, max_calls=max_calls, max_cost=max_cost, against=baseline, compare=compare,
                         margin=margin)
    try:
        config = RunConfig(suite=suite, options=dict(options or {}), models=dict(models or {}), repeats=repeats,
                           seed=seed, concurrency=concurrency, use_cache=use_cache, timeout_s=timeout_s,
                           max_retries=max_retries, prices=dict(prices or {}), executor=executor,
                           ray_address=ray_address, rpm=rpm, tpm=tpm, stopping=rule)
    except ValidationError as exc:
        field, message = first_validation_error(exc)
        raise KnowgapError(f"bad run setting {field} ({_FLAGS.get(field, field)}): {message}, "
                           f"got {exc.errors()[0].get('input')!r}") from None
    _check_ray_address(config)
    return _start(config, get_suite(config.suite), runs_root=runs_root, providers=providers, progress=progress,
                  otel=_trace_options(otel, otel_content))


def resume(run_id: str, *, runs_root: str | Path | None = None,
           providers: Mapping[str, ChatModel] | None = None, progress: bool = False,
           specs: Sequence[str] = (), executor: Executor | None = None, ray_address: str | None = None,
           until: str | None = None, max_calls: int | None = None, max_cost: float | None = None,
           otel: Any = False, otel_content: bool = False) -> RunResult:
    """Continue a crashed or interrupted run: finished trials are kept, the rest are run.

    A model spec that held a credential (``http://user:KEY@host``) is stored redacted; pass it whole in
    ``specs``. Refused when a role's model changed since the run started (see ``ChatModel.identity``).
    The run continues on the executor it started with, unless ``executor`` (with ``ray_address``) says
    otherwise; a ``ray_address`` alone means ``executor="ray"``. A run started with ``until`` keeps its rule, its
    thresholds and its order; ``until`` (``"all"``: every case), ``max_calls`` and ``max_cost`` replace the rule's.
    ``otel`` / ``otel_content`` as for :func:`run` (the trials run now)."""
    config, path = resume_config(run_id, runs_root=runs_root, specs=specs)
    config = _resumed_rule(config, until, max_calls, max_cost)
    if executor is not None or ray_address is not None:
        try:
            config = RunConfig.model_validate({**config.model_dump(), "executor": executor or "ray",
                                               "ray_address": ray_address})
        except ValidationError as exc:
            field, message = first_validation_error(exc)
            raise KnowgapError(f"bad run setting {field} ({_FLAGS.get(field, field)}): {message}") from None
        _check_ray_address(config)
    return _start(config, get_suite(config.suite), runs_root=runs_root, providers=providers, progress=progress,
                  resume=str(path), otel=_trace_options(otel, otel_content))


def _trace_options(otel: Any, content: bool) -> TraceOptions | None:
    """``otel`` (False, True or a TracerProvider) and ``otel_content`` as the runner takes them."""
    if otel is False or otel is None:
        if content:
            raise KnowgapError("--otel-content adds prompt and answer text to the spans of --otel: give --otel too")
        return None
    return TraceOptions(content=content, provider=None if otel is True else otel)


def _resumed_rule(config: RunConfig, until: str | None, max_calls: int | None, max_cost: float | None) -> RunConfig:
    """``config`` with its stopping rule's ``until`` and budgets replaced by those given."""
    if until is None and max_calls is None and max_cost is None:
        return config
    if config.stopping is None:
        if until == "all" and max_calls is None and max_cost is None:
            return config  # a run without a rule runs every case anyway
        raise KnowgapError(f"run of suite {config.suite} was started without --until: it runs every case in plan "
                           "order; start a new run with --until to stop early")
    changes = {k: v for k, v in (("until", until), ("max_calls", max_calls), ("max_cost", max_cost)) if v is not None}
    try:
        rule = StoppingRule.model_validate({**config.stopping.model_dump(), **changes})
    except ValidationError as exc:
        field, message = first_validation_error(exc)
        raise KnowgapError(f"bad --{field.replace('_', '-')}: {message}") from None
    return config.model_copy(update={"stopping": rule})


def _check_ray_address(config: RunConfig) -> None:
    if config.ray_address is not None and config.executor != "ray":
        raise KnowgapError(f"--ray-address {config.ray_address} is for --executor ray (the run's executor is "
                           f"{config.executor})")


def _start(config: RunConfig, suite_cls: type[Suite], *, runs_root: str | Path | None,
           providers: Mapping[str, ChatModel] | None, progress: bool, resume: str | None = None,
           otel: TraceOptions | None = None) -> RunResult:
    """Run (or continue) ``config`` on ``suite_cls``; when it ends, also with errored trials, write its
    report.md and report.html (an interrupted run gets none: it is continued, not reported)."""
    return start_run(config, suite_cls, runs_root=runs_root, providers=providers, progress=progress, resume=resume,
                     after_run=_write_reports, otel=otel, correct_rule=judge_corrected)


def _write_reports(result: RunResult, suite: Suite) -> None:
    write_report(result.path, result.manifest, result.metrics)
    write_html_report(result.path, suite=suite)


def list_models() -> list[PackStatus]:
    """Every embedded model pack: installed or not, assembled or not, size, sha256."""
    return pack_statuses()


def list_runs(runs_root: str | Path | None = None) -> list[Manifest]:
    """Manifests of the runs under ``runs_root`` (newest first); runs whose manifest cannot be read are left out
    (:func:`damaged_runs`)."""
    return _list_runs(runs_dir(runs_root))


def damaged_runs(runs_root: str | Path | None = None) -> list[DamagedRun]:
    """The runs under ``runs_root`` whose manifest cannot be read or is missing, each with the reason and whether
    :func:`repair` can rebuild it."""
    return scan_runs(runs_dir(runs_root))[1]


def repair(run_id: str, runs_root: str | Path | None = None) -> RepairResult:
    """Rebuild a run's manifest that cannot be read (or is missing) from the run's ``started.json`` and
    ``trials.jsonl``; a readable manifest is left as it is (``rebuilt`` False)."""
    return repair_run(runs_dir(runs_root), run_id)


def load_run(run_id: str, runs_root: str | Path | None = None) -> tuple[Manifest, list[MetricValue]]:
    """A run's manifest (a dead run that still says ``running`` shows as ``interrupted``) and metrics."""
    store = RunStore.open(runs_dir(runs_root), run_id)
    return store.current_manifest(), store.read_metrics()


def dataset_note(run_id: str, runs_root: str | Path | None = None) -> str | None:
    """One line when the run's trials were stored without their cases' tags (a run made before knowgap kept them),
    naming the groups that then come from today's dataset (:func:`knowgap.engine.case_tags.dataset_note`); None
    otherwise, or when its trials cannot be read (``knowgap runs`` and ``knowgap repair`` say why). Reads the trials
    only up to the first that stores its tags."""
    from knowgap.engine.case_tags import dataset_note as note_of
    from knowgap.report.data import load_suite

    store = RunStore.open(runs_dir(runs_root), run_id)
    manifest = store.current_manifest()
    try:
        return note_of(manifest.run_id, load_suite(manifest), store.iter_every_record())
    except KnowgapError:
        return None


def failures(run_id: str, runs_root: str | Path | None = None, *, metric: str | None = None,
             limit: int | None = None) -> FailureList:
    """What went wrong in a run: each wrong per-metric verdict of its trials (trial, metric, why, the answer's
    start) and each errored trial, of ``metric`` only when given; derived from the stored scores for a run
    recorded before trials stored their verdicts (the result's ``source`` and ``note`` say so)."""
    from knowgap.report.data import load_run_data
    from knowgap.report.failures import list_failures

    return list_failures(load_run_data(run_id, runs_root), metric, limit)


def iter_trials(run_id: str, runs_root: str | Path | None = None) -> Sequence[TrialRecord]:
    """The current record of every trial of a run, in file order, as the run store's snapshot: iterating reads
    ``trials.jsonl`` as a stream (a run of any size is never held whole); ``len`` is free; ``[i]`` reads up to
    record ``i``; ``list()`` when every record is needed at once."""
    return RunStore.open(runs_dir(runs_root), run_id).snapshot()


def cache_info() -> dict[str, Any]:
    """The response cache (``path``, ``entries``, ``bytes``; ``problem``: why it cannot be used, or None;
    ``damaged``: the damaged copies moved aside, each ``path`` and ``bytes``) and the embedding caches
    (``embeddings``: a list of ``path``, ``vectors``, ``bytes``)."""
    from knowgap.text import embedding_cache

    cache = ResponseCache(cache_path())
    try:
        stats = cache.stats()
        damaged = [{"path": str(p), "bytes": sum(f.stat().st_size for f in (p, p.with_name(p.name + "-wal"))
                                                 if f.exists())} for p in cache.damaged_copies()]
        return {"path": str(cache.path), **stats, "problem": cache.problem, "damaged": damaged,
                "embeddings": embedding_cache.stats()}
    finally:
        cache.close()


def clear_cache(spec: str | None = None) -> int:
    """Delete cached responses (all, or one model spec's); returns how many. Without ``spec`` the damaged copies of
    the cache that were moved aside are deleted too."""
    cache = ResponseCache(cache_path())
    try:
        return cache.clear(spec)
    finally:
        cache.close()


def clear_embeddings() -> int:
    """Delete the embedding caches (vectors are computed again when next needed); returns how many files."""
    from knowgap.text import embedding_cache

    return embedding_cache.clear()


def demo(model: str = DEFAULT_MODEL, *, runs_root: str | Path | None = None,
         progress: bool = True) -> list[RunResult]:
    """Run every suite's demo sample on ``model``; returns one result per suite."""
    results = []
    for name, suite_cls in available().items():
        results.append(_start(RunConfig(suite=name, options=dict(suite_cls.demo_options), models={"target": model}),
                              suite_cls, runs_root=runs_root, providers=None, progress=progress))
    return results
