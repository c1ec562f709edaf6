"""``openai-compat:MODEL@URL1,URL2,...``: one model on several real servers (``knowgap.models.replicas``).

The servers are real processes on 127.0.0.1 (tests/fakes/fake_openai_server.py: a deterministic answer per
request, a log of every request it answered); one is killed with SIGKILL in the middle of a real run.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from knowgap import api
from knowgap.engine.cache import ResponseCache
from knowgap.engine.gateway import ModelGateway, RetryPolicy
from knowgap.engine.runner import Runner, RunResult, resume_config
from knowgap.errors import KnowgapError
from knowgap.models.errors import ModelUnavailableError
from knowgap.models.registry import create_model
from knowgap.models.replicas import ReplicaPool
from knowgap.models.types import ChatRequest
from knowgap.paths import cache_path
from knowgap.suites import get_suite
from tests.fakes.fake_openai_server import FakeServer, fake_server
from tests.helpers import free_port, knowgap_cli


def pool_of(spec: str) -> ReplicaPool:
    model = create_model(spec)
    assert isinstance(model, ReplicaPool)
    return model


def pool_spec(*urls: str) -> str:
    return "openai-compat:fake@" + ",".join(urls)


@contextmanager
def servers(workdir: Path, *delays: float) -> Iterator[list[FakeServer]]:
    """One fake server per delay (seconds before each answer), all stopped on exit."""
    with ExitStack() as stack:
        yield [stack.enter_context(fake_server(workdir, "--delay", str(delay), name=f"replica{i}"))
               for i, delay in enumerate(delays)]


def answered(server: FakeServer) -> int:
    return sum(1 for e in server.entries() if e["outcome"] == "ok")


def answered_by_now(server: FakeServer, expected: int, wait_s: float = 5.0) -> int:
    """:func:`answered`, once it reaches ``expected`` or ``wait_s`` passed: the fake server logs an answer just after
    sending it, so a client can hold its last answer before the line is written (seen under load in CI)."""
    deadline = time.monotonic() + wait_s
    while (count := answered(server)) < expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return count


# the spec ----------------------------------------------------------------------------------------


def test_a_comma_list_is_a_pool_with_the_first_urls_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = "openai-compat:org/m@v2@http://user:pw@127.0.0.1:1/v1/, http://127.0.0.1:2/v1,https://H.example/v1"
    pool = pool_of(spec)
    assert [r.url for r in pool.replicas] == ["http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1",
                                              "https://h.example/v1"]
    assert pool.model == "org/m@v2"
    single = create_model("openai-compat:org/m@v2@http://127.0.0.1:1/v1")
    assert pool.identity() == single.identity() == "openai-compat:org/m@v2@http://127.0.0.1:1/v1"
    assert pool_of(spec + ",http://127.0.0.1:4/v1").identity() == pool.identity(), "adding a replica keeps it"
    assert pool_of("openai-compat:org/m@v2@http://127.0.0.1:2/v1,http://127.0.0.1:1/v1").identity() != pool.identity()
    assert pool.default_concurrency == 3 * single.default_concurrency
    facts = pool.describe()
    assert facts["replicas"] == "http://127.0.0.1:1/v1, http://127.0.0.1:2/v1, https://h.example/v1"
    assert "pw" not in json.dumps(facts) and facts["backend"] == "openai-compatible HTTP, 3 replicas"
    assert type(create_model("openai-compat:m@http://127.0.0.1:1/v1")).__name__ == "OpenAIChatModel"


@pytest.mark.parametrize(("rest", "expected"), [
    ("http://a/v1,", "replica 2 of 2 is empty (a stray comma?)"),
    ("http://a/v1,,http://b/v1", "replica 2 of 3 is empty"),
    ("http://a/v1?tags=x,y", "replica 2 of 2, 'y', is not an http:// or https:// URL; replicas are separated by "
                             "commas, so write a comma inside a URL (or in a ${NAME} it names) as %2C"),
    ("http://a/v1,ftp://b/v1", "replica 2 of 2, 'ftp://b/v1', is not an http"),
    ("http://a/v1,http://b:port/v1", "replica 2 of 2, 'http://b:port/v1', is not a valid URL (Port could not be "),
    ("http://a:1/v1,http://u:pw@A:1/v1/", "replica 2 of 2 repeats replica 1 ('http://a:1/v1'); list each once"),
])
def test_a_bad_replica_list_names_the_item(rest: str, expected: str) -> None:
    with pytest.raises(ModelUnavailableError) as info:
        create_model(f"openai-compat:m@{rest}")
    message = str(info.value)
    assert message.startswith("bad model spec 'openai-compat:m@") and expected in message
    assert "pw" not in message


def test_a_secret_with_a_comma_is_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROXY_AUTH", "user:pa,ssword-tail")
    with pytest.raises(ModelUnavailableError) as info:
        create_model("openai-compat:m@http://${PROXY_AUTH}@a/v1,http://b/v1")
    message = str(info.value)
    assert "replica 1 of 3, (hidden: the spec names environment variables), is not a valid URL" in message
    assert "ssword" not in message and "${PROXY_AUTH}" in message


def test_a_comma_inside_a_url_is_written_percent_2c() -> None:
    pool = pool_of("openai-compat:m@http://a/v1?tags=x%2Cy,http://b/v1")
    assert [r.url for r in pool.replicas] == ["http://a/v1?tags=x%2Cy", "http://b/v1"]


# real servers ------------------------------------------------------------------------------------


def run_in_thread(**kwargs: Any) -> tuple[threading.Thread, list[RunResult | BaseException]]:
    out: list[RunResult | BaseException] = []

    def target() -> None:
        try:
            out.append(api.run("starter", **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            out.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    return thread, out


def metric_values(result: RunResult) -> list[tuple[str, str, float | None, int]]:
    return sorted((m.name, m.group, m.value, m.n) for m in result.metrics)


@pytest.mark.server
@pytest.mark.slow
def test_a_replica_killed_mid_run_loses_and_repeats_no_trial(tmp_path: Path, runs_root: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("WARNING", logger="knowgap.models")
    with servers(tmp_path / "servers", 0.1, 0.1, 0.1) as (victim, *others):
        spec = pool_spec(victim.base_url, *(s.base_url for s in others))
        pool = pool_of(spec)
        thread, out = run_in_thread(models={"target": spec}, repeats=3, concurrency=6, runs_root=runs_root,
                                    providers={spec: pool})
        deadline = time.monotonic() + 60
        while answered(victim) < 3 and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert thread.is_alive(), "the run ended before the replica could be killed"
        victim.proc.kill()
        victim.proc.wait(timeout=10)
        killed_after = answered(victim)
        thread.join(timeout=300)
        assert out and isinstance(out[0], RunResult), out
        result = out[0]

        # every trial finished ok, stored exactly once, its one call answered once (no gateway retry needed)
        assert result.status == "finished" and result.manifest.trials_ok == result.manifest.trials_total == 96
        records = [json.loads(line) for line in (result.path / "trials.jsonl").read_text().splitlines()]
        assert Counter(r["trial_id"] for r in records) == Counter({r["trial_id"]: 1 for r in records})
        assert len(records) == 96 and all(r["status"] == "ok" for r in records)
        assert all(len(r["calls"]) == 1 and r["calls"][0]["attempts"] == 1 for r in records)
        assert result.provider_calls == 96
        cache = ResponseCache(cache_path())
        try:
            assert cache.stats()["entries"] == 96
        finally:
            cache.close()

        # the killed replica served calls before it died, none after; the others took its share
        dead, *alive = pool.replicas
        assert killed_after >= 3 and dead.answered >= 3
        assert answered(victim) == killed_after
        assert dead.down and dead.taken_out == 1 and dead.failures >= 1
        assert [r.answered for r in alive] == [answered(s) for s in others], "each answer was used once"
        assert sum(r.answered for r in pool.replicas) == 96
        assert all(r.answered > dead.answered for r in alive)
        assert result.manifest.models["target"]["replicas"] == ", ".join(s.base_url for s in (victim, *others))
        lines = [r.getMessage() for r in caplog.records]
        assert sum(f"replica {victim.base_url} taken out" in line for line in lines) == 1
        (summary,) = (line for line in lines if ": replicas: " in line)
        assert f"{victim.base_url}: {dead.answered} answered, {dead.failures} failed, taken out 1x" in summary

        # the same metrics as one healthy server
        single = api.run("starter", models={"target": others[0].spec}, repeats=3, concurrency=6, use_cache=False,
                         runs_root=runs_root)
        assert single.status == "finished" and single.provider_calls == 96
        assert metric_values(single) == metric_values(result)


@pytest.mark.server
def test_adding_a_replica_keeps_the_cache_and_lets_the_run_resume(tmp_path: Path, runs_root: Path) -> None:
    with servers(tmp_path / "servers", 0.0, 0.0) as (first, second):
        options = {"sample": 4, "prompts": ["grounded"]}
        alone = api.run("starter", models={"target": first.spec}, options=options, runs_root=runs_root)
        assert alone.status == "finished" and alone.provider_calls == 4
        spec = pool_spec(first.base_url, second.base_url)
        pooled = api.run("starter", models={"target": spec}, options=options, runs_root=runs_root)
        assert pooled.status == "finished" and pooled.provider_calls == 0, "every answer came from the cache"
        assert metric_values(pooled) == metric_values(alone)

        config, _ = resume_config(alone.run_id, runs_root=runs_root)
        config.models = {"target": spec}
        resumed = Runner(config=config, suite_cls=get_suite("starter"), runs_root=runs_root, progress=False)
        assert resumed.run(resume=alone.run_id).status == "finished"
        config.models = {"target": pool_spec(second.base_url, first.base_url)}
        reordered = Runner(config=config, suite_cls=get_suite("starter"), runs_root=runs_root, progress=False)
        with pytest.raises(KnowgapError, match="changed since it started"):
            reordered.run(resume=alone.run_id)
        assert answered(first) == 4 and answered(second) == 0


@pytest.mark.server
def test_a_slow_replica_gets_fewer_calls(tmp_path: Path) -> None:
    with servers(tmp_path / "servers", 0.02, 0.02, 0.5) as replicas:
        spec = pool_spec(*(s.base_url for s in replicas))
        gateway = ModelGateway(run_id="spread", concurrency=6)

        async def calls() -> list[str | None]:
            records = await asyncio.gather(*(gateway.call(spec, "target", ChatRequest.simple(f"question {i}"))
                                             for i in range(60)))
            await gateway.aclose()
            return [r.error for r in records]

        assert asyncio.run(calls()) == [None] * 60
        fast1, fast2, slow = (answered(s) for s in replicas)
        assert fast1 + fast2 + slow == 60
        assert 0 < slow < min(fast1, fast2) / 2, (fast1, fast2, slow)


@pytest.mark.server
def test_a_replica_that_comes_back_is_used_again(tmp_path: Path) -> None:
    with servers(tmp_path / "servers", 0.05) as (first,):
        port = free_port()
        second_url = f"http://127.0.0.1:{port}/v1"  # nothing listens yet
        spec = pool_spec(first.base_url, second_url)
        gateway = ModelGateway(run_id="comeback", retry=RetryPolicy(max_retries=0))
        try:
            for i in range(4):
                assert gateway.call_sync(spec, "target", ChatRequest.simple(f"before {i}")).error is None
            pool = gateway.client(spec).model
            assert isinstance(pool, ReplicaPool)
            dead = pool.replicas[1]
            assert dead.down and dead.taken_out == 1 and dead.answered == 0 and answered(first) == 4
            assert "Connection refused" in dead.reason or "connect" in dead.reason.lower()
            with fake_server(tmp_path / "servers", "--delay", "0.05", name="second", port=port) as second:
                deadline, i = time.monotonic() + 20, 0
                while answered(second) == 0 and time.monotonic() < deadline:
                    assert gateway.call_sync(spec, "target", ChatRequest.simple(f"after {i}")).error is None
                    i += 1
                    time.sleep(0.05)
                assert answered(second) >= 1 and not dead.down and dead.answered == answered(second)
        finally:
            gateway.close()


@pytest.mark.server
def test_a_hung_replica_is_taken_out_when_a_call_is_abandoned(tmp_path: Path) -> None:
    with ExitStack() as stack:
        hung = stack.enter_context(fake_server(tmp_path / "servers", "--fault-every", "1", "--fault-kind", "hang",
                                               "--hang-seconds", "30", name="hung"))
        healthy = stack.enter_context(fake_server(tmp_path / "servers", "--delay", "0.02", name="healthy"))
        spec = pool_spec(hung.base_url, healthy.base_url)
        retry = RetryPolicy(max_retries=2, base_s=0.01, cap_s=0.01, timeout_s=1.0)
        gateway = ModelGateway(run_id="hang", retry=retry, concurrency=4)

        async def calls() -> list[int]:
            records = await asyncio.gather(*(gateway.call(spec, "target", ChatRequest.simple(f"question {i}"))
                                             for i in range(8)))
            await gateway.aclose()
            assert [r.error for r in records] == [None] * 8
            return [r.attempts for r in records]

        attempts = asyncio.run(calls())
        pool = gateway.client(spec).model
        assert isinstance(pool, ReplicaPool)
        stuck = pool.replicas[0]
        assert stuck.answered == 0 and stuck.taken_out >= 1 and "abandoned" in stuck.reason
        assert answered_by_now(healthy, 8) == 8 and max(attempts) <= 2, attempts
        assert any(e["outcome"] == "hang" for e in hung.entries())


@pytest.mark.server
def test_an_http_error_status_is_retried_by_the_gateway_without_taking_the_replica_out(tmp_path: Path) -> None:
    with ExitStack() as stack:
        failing = stack.enter_context(fake_server(tmp_path / "servers", "--fault-every", "1", "--fault-kind", "500",
                                                  name="failing"))
        healthy = stack.enter_context(fake_server(tmp_path / "servers", name="healthy"))
        spec = pool_spec(failing.base_url, healthy.base_url)
        gateway = ModelGateway(run_id="status", retry=RetryPolicy(max_retries=3, base_s=0.0, cap_s=0.0))
        try:
            records = [gateway.call_sync(spec, "target", ChatRequest.simple(f"question {i}")) for i in range(6)]
            pool = gateway.client(spec).model
        finally:
            gateway.close()
        assert [r.error for r in records] == [None] * 6 and answered(healthy) == 6
        assert isinstance(pool, ReplicaPool) and pool.replicas[0].taken_out == 0
        assert sum(r.attempts for r in records) - 6 == len(failing.entries()) > 0, "each 500 cost one gateway retry"


@pytest.mark.server
def test_all_replicas_down_errors_the_trials_naming_them_and_exits_3(tmp_path: Path) -> None:
    ports = [free_port(), free_port()]  # nothing listens on them
    spec = f"openai-compat:m@http://user:s3cret-pw@127.0.0.1:{ports[0]}/v1,http://127.0.0.1:{ports[1]}/v1"
    runs = tmp_path / "runs"
    proc = knowgap_cli("run", "starter", "--model", spec, "--sample", "2", "--prompts", "grounded",
                       "--max-retries", "1", "--runs-dir", str(runs), "--quiet")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 3, output
    assert "no replica answers" in output
    stored = "".join(p.read_text(encoding="utf-8") for p in runs.rglob("*") if p.is_file() and p.suffix != ".lock")
    assert "s3cret-pw" not in output and "s3cret-pw" not in stored
    (manifest,) = (json.loads(p.read_text()) for p in runs.glob("*/manifest.json"))
    assert manifest["status"] == "failed" and manifest["trials_error"] == 2
    message = manifest["error_causes"][0]["message"]
    assert "no replica answers" in message
    for port in ports:  # each replica named with why it is out (httpx or aiohttp words it)
        why = message.split(f"http://127.0.0.1:{port}/v1: ", 1)[1].split(";")[0]
        assert "onnect" in why, message


@pytest.mark.server
def test_an_evaluation_file_spreads_over_replicas(tmp_path: Path) -> None:
    with servers(tmp_path / "servers", 0.02, 0.02) as replicas:
        spec = pool_spec(*(s.base_url for s in replicas))
        eval_file = tmp_path / "eval.yaml"
        eval_file.write_text(f"name: replicas\nmodels: {{target: \"{spec}\"}}\n"
                             "suites:\n  - suite: starter\n", encoding="utf-8")
        proc = knowgap_cli("eval", str(eval_file), "--runs-dir", str(tmp_path / "runs"))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        counts = [answered(s) for s in replicas]
        assert sum(counts) == 32 and min(counts) > 0, counts
