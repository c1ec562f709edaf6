"""Run a suite: plan trials, execute them through the model clients, store each, compute metrics.

The runner is given the suite class it runs (the API resolves names) and imports no suite and no report
writer: whoever starts a run passes ``after_run`` to write reports. A trial is (case, configuration, repeat).
Trials run in a pool of workers that pull from one lazy iterator, so memory does not grow with the number of
trials; each finished trial is appended to the run store with the others of its event-loop turn
(:mod:`knowgap.engine.group_commit`). Resuming a run re-plans the same trials
from the manifest and skips the finished ones; calls that finished before a crash are served from the
response cache, so none is repeated.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.metadata
import logging
import subprocess
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from knowgap.engine.cache import ResponseCache
from knowgap.engine.collector import fewer_collections
from knowgap.engine.gateway import ModelClient, ModelGateway, RetryPolicy
from knowgap.engine.group_commit import GroupCommit
from knowgap.engine.outcome import finished_status, tally_trials
from knowgap.engine.progress import TrialProgress
from knowgap.engine.records import (
    CallRecord,
    ErrorCause,
    Manifest,
    MetricJudge,
    MetricValue,
    RunConfig,
    RunStatus,
    TrialRecord,
    utcnow,
)
from knowgap.engine.sampling import sample_cases
from knowgap.engine.signal_wakeup import signals_wake_loop
from knowgap.engine.stopping_rule import StoppingRule
from knowgap.engine.store import RunStore, new_run_id
from knowgap.engine.suite import Case, Configuration, Suite, Trial, TrialFailed, TrialResult, file_sha256
from knowgap.engine.tracing import RunTracer, TraceOptions, check_installed
from knowgap.errors import KnowgapError, did_you_mean, first_validation_error
from knowgap.models.base import ChatModel
from knowgap.models.registry import DEFAULT_MODEL
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.paths import cache_path, runs_dir
from knowgap.redaction import MASK, redact

if TYPE_CHECKING:
    from knowgap.engine.stopping import Sequencer

log = logging.getLogger("knowgap.run")
YIELD_EVERY = 256
"""A worker lets the event loop run after this many trials of its own. A model that answers without suspending
(scripted, an in-process function that never awaits) would otherwise never let it run during the whole execution,
and the loop drops the cancelled timer of each call's time-out only when it runs: they piled up, one per call
(about 9 MiB at 50k trials)."""


class RunInterrupted(KnowgapError):
    """Ctrl-C or a stop signal: finished trials are stored; the run can be resumed."""


@dataclass
class RunResult:
    run_id: str
    path: Path
    manifest: Manifest
    metrics: list[MetricValue]
    provider_calls: int = 0
    """Calls that reached a model provider in this invocation (0 for a fully cached re-run)."""

    @property
    def status(self) -> RunStatus:
        """``finished`` (every trial ok), ``finished_with_errors`` or ``failed`` (no trial ok)."""
        return self.manifest.status

    @property
    def ok(self) -> bool:
        """Every trial ran without error (errored trials are left out of the metrics); for a run its stopping rule
        stopped (``stopped``), every trial it ran."""
        return self.manifest.status == "finished" or (self.manifest.status == "stopped"
                                                      and not self.manifest.trials_error)

    @property
    def error_causes(self) -> list[ErrorCause]:
        """Why trials errored, grouped by cause, most frequent first."""
        return self.manifest.error_causes


AfterRun = Callable[[RunResult, Suite], None]
"""Called when a run has ended (every trial ok or errored; not when interrupted), its manifest and metrics
written and its lock still held: the API writes report.md and report.html here."""
CorrectRule = Callable[[StoppingRule, dict[str, MetricJudge], Suite], StoppingRule]
"""Finds the judge's card of each threshold on a judge-corrected rate (``use: corrected``) before any call, from the
run's metric judges, and refuses one that can never be decided: the API's (the cards live above the engine)."""


def knowgap_version() -> str:
    try:
        return importlib.metadata.version("knowgap")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


def git_commit() -> str | None:
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def trial_seed(run_seed: int, trial_id: str) -> int:
    digest = hashlib.sha256(f"{run_seed}|{trial_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


class _Context:
    """The TrialContext a suite's run_trial receives."""

    __slots__ = ("seed", "repeat", "calls", "_clients")

    def __init__(self, clients: Mapping[str, ModelClient], seed: int, repeat: int) -> None:
        self._clients = clients
        self.seed = seed
        self.repeat = repeat
        self.calls: list[CallRecord] = []

    async def generate(self, role: str, request: ChatRequest) -> ChatResponse:
        try:
            client = self._clients[role]
        except KeyError:
            raise KnowgapError(f"the suite asked for role '{role}' but the run has no model for it") from None
        record = await client.call(role, request, self.repeat)
        self.calls.append(record)
        if record.response is None:
            raise TrialFailed(record.error or "model call failed")
        return record.response

    def supports_tools(self, role: str) -> bool:
        client = self._clients.get(role)
        return client is not None and client.model.supports_tools

    def supports_logprobs(self, role: str) -> bool:
        client = self._clients.get(role)
        return client is not None and client.model.supports_logprobs


def resolve_roles(suite_cls: type[Suite], models: Mapping[str, str] | None) -> dict[str, str]:
    """A model spec for every role the suite uses: given ones, else the target's, else the default."""
    given = {k: v for k, v in (models or {}).items() if v}
    unknown = set(given) - set(suite_cls.roles)
    if unknown:
        raise KnowgapError(f"suite '{suite_cls.name}' has no role {', '.join(sorted(unknown))} "
                           f"(roles: {', '.join(suite_cls.roles)})")
    target = given.get("target", DEFAULT_MODEL)
    return {role: given.get(role, target) for role in suite_cls.roles}


@dataclass
class Runner:
    config: RunConfig
    suite_cls: type[Suite]
    """The suite ``config.suite`` names."""
    runs_root: Path
    providers: Mapping[str, ChatModel] = field(default_factory=dict)
    """Ready-made providers by spec (tests, benchmarks, Python users); the gateway builds the others."""
    progress: bool = True
    cache_file: Path | None = None
    gateway: ModelGateway = field(init=False, repr=False)
    """The run's model gateway, made with the run's clients."""
    after_run: AfterRun | None = None
    remote_provider_calls: int = field(default=0, init=False)
    """Provider calls made on Ray workers (``executor="ray"``), added to the gateway's own."""
    baseline: dict[str, dict[tuple[str, str], MetricValue]] | None = field(default=None, init=False, repr=False)
    """``--against``: the baseline run's metrics per unit, read before the run starts."""
    tracing: TraceOptions | None = None
    """``--otel``: export a span per trial and per model call (:mod:`knowgap.engine.tracing`); None: none."""
    tracer: RunTracer | None = field(default=None, init=False, repr=False)
    correct_rule: CorrectRule | None = None
    """``use: corrected`` thresholds: finds their cards (:data:`CorrectRule`)."""

    def __post_init__(self) -> None:
        suite_cls = self.suite_cls
        if suite_cls.name != self.config.suite:
            raise KnowgapError(f"the run is of suite '{self.config.suite}' but was given suite '{suite_cls.name}'")
        try:
            options = suite_cls.Options.model_validate(self.config.options)
        except Exception as exc:  # pydantic ValidationError -> one clear line
            raise KnowgapError(f"suite '{suite_cls.name}': bad option: {_first_error(exc)}") from None
        self.config.options = options.model_dump(mode="json", exclude_defaults=True)
        self.config.models = resolve_roles(suite_cls, self.config.models)
        self.suite = suite_cls(options)
        rule = self.config.stopping
        if rule is not None and rule.until == "decided" and not rule.thresholds and not rule.compare:
            raise KnowgapError("--until decided needs thresholds to decide (--thresholds FILE, or an eval file's "
                               "thresholds) or metrics to compare with a baseline (--against RUN --compare METRIC); "
                               "--until width=W needs none")
        if rule is not None and bool(rule.compare) != (rule.against is not None):
            raise KnowgapError("--compare names the metrics to compare with the run --against names: give both")
        if rule is not None and self.config.executor == "ray":
            raise KnowgapError("--until runs its cases a batch at a time in this process: not with --executor ray")
        if self.tracing is not None:
            if self.config.executor == "ray":
                raise KnowgapError("--otel traces the trials that run in this process: not with --executor ray")
            check_installed()  # before any run is made
        named = [(g.metric, g.label) for g in rule.thresholds] + [(c.metric, c.label) for c in rule.compare] \
            if rule is not None else []
        for metric, label in named:
            if suite_cls.declares_metric(metric) is False and metric != "errors":
                names = sorted(suite_cls.metric_names or ())
                raise KnowgapError(f"'{label}': suite '{suite_cls.name}' produces no metric "
                                   f"'{metric}'{did_you_mean(metric, names)}")
        if rule is not None and any(t.use == "corrected" and t.correction is None for t in rule.thresholds):
            if self.correct_rule is None:
                raise KnowgapError("a threshold on a judge-corrected rate (use: corrected) needs the judge's card: "
                                   "run it through knowgap.run or the CLI")
            self.config.stopping = self.correct_rule(rule, self.metric_judges(), self.suite)

    # planning ---------------------------------------------------------------------------------
    def planned_cases(self) -> list[Case]:
        cases = self.suite.cases()
        ids = [c.id for c in cases]
        if len(set(ids)) != len(ids):
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            raise KnowgapError(f"suite '{self.suite.name}': duplicate case ids {dupes[:5]}")
        sample = getattr(self.suite.options, "sample", None)
        if sample is not None and sample > len(cases):
            log.warning("--sample %d is more than the %d cases: running all %d", sample, len(cases), len(cases))
        if sample is not None and sample < len(cases):  # round-robin over base cases when cases carry one
            cases = sample_cases(cases, sample, self.config.seed)
        return cases

    def cases_run(self, cases: list[Case], config: Configuration) -> list[Case]:
        """The planned cases that run under ``config``: the first of those sharing a trial (suite.shared_trial)."""
        seen: set[str] = set()
        out: list[Case] = []
        for case in cases:
            key = self.suite.shared_trial(case, config)
            if key is not None:
                if key in seen:
                    continue
                seen.add(key)
            out.append(case)
        return out

    def iter_trials(self, cases: list[Case], skip: set[str]) -> Iterator[Trial]:
        for config in self.suite.configurations():
            for case in self.cases_run(cases, config):
                for repeat in range(self.config.repeats):
                    trial = Trial(case=case, config=config, repeat=repeat)
                    if trial.trial_id not in skip:
                        yield trial

    def metric_judges(self) -> dict[str, MetricJudge]:
        """The suite's judge of each judged metric, with the spec of the model of the role that judges."""
        models = self.config.models
        return {name: MetricJudge(judge=use.judge, version=use.version, counts=use.counts,
                                  judge_model=redact(models[use.role]) if use.role in models else None)
                for name, use in sorted(self.suite.metric_judges().items())}

    def dataset_hashes(self) -> dict[str, str]:
        return {str(p): file_sha256(Path(p)) for p in self.suite.dataset_files()}

    # clients ----------------------------------------------------------------------------------
    def _clients(self, run_id: str, cache: ResponseCache | None, *, prepare: bool = True) -> dict[str, ModelClient]:
        """Each role's client from the run's model gateway (which this runner closes when the trials end);
        ``prepare``: load local models now (not on the driver of a Ray run, whose workers load them)."""
        self.gateway = ModelGateway(run_id=run_id, cache=cache, use_cache=self.config.use_cache,
                                    concurrency=self.config.concurrency, prices=self.config.prices,
                                    retry=RetryPolicy(max_retries=self.config.max_retries,
                                                      timeout_s=self.config.timeout_s),
                                    providers=self.providers, rpm=self.config.rpm, tpm=self.config.tpm,
                                    prepare=prepare)
        return self.gateway.clients(self.config.models)

    # execution --------------------------------------------------------------------------------
    async def _run_one(self, trial: Trial, clients: Mapping[str, ModelClient]) -> TrialRecord:
        ctx = _Context(clients, trial_seed(self.config.seed, trial.trial_id), trial.repeat)
        started, t0 = utcnow(), time.perf_counter()
        status, error, result = "ok", None, TrialResult()
        try:
            result = await self.suite.run_trial(trial, ctx)
        except TrialFailed as exc:
            status, error = "error", str(exc)
        except KnowgapError as exc:
            status, error = "error", str(exc)
        except Exception as exc:  # a bug in a suite must not lose the run: record it and go on
            tb = traceback.extract_tb(exc.__traceback__)[-1]
            status, error = "error", f"{type(exc).__name__} in suite code ({tb.filename}:{tb.lineno}): {exc}"
        record = TrialRecord(trial_id=trial.trial_id, case_id=trial.case.id, config_id=trial.config.id,
                             config=trial.config.params, repeat=trial.repeat, status=status,  # type: ignore[arg-type]
                             error=redact(error) if error else None, calls=ctx.calls, output=result.output,
                             scores=result.scores, started_at=started, case_tags=self.suite.case_tags(trial.case))
        if status == "ok":
            try:
                record.verdicts = self.suite.verdicts(record)
            except Exception as exc:  # a bug in the suite's verdicts is recorded like one in run_trial
                tb = traceback.extract_tb(exc.__traceback__)[-1]
                record.status, record.error = "error", redact(
                    f"{type(exc).__name__} in suite verdicts ({tb.filename}:{tb.lineno}): {exc}")
        record.duration_s = time.perf_counter() - t0
        return record

    async def _execute(self, store: RunStore, trials: Iterator[Trial], total: int, done: int,
                       clients: Mapping[str, ModelClient]) -> None:
        workers = self.config.concurrency or max(c.limit for c in clients.values())
        label = redact(f"{self.suite.name} · {self.config.models.get('target', '')}")
        tracer = self.tracer
        with TrialProgress(label, total, done, enabled=self.progress) as bar:
            commit = GroupCommit(store, self.gateway.cache, on_stored=lambda error: bar.advance(error=error))

            async def worker() -> None:
                for done_here, trial in enumerate(trials, start=1):
                    # stored with the trials of this turn at the start of the next; counted done once flushed
                    if tracer is None:
                        commit.add(await self._run_one(trial, clients))
                    else:
                        commit.add(await tracer.trial(trial, self._run_one(trial, clients)))
                    if done_here % YIELD_EVERY == 0:
                        await asyncio.sleep(0)

            try:
                with fewer_collections():
                    await asyncio.gather(*(worker() for _ in range(max(1, workers))))
            finally:
                commit.flush()  # stopped early (Ctrl-C, a failure): trials that finished are stored

    def run(self, resume: str | None = None) -> RunResult:
        if self.config.executor == "ray":  # before anything is created: Ray missing, a suite workers cannot import
            from knowgap.engine.ray_executor import check_ray_run
            check_ray_run(self.config, self.suite_cls, self.providers)
        cache = ResponseCache(self.cache_file or cache_path())
        store: RunStore | None = None
        try:
            if resume is None:
                manifest = Manifest(run_id=new_run_id(self.suite.name), knowgap_version=knowgap_version(),
                                    git_commit=git_commit(), config=self.config,
                                    dataset_hashes=self.dataset_hashes(), judges=self.suite.judge_versions(),
                                    metric_judges=self.metric_judges(),
                                    computed_metrics=None if self.suite.computed_metrics is None
                                    else sorted(self.suite.computed_metrics))
            else:
                store = RunStore.open(self.runs_root, resume)
                store.lock()  # before anything else: a second writer stops here, having called no model
                manifest = store.read_manifest()
                self._check_dataset(manifest)
                manifest.resumed_at.append(utcnow())
                manifest.config.stopping = self.config.stopping  # resume --until all continues to every case
            clients = self._clients(manifest.run_id, cache, prepare=self.config.executor != "ray")
            self.suite.check_models({role: client.model for role, client in clients.items()})
            models_now = {role: {**clients[role].model.describe(), "identity": clients[role].identity}
                          for role in self.config.models}
            if resume is not None:
                self._check_models(manifest, models_now)
            manifest.models = models_now
            cases = self.planned_cases()
            if self.config.stopping is not None and self.config.stopping.against is not None:
                from knowgap.engine.stopping import baseline_values, ordered_units
                self.baseline = baseline_values(self.config.stopping.against,
                                                 ordered_units(self.iter_trials(cases, set()), 0), self.suite)
            total = sum(len(self.cases_run(cases, config))
                        for config in self.suite.configurations()) * self.config.repeats
            manifest.trials_total = total
            if store is not None:
                self._check_plan(manifest, store, cases)
            if store is None:
                store = RunStore.create(self.runs_root, manifest)
            else:
                manifest.status = "running"
                store.write_manifest(manifest)
        except BaseException:  # a bad spec, a missing pack, a changed dataset, a locked run: nothing left open
            if store is not None:
                store.unlock()
            cache.close()
            raise
        planned = [cases]  # _run_locked takes the only reference: the cases are freed once their trials have run,
        del cases  # before the metrics and the reports (a suite of 50k cases holds about 30 MiB in them)
        try:
            if self.tracing is not None:
                self.tracer = RunTracer(self.tracing, run_id=manifest.run_id, suite=self.suite.name,
                                        version=knowgap_version())
                for client in clients.values():
                    client.tracer = self.tracer
            return self._run_locked(store, manifest, cache, planned, total, clients)
        finally:
            try:
                if self.tracer is not None:
                    self.tracer.close()  # every span exported (or the one warning) before the run returns
            finally:
                store.close()
                store.unlock()
                cache.close()

    def _run_locked(self, store: RunStore, manifest: Manifest, cache: ResponseCache, planned: list[list[Case]],
                    total: int, clients: Mapping[str, ModelClient]) -> RunResult:
        finished = store.finished_trial_ids()
        rule = self.config.stopping
        sequencer = None
        if rule is not None:
            from knowgap.engine.stopping import Sequencer, ordered_units
            sequencer = Sequencer(rule, ordered_units(self.iter_trials(planned.pop(), set()), rule.order_seed),
                                  self.suite, self.baseline)
        try:
            if sequencer is None:
                trials = self.iter_trials(planned.pop(), finished)  # once run to its end, it holds no case
                asyncio.run(self._execute_and_close(store, trials, len(finished), total, clients))
            else:
                asyncio.run(self._execute_in_order(store, manifest, sequencer, finished, total, clients))
            # a stop while the metrics are computed (a long judge pass) is an interruption too: the trials are
            # stored, the metrics not yet, and a resume computes them without calling the model again
            metrics = self.suite.metrics(store.snapshot())  # re-read per pass: suites may go over it twice
        except (KeyboardInterrupt, asyncio.CancelledError):
            self._tally(store, manifest)
            manifest.status = "interrupted"
            self._finish(store, manifest, cache)
            raise RunInterrupted(f"interrupted: finished trials are stored in {store.path}; continue with "
                                 f"knowgap resume {manifest.run_id}") from None
        store.write_metrics(metrics)
        self._tally(store, manifest)
        manifest.status = finished_status(manifest.trials_ok, manifest.trials_error)
        if manifest.sequential is not None and manifest.sequential.stopped_early and manifest.trials_ok:
            manifest.status = "stopped"
        self._finish(store, manifest, cache)
        result = RunResult(run_id=manifest.run_id, path=store.path, manifest=manifest, metrics=metrics,
                           provider_calls=self.gateway.provider_calls + self.remote_provider_calls)
        if self.after_run is not None:
            self.after_run(result, self.suite)
        return result

    async def _execute_in_order(self, store: RunStore, manifest: Manifest, sequencer: Sequencer,
                                finished: set[str], total: int, clients: Mapping[str, ModelClient]) -> None:
        """Run the units in the rule's random order, a batch at a time, until the rule stops the run
        (:mod:`knowgap.engine.stopping`); the rule's record goes into the manifest after each batch."""
        ran = set(finished)
        workers = self.config.concurrency or max(c.limit for c in clients.values())
        try:
            with signals_wake_loop(asyncio.get_running_loop()):
                await self._decide_in_order(store, manifest, sequencer, ran, workers, total, clients)
        finally:
            await self.gateway.aclose()

    async def _decide_in_order(self, store: RunStore, manifest: Manifest, sequencer: Sequencer, ran: set[str],
                               workers: int, total: int, clients: Mapping[str, ModelClient]) -> None:
        while True:
            sequencer.complete(ran, store.iter_records())
            sequencer.count_usage(store.iter_every_record(), self.config.prices)
            sequencer.evaluate(self.suite.metrics(store.snapshot()))
            reason = sequencer.reason()
            manifest.sequential = sequencer.record(reason)
            if reason is not None:
                return
            batch = [t for unit in sequencer.next_batch(workers) for t in unit.trials if t.trial_id not in ran]
            await self._execute(store, iter(batch), total, len(ran), clients)
            ran.update(t.trial_id for t in batch)

    def _tally(self, store: RunStore, manifest: Manifest) -> None:
        """Trial counts, error causes and usage in the manifest, from what trials.jsonl holds."""
        tally_trials(manifest, store.iter_records(), store.iter_every_record(), self.config.prices)

    async def _execute_and_close(self, store: RunStore, trials: Iterator[Trial], done: int, total: int,
                                 clients: Mapping[str, ModelClient]) -> None:
        try:
            with signals_wake_loop(asyncio.get_running_loop()):
                if self.config.executor == "ray":
                    from knowgap.engine.ray_executor import execute_on_ray
                    await execute_on_ray(self, store, trials, total, done, clients)
                else:
                    await self._execute(store, trials, total, done, clients)
        finally:
            await self.gateway.aclose()

    def _finish(self, store: RunStore, manifest: Manifest, cache: ResponseCache) -> None:
        store.close()
        manifest.ended_at = utcnow()
        store.write_manifest(manifest)
        cache.close()

    def _check_dataset(self, manifest: Manifest) -> None:
        now = self.dataset_hashes()
        changed = [f for f, h in manifest.dataset_hashes.items() if now.get(f) != h]
        if changed:
            raise KnowgapError(f"cannot resume {manifest.run_id}: the dataset changed since it started "
                               f"({', '.join(changed)}); start a new run instead")
        judges = self.suite.judge_versions()
        if manifest.judges is not None and judges != manifest.judges:
            raise KnowgapError(f"cannot resume {manifest.run_id}: its judges were {manifest.judges or 'none'}, "
                               f"this knowgap has {judges or 'none'}; start a new run instead")


    def _check_plan(self, manifest: Manifest, store: RunStore, cases: list[Case]) -> None:
        """Refuse to resume when stored trials are not among the trials planned now (another sample, other
        cases or configurations): they would stay in the run and in its metrics beside trials of another plan."""
        stored = {record.trial_id for record in store.iter_records()}
        if not stored:
            return
        planned = {trial.trial_id for trial in self.iter_trials(cases, set())}
        foreign = sorted(stored - planned)
        if foreign:
            raise KnowgapError(f"cannot resume {manifest.run_id}: {len(foreign)} of its {len(stored)} stored trials "
                               f"are not among the trials this knowgap plans from the run's options (for example "
                               f"{foreign[0]}): its sample, cases or configurations changed since it started; "
                               f"start a new run instead")

    @staticmethod
    def _check_models(manifest: Manifest, now: Mapping[str, Mapping[str, str]]) -> None:
        """Refuse to resume when a role's model is no longer the one the run started with."""
        for role, before in manifest.models.items():
            was, is_now = before.get("identity"), now.get(role, {}).get("identity")
            if was is not None and is_now is not None and was != is_now:  # manifests before identities: no check
                raise KnowgapError(f"cannot resume {manifest.run_id}: its {role} model "
                                   f"{before.get('spec', '')} changed since it started (was {was}, is now "
                                   f"{is_now}); start a new run instead")


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        field, message = first_validation_error(exc)
        return f"{field}: {message}"
    return str(exc)


def start_run(config: RunConfig, suite_cls: type[Suite], *, runs_root: str | Path | None = None,
              providers: Mapping[str, ChatModel] | None = None, progress: bool = True,
              resume: str | None = None, after_run: AfterRun | None = None,
              otel: TraceOptions | None = None, correct_rule: CorrectRule | None = None) -> RunResult:
    """Run ``suite_cls`` as ``config`` says (or continue the run ``resume``: an id or folder); ``otel``: export its
    spans (:mod:`knowgap.engine.tracing`)."""
    runner = Runner(config=config, suite_cls=suite_cls, runs_root=runs_dir(runs_root), providers=providers or {},
                    progress=progress, after_run=after_run, tracing=otel, correct_rule=correct_rule)
    return runner.run(resume=resume)


def resume_config(run: str, *, runs_root: str | Path | None = None,
                  specs: Sequence[str] = ()) -> tuple[RunConfig, Path]:
    """The configuration to continue ``run`` with, and the run's folder. A model spec that held a credential
    was stored redacted; ``specs`` gives it back (each must redact to the stored spec), so credentials come
    from the caller, never from the run's files."""
    store = RunStore.open(runs_dir(runs_root), run)
    manifest = store.read_manifest()
    manifest.config.models = restore_specs(manifest.run_id, manifest.config.models, specs)
    given = {redact(spec): spec for spec in specs}
    manifest.config.prices = {given.get(spec, spec): price for spec, price in manifest.config.prices.items()}
    return manifest.config, store.path


def restore_specs(run_id: str, stored: Mapping[str, str], given: Sequence[str]) -> dict[str, str]:
    """Stored (redacted) specs by role, with every redacted one replaced by the given spec that redacts to it.

    A given spec that matches no stored one is an error (a typo would otherwise pass silently); so is a
    redacted spec with none given."""
    by_redacted = {redact(spec): spec for spec in given}
    unknown = [spec for spec in by_redacted if spec not in stored.values()]
    if unknown:
        raise KnowgapError(f"--spec {unknown[0]} is none of run {run_id}'s models "
                           f"({', '.join(sorted(set(stored.values())))})")
    out = {}
    for role, spec in stored.items():
        if spec in by_redacted:
            out[role] = by_redacted[spec]
        elif MASK in spec:
            raise KnowgapError(
                f"cannot resume {run_id}: its {role} model spec held a credential, which knowgap never stores "
                f"({spec}); pass the whole spec again with --spec '...', or keep the secret in the environment "
                "and name it in the spec as ${NAME} (e.g. openai-compat:m@http://user:${PROXY_KEY}@host/v1)")
        else:
            out[role] = spec
    return out
