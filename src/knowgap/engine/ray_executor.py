"""The Ray executor (``knowgap run SUITE --executor ray [--ray-address ADDR]``): a run's trials on the workers
of a Ray cluster, while this process, the driver, keeps the run store and the response cache.

- **Workers**: one actor per node of the cluster (a node with at least one CPU), each holding the suite
  (rebuilt there from the run's :class:`RunConfig` and the suite class's import path) and its own model
  gateway, so a local model is loaded once per node and HTTP targets are called from the nodes. A worker runs
  its trials on one private event loop, as the in-process executor does (``Runner._run_one``: same seeds, same
  records).
- **Run store**: only the driver writes it. It appends each :class:`TrialRecord` as it comes back, with the
  progress bar; resume, reports and every invariant of the store are those of an in-process run.
- **Response cache**: only one process writes the cache file: a small actor placed on the driver's node
  (:class:`CacheServer`) opens the driver's cache file, and the workers' gateways look up and store through it
  (:class:`RemoteCache`, one round trip each), with the same keys and run tags as an in-process run. So a
  resumed or repeated run gets hits from calls a Ray run made and the other way round, and a call that finished
  before a crash (or before its worker died) is not made again.
- **Lost workers**: a trial whose worker died (its node removed, the process killed) goes to another worker;
  the driver stores a trial only when its result arrives and never twice. A trial that loses its worker
  ``MAX_ATTEMPTS`` times is stored as an error (run again on resume) rather than killing worker after worker.
- **Memory**: at most ``2 x concurrency`` trials are in flight per worker, pulled lazily from the runner's
  trial iterator.

Ray is imported only here, and only when a run asks for it (``pip install 'knowgap[ray]'``).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from knowgap.engine.cache import ResponseCache
from knowgap.engine.progress import TrialProgress
from knowgap.engine.records import RunConfig, TrialRecord, utcnow
from knowgap.engine.store import RunStore
from knowgap.engine.suite import Suite, Trial
from knowgap.errors import KnowgapError
from knowgap.models.base import ChatModel
from knowgap.models.registry import _ENV_REF
from knowgap.models.types import ChatResponse
from knowgap.redaction import redact

if TYPE_CHECKING:
    from knowgap.engine.gateway import ModelClient, ModelGateway

log = logging.getLogger("knowgap.run")

INSTALL_HINT = "pip install 'knowgap[ray]'"
MAX_ATTEMPTS = 3
"""Workers a trial may lose before it is stored as an error."""
FORWARDED_ENV = ("KNOWGAP_N_CTX", "KNOWGAP_N_THREADS", "KNOWGAP_PREFIX_CACHE_MB", "KNOWGAP_ALLOW_AMX",
                 "KNOWGAP_EMBED_CACHE",
                 "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
"""The driver's environment the workers get (with every ``${NAME}`` the model specs name): model settings that
change answers, the embedding cache's place (``off`` stays off on every node; a folder a node cannot use costs that
node one warning), and provider credentials (sent in the actors' arguments, never written to a file or a log)."""


class TrialRunner(Protocol):
    """What this module uses of ``knowgap.engine.runner.Runner`` (which imports this module: the worker gets the
    class itself in its arguments, so the import points one way)."""

    config: RunConfig
    suite: Suite
    progress: bool
    gateway: ModelGateway
    remote_provider_calls: int

    def _clients(self, run_id: str, cache: ResponseCache | None, *,
                 prepare: bool = True) -> dict[str, ModelClient]: ...

    async def _run_one(self, trial: Trial, clients: Mapping[str, ModelClient]) -> TrialRecord: ...


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise KnowgapError(f"--executor ray needs Ray, which is not installed: {INSTALL_HINT}") from None
    return ray


def suite_path(suite_cls: type[Suite]) -> str:
    """``module:QualName`` of a suite class, from which a worker imports it."""
    module, name = suite_cls.__module__, suite_cls.__qualname__
    if module == "__main__" or "<locals>" in name:
        raise KnowgapError(f"suite '{suite_cls.name}' is defined in {module if module == '__main__' else name}: "
                           "the ray executor imports a suite on each worker by its module path; put the class "
                           "in an importable module (installed on every node), or use --executor local")
    return f"{module}:{name}"


def load_suite(path: str) -> type[Suite]:
    module, _, name = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def check_ray_run(config: RunConfig, suite_cls: type[Suite], providers: Mapping[str, ChatModel]) -> None:
    """Refuse a Ray run that cannot work, before anything is created: Ray missing, a suite that workers cannot
    import, providers given as objects (they cannot be sent), an address where no cluster answers."""
    import_ray()
    suite_path(suite_cls)
    if providers:
        raise KnowgapError(f"the ray executor builds every model from its spec on the workers; providers given as "
                           f"Python objects ({', '.join(sorted(redact(s) for s in providers))}) cannot be sent "
                           "there: name the model by a spec (python:MODULE:FUNCTION for your own code) or use "
                           "executor local")
    if config.ray_address not in (None, "auto"):
        check_reachable(config.ray_address)


def check_reachable(address: str) -> None:
    """A clear error for a Ray address nobody answers at (Ray itself retries for minutes)."""
    if address.startswith("ray://"):
        raise KnowgapError(f"--ray-address {address}: Ray Client (ray://) is not supported, because the driver "
                           "keeps the run store and the response cache on its own disk; run knowgap on a node of "
                           "the cluster and pass --ray-address HOST:PORT (or auto)")
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise KnowgapError(f"--ray-address {address}: expected HOST:PORT of the cluster's head (e.g. "
                           "10.0.0.1:6379) or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as exc:
        raise KnowgapError(f"--ray-address {address}: no Ray cluster answers there ({exc.strerror or exc}); "
                           "start one with ray start --head, or check the address") from None


def worker_env(config: RunConfig) -> dict[str, str]:
    names = set(FORWARDED_ENV) | {n for spec in config.models.values() for n in _ENV_REF.findall(spec)}
    return {n: os.environ[n] for n in sorted(names) if n in os.environ}


async def execute_on_ray(runner: TrialRunner, store: RunStore, trials: Iterator[Trial], total: int, done: int,
                         clients: Mapping[str, ModelClient]) -> None:
    """The runner's hook: run ``trials`` on Ray, store each as it returns, count the workers' provider calls."""
    cache = runner.gateway.cache
    executor = RayExecutor(runner, cache.path if cache is not None else None)
    try:
        await executor.execute(store, trials, total, done, clients)
    finally:
        runner.remote_provider_calls = executor.provider_calls


class CacheServer:
    """The response cache of a Ray run, in one process on the driver's node: the only writer of the file."""

    def __init__(self, path: str) -> None:
        self.cache = ResponseCache(Path(path))

    def get(self, key: str, run_id: str | None) -> ChatResponse | None:
        return self.cache.get(key, run_id=run_id)

    def put(self, key: str, spec: str, run_id: str, response: ChatResponse, identity: str | None) -> None:
        self.cache.put(key, spec, run_id, response, identity)
        self.cache.flush()  # committed before the worker's round trip returns, whatever thread Ray runs this on

    def close(self) -> None:
        self.cache.close()


class RemoteCache(ResponseCache):
    """A worker's view of the driver's response cache: every lookup and write goes to the :class:`CacheServer`
    (a blocking round trip, so a response is stored before the trial that asked for it returns)."""

    def __init__(self, server: Any) -> None:  # no file of its own
        self.server = server
        self.path = Path("<ray cache server>")

    def get(self, key: str, *, run_id: str | None = None) -> ChatResponse | None:
        return import_ray().get(self.server.get.remote(key, run_id))

    def put(self, key: str, spec: str, run_id: str, response: ChatResponse, identity: str | None = None) -> None:
        import_ray().get(self.server.put.remote(key, spec, run_id, response, identity))

    def flush(self) -> None:
        pass  # every put is a round trip that commits (CacheServer.put)

    def commit_pending(self) -> None:
        pass

    def close(self) -> None:
        pass


def share_rate_limits(config: RunConfig, workers: int) -> RunConfig:
    """``config`` for one of ``workers`` workers: its ``rpm`` / ``tpm`` divided among them (at least 1 each), so
    the cluster together keeps to the limits the user set."""
    if workers <= 1 or (config.rpm is None and config.tpm is None):
        return config
    return config.model_copy(update={key: max(1, value // workers) for key in ("rpm", "tpm")
                                     if (value := getattr(config, key)) is not None})


class TrialWorker:
    """One node's worker: the suite, a gateway over the driver's cache, and a private event loop on which its
    trials run concurrently (the actor's threads only wait for them)."""

    def __init__(self, runner_cls: Callable[..., TrialRunner], config: RunConfig, suite: str, run_id: str,
                 cache: Any, env: Mapping[str, str], cwd: str, home: str | None) -> None:
        os.environ.update(env)
        if home is not None and Path(home).is_dir():  # the driver's KNOWGAP_HOME, when this node sees it
            os.environ["KNOWGAP_HOME"] = home
        if Path(cwd).is_dir():  # relative paths in specs and options mean what they mean to the driver
            os.chdir(cwd)
        self.runner = runner_cls(config=config, suite_cls=load_suite(suite), runs_root=Path(cwd), progress=False)
        self.clients = self.runner._clients(run_id, RemoteCache(cache) if cache is not None else None)
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="knowgap-ray-trials", daemon=True).start()

    def identities(self) -> dict[str, str]:
        """Each role's model identity here (the driver checks that its workers run the same models)."""
        return {role: client.identity for role, client in self.clients.items()}

    def run(self, trial: Trial) -> TrialRecord:
        return asyncio.run_coroutine_threadsafe(self.runner._run_one(trial, self.clients), self.loop).result()

    def provider_calls(self) -> int:
        return self.runner.gateway.provider_calls

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.gateway.aclose(), self.loop).result()
        self.loop.call_soon_threadsafe(self.loop.stop)


@dataclass
class _Worker:
    handle: Any
    node_id: str
    node: str
    """The node's address and id, for messages."""
    in_flight: int = 0
    alive: bool = True


@dataclass
class _Flight:
    trial: Trial
    worker: _Worker
    attempt: int


class RayExecutor:
    """Runs a runner's trials on Ray workers and stores them from the driver (see the module's docstring)."""

    def __init__(self, runner: TrialRunner, cache_file: Path | None) -> None:
        self.runner = runner
        self.config = runner.config
        self.cache_file = cache_file
        self.ray = import_ray()
        self.workers: list[_Worker] = []
        self.provider_calls = 0
        """Calls that reached a provider on the workers still alive at the end."""

    async def execute(self, store: RunStore, trials: Iterator[Trial], total: int, done: int,
                      clients: Mapping[str, ModelClient]) -> None:
        ray = self.ray
        started = not ray.is_initialized()
        if started:
            try:
                ray.init(address=self.config.ray_address, logging_level=logging.WARNING)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise KnowgapError(f"cannot start or join Ray (--ray-address {self.config.ray_address or 'none'}): "
                                   f"{_first_line(exc)}") from None
        cache_server, graceful = None, False
        try:
            if self.cache_file is not None:
                cache_server = self._on_driver_node(ray.remote(CacheServer)).remote(str(self.cache_file))
            per_worker = self.config.concurrency or max(c.limit for c in clients.values())
            identities = {role: client.identity for role, client in clients.items()}
            if not await self._start_workers(cache_server, per_worker, identities):
                raise KnowgapError("the Ray cluster has no alive node with a CPU for a knowgap worker "
                                   f"({len(ray.nodes())} nodes known); start Ray with --num-cpus 1 or more")
            label = redact(f"{self.runner.suite.name} · {self.config.models.get('target', '')} · "
                           f"ray, {len(self.workers)} workers")
            with TrialProgress(label, total, done, enabled=self.runner.progress) as bar:
                await self._drive(store, trials, bar, cache_server, per_worker, identities)
            calls = [w.handle.provider_calls.remote() for w in self.workers if w.alive]
            self.provider_calls = sum(await asyncio.gather(*calls))
            graceful = True
        finally:
            self._stop(cache_server, graceful)
            if started:
                ray.shutdown()

    # workers ----------------------------------------------------------------------------------
    def _on_driver_node(self, actor: Any) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        node = self.ray.get_runtime_context().get_node_id()
        return actor.options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False))

    async def _start_workers(self, cache_server: Any, per_worker: int, identities: Mapping[str, str]) -> int:
        """A worker on every alive node with a CPU and no live worker; returns how many were started."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        ray = self.ray
        busy = {w.node_id for w in self.workers if w.alive}
        nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) >= 1
                 and n["NodeID"] not in busy]
        actor = ray.remote(TrialWorker)
        started = []
        # --rpm / --tpm hold for the whole cluster: each worker gets its share (of the live ones and these)
        config = share_rate_limits(self.config, len(busy) + len(nodes))
        for node in nodes:
            handle = actor.options(
                num_cpus=1, max_concurrency=2 * per_worker + 1, max_restarts=0, max_task_retries=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False),
            ).remote(type(self.runner), config, suite_path(type(self.runner.suite)), self.runner.gateway.run_id,
                     cache_server, worker_env(self.config), os.getcwd(), os.environ.get("KNOWGAP_HOME"))
            started.append(_Worker(handle=handle, node_id=node["NodeID"],
                                   node=f"{node.get('NodeManagerAddress', '?')} ({node['NodeID'][:8]})"))
        for worker in started:
            try:
                theirs = await worker.handle.identities.remote()
            except self.ray.exceptions.RayError as exc:
                if not self._worker_lost(exc):
                    raise KnowgapError(f"the Ray worker on node {worker.node} could not start: "
                                       f"{_last_line(exc)}") from None
                log.warning("the Ray worker on node %s was lost as it started", worker.node)
                continue
            if theirs != dict(identities):
                raise KnowgapError(f"the Ray worker on node {worker.node} sees other models than this process "
                                   f"(identities {theirs} here: {dict(identities)}); install the same models "
                                   "and files on every node")
            self.workers.append(worker)
        return len(started)

    def _worker_lost(self, exc: BaseException) -> bool:
        """A failure of the worker, not of the code it ran: its trials go to another worker."""
        errors = self.ray.exceptions
        if isinstance(exc, errors.RayActorError):
            # an actor whose constructor raised is "dead" too, but that is a bad setting or a bug: not lost
            return not exc.actor_init_failed
        return isinstance(exc, (errors.NodeDiedError, errors.WorkerCrashedError, errors.ObjectLostError,
                                errors.LocalRayletDiedError))

    def _stop(self, cache_server: Any, graceful: bool) -> None:
        """Close the workers' models and the cache file (``graceful``: the run ended with no trial in flight),
        then kill the actors; after an error or Ctrl-C they are killed at once, their trials unfinished."""
        ray = self.ray
        if graceful:
            closing = [w.handle.close.remote() for w in self.workers if w.alive]
            if cache_server is not None:
                closing.append(cache_server.close.remote())
            try:
                ray.get(closing, timeout=60)
            except Exception as exc:  # closing is best effort: the actors are killed anyway
                log.debug("closing the Ray workers: %s", exc)
        for handle in [w.handle for w in self.workers] + ([cache_server] if cache_server is not None else []):
            ray.kill(handle)

    # trials -----------------------------------------------------------------------------------
    async def _drive(self, store: RunStore, trials: Iterator[Trial], bar: TrialProgress, cache_server: Any,
                     per_worker: int, identities: Mapping[str, str]) -> None:
        pending: dict[asyncio.Future[Any], _Flight] = {}
        again: list[tuple[Trial, int]] = []
        stored: set[str] = set()
        exhausted = False
        while True:
            while True:  # fill every worker up to 2 x its concurrency
                worker = min((w for w in self.workers if w.alive), key=lambda w: w.in_flight, default=None)
                if worker is None or worker.in_flight >= 2 * per_worker:
                    break
                if again:
                    trial, attempt = again.pop()
                elif not exhausted:
                    next_trial = next(trials, None)
                    if next_trial is None:
                        exhausted = True
                        continue
                    trial, attempt = next_trial, 1
                else:
                    break
                worker.in_flight += 1
                pending[asyncio.ensure_future(worker.handle.run.remote(trial))] = _Flight(trial, worker, attempt)
            if not pending:
                if again or not exhausted:  # work left and no worker: every one was lost
                    if await self._start_workers(cache_server, per_worker, identities):
                        continue
                    raise KnowgapError(f"every Ray worker was lost; {len(stored)} trials of this session are "
                                       f"stored; continue with knowgap resume {store.run_id}")
                return
            finished, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for future in finished:
                flight = pending.pop(future)
                flight.worker.in_flight -= 1
                try:
                    record: TrialRecord = future.result()
                except self.ray.exceptions.RayError as exc:
                    if not self._worker_lost(exc):
                        raise KnowgapError(f"a Ray worker failed on trial {flight.trial.trial_id}: "
                                           f"{_last_line(exc)}") from None
                    record_or_none = self._lost(flight, exc)
                    if record_or_none is None:
                        again.append((flight.trial, flight.attempt + 1))
                        continue
                    record = record_or_none
                if record.trial_id in stored:  # a result that came back twice is stored once
                    continue
                stored.add(record.trial_id)
                store.append(record)
                bar.advance(error=record.status != "ok")

    def _lost(self, flight: _Flight, exc: BaseException) -> TrialRecord | None:
        """The trial's worker was lost: None to run it again elsewhere, or an error record after MAX_ATTEMPTS."""
        worker = flight.worker
        if worker.alive:
            worker.alive = False
            log.warning("the Ray worker on node %s was lost (%s); its trials run on the other workers",
                        worker.node, _first_line(exc))
            self.ray.kill(worker.handle)
        if flight.attempt < MAX_ATTEMPTS:
            return None
        trial = flight.trial
        return TrialRecord(trial_id=trial.trial_id, case_id=trial.case.id, config_id=trial.config.id,
                           config=trial.config.params, repeat=trial.repeat, status="error", started_at=utcnow(),
                           case_tags=self.runner.suite.case_tags(trial.case),
                           error=redact(f"the Ray worker running this trial was lost {MAX_ATTEMPTS} times "
                                        f"(last: {_first_line(exc)})"))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return redact(text.splitlines()[0] if text else type(exc).__name__)


def _last_line(exc: BaseException) -> str:
    """The exception line that ends a remote traceback (``KnowgapError: ...``)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return redact(lines[-1] if lines else type(exc).__name__)
