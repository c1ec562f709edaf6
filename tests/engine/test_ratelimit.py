"""Rate limits and the pooled 429 pause, against a real OpenAI-compatible server process that logs when each request
arrives (tests/fakes/latency_server.py). Timing assertions are lower bounds and counts per window with slack,
never exact durations."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from knowgap.engine.gateway import ModelClient, ModelGateway, RetryPolicy
from knowgap.engine.ratelimit import RateLimits, TokenBucket, estimate_tokens
from knowgap.engine.records import CallRecord, RunConfig
from knowgap.engine.store import TRIALS
from knowgap.models.types import ChatRequest
from tests.fakes.latency_server import latency_server
from tests.helpers import knowgap_cli


def _calls(spec: str, requests: list[ChatRequest], concurrency: int,
           rpm: int | None = None, tpm: int | None = None) -> tuple[list[CallRecord], ModelClient]:
    """Every request through one gateway at once (its concurrency limit queues them); no cache."""

    async def go() -> tuple[list[CallRecord], ModelClient]:
        gateway = ModelGateway(run_id="ratelimit-test", concurrency=concurrency, rpm=rpm, tpm=tpm,
                               retry=RetryPolicy(max_retries=8, base_s=0.05, cap_s=0.5, timeout_s=30))
        try:
            records = await asyncio.gather(*(gateway.call(spec, "target", r) for r in requests))
            return list(records), gateway.client(spec)
        finally:
            await gateway.aclose()

    return asyncio.run(go())


def _max_in_window(times: list[float], window: float, weights: list[float] | None = None) -> float:
    """The most (weighted) arrivals inside any window of ``window`` seconds starting at an arrival."""
    weights = weights or [1.0] * len(times)
    best = 0.0
    for i, start in enumerate(times):
        best = max(best, sum(w for t, w in zip(times[i:], weights[i:], strict=True) if t < start + window))
    return best


def test_estimate_counts_the_prompt_bytes_and_all_of_max_tokens() -> None:
    short = ChatRequest.simple("hi", max_tokens=10)
    long = ChatRequest.simple("word " * 400, max_tokens=10)
    chinese = ChatRequest.simple("公司开除我" * 40, max_tokens=10)  # 200 characters, 3 bytes each
    assert estimate_tokens(long) - estimate_tokens(short) == pytest.approx(2000 / 4, abs=2)
    assert estimate_tokens(chinese) >= 150 + 10
    assert estimate_tokens(ChatRequest.simple("hi", max_tokens=500)) - estimate_tokens(short) == 490


def test_a_bucket_lets_one_seconds_worth_through_then_spreads_the_rest() -> None:
    async def go() -> list[float]:
        bucket = TokenBucket(600)  # 10 a second, 10 at once
        loop = asyncio.get_running_loop()
        start = loop.time()
        stamps = []

        async def take() -> None:
            await bucket.take(1)
            stamps.append(loop.time() - start)

        await asyncio.gather(*(take() for _ in range(25)))
        return sorted(stamps)

    stamps = asyncio.run(go())
    assert sum(t < 0.05 for t in stamps) == 10, "the full bucket goes at once"
    assert stamps[-1] >= 1.5 * 0.95, "the other 15 wait for the refill at 10 a second"
    assert _max_in_window(stamps, 1.0) <= 10 + 10 + 1


def test_a_take_larger_than_the_bucket_waits_for_a_full_one_and_leaves_debt() -> None:
    async def go() -> tuple[float, float]:
        bucket = TokenBucket(60 * 100)  # 100 a second, 100 in the bucket
        loop = asyncio.get_running_loop()
        start = loop.time()
        await bucket.take(250)  # a full bucket is there: goes, leaves -150
        first = loop.time() - start
        await bucket.take(50)  # waits for the debt and 50 more: 2 s
        return first, loop.time() - start

    first, second = asyncio.run(go())
    assert first < 0.05
    assert second >= 2.0 * 0.95


def test_tokens_taken_are_corrected_to_what_the_server_reported() -> None:
    async def go() -> float:
        limits = RateLimits(tpm=60 * 1000)  # 1000 a second, 1000 in the bucket
        request = ChatRequest.simple("word " * 400, max_tokens=500)  # estimate ~601
        taken = await limits.before(request)
        assert taken == estimate_tokens(request)
        limits.after(taken, 100)  # the server counted 100: the rest comes back
        assert limits._tokens is not None
        return limits._tokens.level

    assert asyncio.run(go()) >= 1000 - 100 - 5


def test_old_run_configs_read_without_the_new_fields() -> None:
    old = {"suite": "starter", "models": {"target": "scripted:x.jsonl"}, "concurrency": 2}
    config = RunConfig.model_validate(old)
    assert (config.rpm, config.tpm) == (None, None)
    with pytest.raises(ValueError, match="rpm"):
        RunConfig.model_validate({**old, "rpm": 0})


@pytest.mark.server
def test_a_429_with_retry_after_pauses_every_call_of_the_model(tmp_path: Path) -> None:
    retry_after, concurrency = 1.0, 8
    log = tmp_path / "arrivals.jsonl"
    with latency_server("--latency-ms", "20", "--reject-first", "1", "--retry-after", str(retry_after),
                        log=log) as server:
        records, client = _calls(server.spec, [ChatRequest.simple(f"question {i}", max_tokens=4)
                                               for i in range(40)], concurrency)
        arrivals = server.arrivals()

    assert all(r.response is not None for r in records), [r.error for r in records if r.error]
    assert sum(r.attempts for r in records) == 41, "one retry: the refused call"
    assert client.pause.pauses == 1
    refused = next(a for a in arrivals if a["status"] == 429)
    # the first wave (sent together, before any answer) may land after the 429; every later request was sent
    # after the client read it, and must wait out the Retry-After, not only the refused call
    later = [a for a in arrivals if a["n"] > concurrency]
    assert len(later) == 41 - concurrency
    too_early = [round(a["t"] - refused["t"], 3) for a in later if a["t"] < refused["t"] + retry_after * 0.95]
    assert not too_early, f"sent during the pause (seconds after the 429): {too_early}"


@pytest.mark.server
def test_a_429_without_retry_after_also_pauses_the_pool(tmp_path: Path) -> None:
    log = tmp_path / "arrivals.jsonl"
    with latency_server("--latency-ms", "20", "--reject-first", "3", log=log) as server:
        records, client = _calls(server.spec, [ChatRequest.simple(f"question {i}", max_tokens=4)
                                               for i in range(20)], 4)
        arrivals = server.arrivals()
    assert all(r.response is not None for r in records)
    assert sum(a["status"] == 429 for a in arrivals) == 3
    assert client.pause.pauses >= 1
    assert len(arrivals) == 23


@pytest.mark.server
def test_tpm_holds_the_tokens_the_server_counts_per_window(tmp_path: Path) -> None:
    tpm, n = 60 * 1000, 20  # 1000 tokens a second, 1000 in the bucket
    request_words = 200  # the server counts a word a token, + 1 completion token
    log = tmp_path / "arrivals.jsonl"
    with latency_server("--latency-ms", "5", log=log) as server:
        records, _ = _calls(server.spec, [ChatRequest.simple(" ".join([f"w{i}"] * request_words), max_tokens=1)
                                          for i in range(n)], 8, tpm=tpm)
        arrivals = server.arrivals()
    assert all(r.response is not None for r in records)
    used = [float(a["tokens"] + 1) for a in arrivals]
    times = [float(a["t"]) for a in arrivals]
    rate = tpm / 60
    assert _max_in_window(times, 1.0, used) <= rate + rate + max(used), "a second's worth at once + a second's refill"
    # without the limit the 20 calls take ~0.05 s; with it the tokens beyond the first bucket wait for the refill
    # (each call's estimate, ~253 tokens, is corrected to the ~201 reported when its answer comes)
    assert times[-1] - times[0] >= (sum(used) - 2 * rate) / rate * 0.9


@pytest.mark.server
@pytest.mark.slow
def test_rpm_on_the_command_line_spreads_the_requests(tmp_path: Path, runs_root: Path) -> None:
    rpm = 600  # 10 a second, 10 at once
    log = tmp_path / "arrivals.jsonl"
    with latency_server("--latency-ms", "5", log=log) as server:
        out = knowgap_cli("run", "starter", "--model", server.spec, "--rpm", str(rpm), "--concurrency", "16",
                          "--runs-dir", str(runs_root), "-q")
        arrivals = server.arrivals()
    assert out.returncode in (0, 3), out.stderr  # the canned answer may score badly; every trial must have run
    run = next(runs_root.iterdir())
    manifest: dict[str, Any] = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["rpm"] == rpm
    trials = (run / TRIALS).read_text(encoding="utf-8").splitlines()
    assert len(trials) == len(arrivals) == 32
    times = [float(a["t"]) for a in arrivals]
    per_s = rpm / 60
    assert _max_in_window(times, 1.0) <= per_s + per_s + 1
    assert times[-1] - times[0] >= (len(times) - per_s) / per_s * 0.9


def test_an_eval_file_carries_rpm_and_tpm_into_each_run(tmp_path: Path) -> None:
    from knowgap.evaluation.eval_file import run_eval
    from tests.helpers import write_jsonl

    write_jsonl(tmp_path / "answers.jsonl", [{"response": "I don't know."}])
    (tmp_path / "eval.yaml").write_text('models: {target: "scripted:answers.jsonl"}\nrpm: 6000\ntpm: 900000\n'
                                        "suites:\n  - suite: starter\n    options: {sample: 2}\n", encoding="utf-8")
    result = run_eval(tmp_path / "eval.yaml", runs_root=tmp_path / "runs", progress=False)
    [(_, run)] = result.runs
    stored = json.loads((run.path / "manifest.json").read_text(encoding="utf-8"))["config"]
    assert (stored["rpm"], stored["tpm"]) == (6000, 900000)
