"""The response cache: a repeated run costs no model calls; --no-cache and `knowgap cache` behave."""

from __future__ import annotations

from pathlib import Path

import pytest

import knowgap
from knowgap.engine import cache as cache_module
from knowgap.engine.cache import ResponseCache, cache_key
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.paths import cache_path
from tests.fakes.models import Fixed
from tests.helpers import knowgap_cli, scripted


def scores(run: knowgap.RunResult, runs_root: Path) -> dict[str, dict[str, object]]:
    return {r.trial_id: r.scores for r in knowgap.iter_trials(run.run_id, runs_root)}


def test_second_identical_run_makes_no_provider_calls(tmp_path: Path, runs_root: Path) -> None:
    spec = scripted(tmp_path, "I don't know.", "20:00", "30", "45")
    first = knowgap.run("starter", models={"target": spec}, runs_root=runs_root)
    second = knowgap.run("starter", models={"target": spec}, runs_root=runs_root)
    assert first.provider_calls == 32
    assert second.provider_calls == 0
    usage = second.manifest.usage["target"][spec]
    assert usage.calls == usage.cached_calls == 32
    assert first.manifest.usage["target"][spec].cached_calls == 0
    assert scores(second, runs_root) == scores(first, runs_root)
    assert [m.model_dump() for m in second.metrics] == [m.model_dump() for m in first.metrics]
    records = knowgap.iter_trials(second.run_id, runs_root)
    assert all(r.calls[0].cached and r.calls[0].response is not None and r.calls[0].response.cached
               for r in records)
    assert knowgap.cache_info()["entries"] == 32


def test_cache_serves_the_first_runs_responses(runs_root: Path) -> None:
    """A hit returns what was stored, not what the (same) model would say now: the provider's answer changes
    between the runs while the model stays the same (same identity)."""
    first = knowgap.run("starter", models={"target": "mine:m"}, runs_root=runs_root,
                        providers={"mine:m": Fixed("I don't know.", spec="mine:m")})
    again = knowgap.run("starter", models={"target": "mine:m"}, runs_root=runs_root,
                        providers={"mine:m": Fixed("something else", spec="mine:m")})
    assert again.provider_calls == 0
    texts = {r.calls[0].response.text for r in knowgap.iter_trials(again.run_id, runs_root)
             if r.calls[0].response is not None}
    assert texts == {"I don't know."}
    assert scores(again, runs_root) == scores(first, runs_root)


def test_use_cache_false_calls_again(tmp_path: Path, runs_root: Path) -> None:
    spec = scripted(tmp_path, "I don't know.")
    knowgap.run("starter", models={"target": spec}, runs_root=runs_root)
    fresh = knowgap.run("starter", models={"target": spec}, runs_root=runs_root, use_cache=False)
    assert fresh.provider_calls == 32
    usage = fresh.manifest.usage["target"][spec]
    assert (usage.calls, usage.cached_calls) == (32, 0)
    assert not any(r.calls[0].cached for r in knowgap.iter_trials(fresh.run_id, runs_root))
    assert fresh.manifest.config.use_cache is False


@pytest.mark.slow  # four CLI subprocesses, about a second
def test_cli_cache_info_and_clear(tmp_path: Path, runs_root: Path, kg_home: Path) -> None:
    spec_a = scripted(tmp_path, "I don't know.")
    spec_b = scripted(tmp_path, "42")
    knowgap.run("starter", models={"target": spec_a}, runs_root=runs_root)
    knowgap.run("starter", models={"target": spec_b}, runs_root=runs_root)
    env = {"KNOWGAP_HOME": str(kg_home)}

    info = knowgap_cli("cache", "info", env=env)
    assert info.returncode == 0, info.stderr
    assert str(kg_home / "cache.sqlite") in info.stdout.replace("\n", "")
    assert "64 responses" in info.stdout

    cleared = knowgap_cli("cache", "clear", "--model", spec_b, env=env)
    assert cleared.returncode == 0, cleared.stderr
    assert "removed 32 cached responses" in cleared.stdout
    assert knowgap.cache_info()["entries"] == 32

    cleared = knowgap_cli("cache", "clear", env=env)
    assert "removed 32 cached responses" in cleared.stdout
    info = knowgap_cli("cache", "info", env=env)
    assert "0 responses" in info.stdout
    # an emptied cache means the next run calls the model again
    assert knowgap.run("starter", models={"target": spec_a}, runs_root=runs_root).provider_calls == 32


def test_cache_key_depends_on_identity_request_and_repeat() -> None:
    request = ChatRequest.simple("What time does it close?", system="Be brief.", seed=1)
    base = cache_key("scripted:a", request, 0)
    assert base == cache_key("scripted:a", ChatRequest.simple("What time does it close?", system="Be brief.",
                                                               seed=1), 0)
    assert cache_key("scripted:a", request, 1) != base
    assert cache_key("scripted:b", request, 0) != base
    assert cache_key("scripted:a", request.model_copy(update={"seed": 2}), 0) != base
    assert cache_key("scripted:a", request.model_copy(update={"temperature": 0.7}), 0) != base


def test_cache_get_by_run(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    try:
        cache.put("k", "scripted:a", "run-1", ChatResponse(text="hello"))
        assert cache.get("k") == ChatResponse(text="hello")
        assert cache.get("k", run_id="run-1") == ChatResponse(text="hello")
        assert cache.get("k", run_id="run-2") is None
        assert cache.get("other") is None
        assert cache.stats()["entries"] == 1
    finally:
        cache.close()


def test_repeats_get_their_own_cache_entries(tmp_path: Path, runs_root: Path) -> None:
    # in trial order each (case, prompt) runs repeat 0 then repeat 1: they get "A" then "B"
    spec = scripted(tmp_path, "A", "B")
    first = knowgap.run("starter", models={"target": spec}, runs_root=runs_root, repeats=2)
    assert first.manifest.trials_total == 64 and first.provider_calls == 64
    records = knowgap.iter_trials(first.run_id, runs_root)
    keys = {cache_key(spec, r.calls[0].request, r.repeat) for r in records}
    assert len(keys) == 64
    assert knowgap.cache_info()["entries"] == 64

    again = knowgap.run("starter", models={"target": spec}, runs_root=runs_root, repeats=2)
    assert again.provider_calls == 0
    for r in knowgap.iter_trials(again.run_id, runs_root):
        assert r.calls[0].response is not None
        assert r.calls[0].response.text == ("A" if r.repeat == 0 else "B"), r.trial_id


def test_cache_file_lives_in_knowgap_home(kg_home: Path, tmp_path: Path, runs_root: Path) -> None:
    knowgap.run("starter", models={"target": scripted(tmp_path, "x")}, runs_root=runs_root)
    assert cache_path() == kg_home / "cache.sqlite"
    assert (kg_home / "cache.sqlite").exists()


def test_fingerprints_and_stored_responses_stay_what_they_were() -> None:
    # the values written by knowgap before the dumps left unset fields out with exclude_if (not a serializer):
    # a change here turns every cache entry users have into a miss
    from knowgap.models.types import Message, TokenLogprob, ToolCall, ToolSpec

    plain = ChatRequest.simple("Wie spät ist es? 几点了?", system="Be brief.", seed=3, max_tokens=16)
    assert plain.fingerprint() == "bd7d4c78018b36a8676314bbfb76dfb100c7940dbad0048ffe25fd646501c6fe"
    tools = ChatRequest(messages=[
        Message(role="user", content="x"),
        Message(role="assistant", content="", tool_calls=[ToolCall(id="c1", name="f", arguments={"a": 1})]),
        Message(role="tool", content="42", tool_call_id="c1")],
        tools=[ToolSpec(name="f", description="d", parameters={"type": "object"})], tool_choice="auto", top_logprobs=2)
    assert tools.fingerprint() == "a632bfa2265e435cb5611abc4e7c7ef135b93aae0d572003f156f7d87637cd5c"
    assert ChatResponse(text="ok", finish_reason="stop").model_dump_json() == (
        '{"text":"ok","usage":{"prompt_tokens":0,"completion_tokens":0},"latency_s":0.0,"finish_reason":"stop",'
        '"model":"","cached":false}')
    assert ChatResponse(text="ok", tool_calls=[ToolCall(id="c1", name="f")],
                        logprobs=[TokenLogprob(token="ok", logprob=-0.1)]).model_dump_json() == (
        '{"text":"ok","tool_calls":[{"id":"c1","name":"f","arguments":{},"raw_arguments":null}],'
        '"logprobs":[{"token":"ok","logprob":-0.1,"top":[]}],"usage":{"prompt_tokens":0,"completion_tokens":0},'
        '"latency_s":0.0,"finish_reason":null,"model":"","cached":false}')



def _largest_log(tmp_path: Path, batches: int) -> int:
    """The largest the write-ahead log gets while ``batches`` x 10 responses of 3 KB are written, a commit a batch."""
    wal, largest = tmp_path / "c.sqlite-wal", 0
    cache = ResponseCache(tmp_path / "c.sqlite")
    try:
        for batch in range(batches):
            for i in range(10):
                cache.put(f"{batch}-{i}", "scripted:a", "run-1", ChatResponse(text=f"{batch}-{i}" + "x" * 3000))
            cache.flush()
            largest = max(largest, wal.stat().st_size)
    finally:
        cache.close()
    reopened = ResponseCache(tmp_path / "c.sqlite")
    try:
        assert reopened.stats()["entries"] == batches * 10
        assert reopened.get(f"{batches - 1}-9") == ChatResponse(text=f"{batches - 1}-9" + "x" * 3000)
    finally:
        reopened.close()
    return largest


def test_cache_checkpoints_its_log_every_checkpoint_pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The log is copied into the database when it passes CHECKPOINT_PAGES (10,000 pages), not at SQLite's 1,000
    (about 4 MiB): 7.5 MB of responses stay in the log; with the setting at 100 pages it never passes 1 MB."""
    assert _largest_log(tmp_path / "default", 200) > 6_000_000
    monkeypatch.setattr(cache_module, "CHECKPOINT_PAGES", 100)
    assert _largest_log(tmp_path / "small", 200) < 1_000_000
