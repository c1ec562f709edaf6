"""The Ray executor (``--executor ray``) on a real local Ray cluster: a head and two worker nodes on 127.0.0.1,
started and stopped by this module. The trials, metrics and response cache of a Ray run are those of an
in-process run; a worker node removed mid-run loses no trial and stores none twice; an interrupted Ray run
resumes."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import knowgap
from knowgap.engine.cache import ResponseCache
from knowgap.engine.records import RunConfig
from knowgap.engine.store import TRIALS
from knowgap.errors import KnowgapError
from tests.fakes.models import Fixed
from tests.helpers import REPO, free_port, knowgap_cli

needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                               reason="Ray is not installed (pip install 'knowgap[ray]'; the dev extra installs it)")

# The target: a Python function whose answer depends only on the request, so every executor gets the same
# answer for the same trial; DELAY keeps trials in flight long enough to remove a node under them.
TARGET = '''
import hashlib
import time

DELAY = {delay}


def answer(request):
    time.sleep(DELAY)
    text = request.messages[-1].content
    pick = int(hashlib.sha256(text.encode("utf-8")).hexdigest(), 16) % 4
    return ["I don't know.", "According to the context, it is 20:00.", "30", "上下文中没有提到。"][pick]
'''
# Ray rewrites 127.0.0.1 in an address to the machine's outward IP, where a cluster bound to 127.0.0.1 is not
# listening; with this setting (read when ray is imported: the nodes and the CLI's processes) it keeps the
# loopback address.
LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A head (1 CPU) and two worker nodes (1 CPU each), all bound to 127.0.0.1."""
    with pytest.MonkeyPatch.context() as mp:
        for name, value in LOOPBACK.items():
            mp.setenv(name, value)
        # the nodes' worker processes import knowgap and the tests' helpers from this checkout
        mp.setenv("PYTHONPATH", os.pathsep.join([str(REPO / "src"), str(REPO), os.environ.get("PYTHONPATH", "")]))
        from ray._private import ray_constants
        from ray.cluster_utils import Cluster

        mp.setattr(ray_constants, "ENABLE_RAY_CLUSTER", False)  # the same, when ray was imported before

        ray_cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "node_ip_address": "127.0.0.1"})
        try:
            for _ in range(2):
                ray_cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
            ray_cluster.wait_for_nodes()
            assert ray_cluster.address.startswith("127.0.0.1:")
            yield ray_cluster
        finally:
            ray_cluster.shutdown()


def target(folder: Path, delay: float = 0.0) -> str:
    file = folder / f"target_{str(delay).replace('.', '_')}.py"
    file.write_text(TARGET.format(delay=delay), encoding="utf-8")
    return f"python:{file}:answer"


def trials(run: knowgap.RunResult, runs_root: Path) -> dict[str, dict[str, Any]]:
    """What a trial is, apart from when it ran and whether its calls were cached."""
    return {r.trial_id: {"status": r.status, "output": r.output, "scores": r.scores,
                         "verdicts": [v.model_dump() for v in r.verdicts],
                         "calls": [(c.request.fingerprint(), c.response.text if c.response else c.error)
                                   for c in r.calls]}
            for r in knowgap.iter_trials(run.run_id, runs_root)}


def metrics(run: knowgap.RunResult) -> list[dict[str, Any]]:
    return [m.model_dump() for m in run.metrics]


def stored_ids(run_folder: Path) -> list[str]:
    lines = (run_folder / TRIALS).read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["trial_id"] for line in lines]


@needs_ray
@pytest.mark.slow
def test_ray_run_equals_an_in_process_run_and_shares_its_cache(cluster: Any, tmp_path: Path,
                                                               runs_root: Path) -> None:
    spec = target(tmp_path)
    local = knowgap.run("starter", models={"target": spec}, runs_root=runs_root, use_cache=False)
    on_ray = knowgap.run("starter", models={"target": spec}, runs_root=runs_root, use_cache=False,
                         executor="ray", ray_address=cluster.address)
    assert local.ok and on_ray.ok and on_ray.manifest.trials_ok == 32
    assert on_ray.provider_calls == 32  # made on the workers
    assert trials(on_ray, runs_root) == trials(local, runs_root)
    assert metrics(on_ray) == metrics(local)
    assert on_ray.manifest.config.executor == "ray"
    assert len(stored_ids(on_ray.path)) == 32

    # one cache, one writer: the Ray run's calls went into the driver's cache file under the same keys...
    cache = ResponseCache(Path(os.environ["KNOWGAP_HOME"]) / "cache.sqlite")
    try:
        tags = {row[0] for row in cache._db.execute("SELECT run_id FROM responses")}
    finally:
        cache.close()
    assert tags == {on_ray.run_id}  # the Ray run replaced the in-process run's 32 entries, key for key
    # ... so a repeated run gets hits from them, in process and on Ray
    again_local = knowgap.run("starter", models={"target": spec}, runs_root=runs_root)
    again_ray = knowgap.run("starter", models={"target": spec}, runs_root=runs_root, executor="ray",
                            ray_address=cluster.address)
    assert again_local.provider_calls == again_ray.provider_calls == 0
    assert all(c.cached for r in knowgap.iter_trials(again_ray.run_id, runs_root) for c in r.calls)
    assert metrics(again_ray) == metrics(local)


@needs_ray
@pytest.mark.slow
def test_a_worker_node_removed_mid_run_loses_no_trial(cluster: Any, tmp_path: Path, runs_root: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    import ray

    spec = target(tmp_path, delay=0.4)
    local = knowgap.run("starter", models={"target": spec}, runs_root=runs_root, repeats=3, concurrency=48,
                        use_cache=False)
    head_id = cluster.head_node.node_id
    removed: list[str] = []

    def remove_a_worker_node_once_trials_are_stored() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            folders = list(runs_root.glob("starter-*"))
            running = [f for f in folders if f.name != local.run_id and (f / TRIALS).exists()]
            if running and ray.is_initialized() and len(stored_ids(running[0])) >= 12:
                driver = ray.get_runtime_context().get_node_id()
                node = next(n for n in cluster.worker_nodes if n.node_id not in (head_id, driver))
                removed.append(node.node_id)
                cluster.remove_node(node, allow_graceful=False)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=remove_a_worker_node_once_trials_are_stored, daemon=True)
    killer.start()
    try:
        on_ray = knowgap.run("starter", models={"target": spec}, runs_root=runs_root, repeats=3, concurrency=4,
                             use_cache=False, executor="ray", ray_address=cluster.address)
    finally:
        killer.join(timeout=5)
        if removed:  # give the next tests their two worker nodes back
            cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
            cluster.wait_for_nodes()
    assert removed, "the run ended before a node could be removed"
    assert any("was lost" in r.getMessage() for r in caplog.records), "no trial was in flight on the lost node"
    ids = stored_ids(on_ray.path)
    assert len(ids) == len(set(ids)) == 96  # every trial stored, none twice
    assert on_ray.ok
    assert trials(on_ray, runs_root) == trials(local, runs_root)
    assert metrics(on_ray) == metrics(local)


@needs_ray
@pytest.mark.slow
def test_an_interrupted_ray_run_resumes_from_the_cli(cluster: Any, tmp_path: Path, runs_root: Path) -> None:
    spec = target(tmp_path, delay=0.3)
    env = {**os.environ, **LOOPBACK}
    command = [sys.executable, "-m", "knowgap", "run", "starter", "--model", spec, "--repeats", "2",
               "--concurrency", "2", "--executor", "ray", "--ray-address", cluster.address, "--runs-dir",
               str(runs_root), "--quiet"]
    # A shell without job control starts a background job (pytest too) with Ctrl-C ignored, and a child inherits
    # an ignored signal: the CLI gets Ctrl-C handled by default whatever pytest was started with.
    inherited = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finally:
        signal.signal(signal.SIGINT, inherited)
    seen_at_signal = None
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            folders = list(runs_root.glob("starter-*"))
            if folders and (folders[0] / TRIALS).exists() and len(stored_ids(folders[0])) >= 8:
                seen_at_signal = len(stored_ids(folders[0]))
                proc.send_signal(signal.SIGINT)
                break
            time.sleep(0.05)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, f"Ctrl-C sent with {seen_at_signal} of 64 trials stored (None: not sent); {err}"
    [folder] = runs_root.glob("starter-*")
    interrupted = knowgap.load_run(folder.name, runs_root)[0]
    assert interrupted.status == "interrupted" and interrupted.config.executor == "ray"
    before = stored_ids(folder)
    assert 8 <= len(before) < 64

    resumed = subprocess.run([sys.executable, "-m", "knowgap", "resume", folder.name, "--runs-dir", str(runs_root),
                              "--quiet"], env=env, capture_output=True, text=True, timeout=300, check=False)
    assert resumed.returncode == 0, resumed.stderr
    ids = stored_ids(folder)
    assert ids[:len(before)] == before and len(ids) == len(set(ids)) == 64
    manifest, resumed_metrics = knowgap.load_run(folder.name, runs_root)
    assert manifest.status == "finished" and manifest.trials_ok == 64
    local = knowgap.run("starter", models={"target": spec}, runs_root=runs_root, repeats=2, concurrency=32)
    assert [m.model_dump() for m in resumed_metrics] == metrics(local)


def test_without_ray_a_ray_run_says_how_to_install_it(tmp_path: Path, runs_root: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError, as without the package
    with pytest.raises(KnowgapError, match=r"pip install 'knowgap\[ray\]'"):
        knowgap.run("starter", models={"target": target(tmp_path)}, runs_root=runs_root, executor="ray")
    assert not runs_root.exists()  # refused before a run folder was made
    assert knowgap.run("starter", models={"target": target(tmp_path)}, runs_root=runs_root).ok  # local still runs


@needs_ray
def test_ray_refuses_providers_given_as_objects(runs_root: Path) -> None:
    with pytest.raises(KnowgapError, match="providers given as Python objects"):
        knowgap.run("starter", models={"target": "mine:m"}, providers={"mine:m": Fixed("x", spec="mine:m")},
                    runs_root=runs_root, executor="ray")
    assert not runs_root.exists()  # refused before a run folder was made


@needs_ray
@pytest.mark.parametrize(("address", "message"), [
    (f"127.0.0.1:{free_port()}", "no Ray cluster answers there"),
    ("ray://10.0.0.1:10001", r"Ray Client \(ray://\) is not supported"),
    ("headnode", "expected HOST:PORT"),
], ids=["nothing-listening", "ray-client", "no-port"])  # ids, not the drawn port: test ids must not vary
def test_a_bad_ray_address_is_named_before_anything_runs(tmp_path: Path, runs_root: Path, address: str,
                                                         message: str) -> None:
    with pytest.raises(KnowgapError, match=message):
        knowgap.run("starter", models={"target": target(tmp_path)}, runs_root=runs_root, executor="ray",
                    ray_address=address)
    assert not runs_root.exists()


def test_cli_ray_address_needs_the_ray_executor(tmp_path: Path, runs_root: Path) -> None:
    result = knowgap_cli("run", "starter", "--model", target(tmp_path), "--executor", "local", "--ray-address",
                         "10.0.0.1:6379", "--runs-dir", str(runs_root), "--quiet")
    assert result.returncode == 2
    assert "--ray-address 10.0.0.1:6379 is for --executor ray" in result.stderr + result.stdout
    assert not runs_root.exists()


def test_rate_limits_are_shared_among_the_ray_workers() -> None:
    """--rpm 100 on 3 workers: 33 each, so the cluster sends at most 99 a minute, never 300."""
    from knowgap.engine.ray_executor import share_rate_limits

    config = RunConfig(suite="starter", rpm=100, tpm=50_000)
    shared = share_rate_limits(config, 3)
    assert (shared.rpm, shared.tpm) == (33, 16_666) and config.rpm == 100
    assert share_rate_limits(RunConfig(suite="starter", rpm=2), 5).rpm == 1  # never 0 (0 would be no limit)
    assert share_rate_limits(config, 1) is config
    assert share_rate_limits(RunConfig(suite="starter"), 4).rpm is None


def test_workers_get_the_drivers_model_settings_and_the_keys_their_specs_name(monkeypatch: pytest.MonkeyPatch
                                                                               ) -> None:
    from knowgap.engine.ray_executor import worker_env

    monkeypatch.setenv("KNOWGAP_EMBED_CACHE", "off")
    monkeypatch.setenv("KNOWGAP_N_THREADS", "1")
    monkeypatch.setenv("TEAM_KEY", "sk-team")
    monkeypatch.setenv("UNRELATED_SECRET", "x")
    monkeypatch.delenv("KNOWGAP_N_CTX", raising=False)
    config = RunConfig(suite="starter", models={"target": "openai-compat:m@http://h/v1?key=${TEAM_KEY}"})
    env = worker_env(config)
    assert env["KNOWGAP_EMBED_CACHE"] == "off" and env["KNOWGAP_N_THREADS"] == "1" and env["TEAM_KEY"] == "sk-team"
    assert "UNRELATED_SECRET" not in env and "KNOWGAP_N_CTX" not in env
