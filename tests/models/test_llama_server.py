"""The OpenAI-compatible provider against a real llama.cpp server on 127.0.0.1 serving the 0.5B pack."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

import knowgap
from knowgap.models import ChatRequest, create_model, parse_as
from tests.helpers import llama_server as start_llama_server

pytestmark = [pytest.mark.server, pytest.mark.local_model, pytest.mark.slow]


class Verdict(BaseModel):
    answer: str
    confident: bool


@pytest.fixture(scope="module")
def llama_server(small_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server] (dev extras)")
    with start_llama_server(small_gguf, tmp_path_factory.mktemp("llama_server")) as url:
        yield url


def test_chat_through_a_real_server(llama_server: str) -> None:
    model = create_model(f"openai-compat:qwen-0.5b@{llama_server}")
    request = ChatRequest.simple("What is the capital of France? Answer with one word.", max_tokens=16, seed=2)

    async def go() -> tuple[str, int, int]:
        try:
            response = await model.chat(request)
        finally:
            await model.aclose()
        return response.text, response.usage.prompt_tokens, response.usage.completion_tokens

    text, prompt_tokens, completion_tokens = asyncio.run(go())
    assert "paris" in text.lower()
    assert prompt_tokens > 5 and 0 < completion_tokens <= 16


def test_json_schema_goes_through_json_object_mode(llama_server: str) -> None:
    model = create_model(f"openai-compat:qwen-0.5b@{llama_server}")
    request = ChatRequest.simple("Is Paris the capital of France? Reply as JSON with fields answer and confident.",
                                 max_tokens=48, json_schema=Verdict.model_json_schema())

    async def go() -> str:
        try:
            return (await model.chat(request)).text
        finally:
            await model.aclose()

    text = asyncio.run(go())
    assert isinstance(parse_as(text, Verdict), Verdict), text


def test_starter_suite_over_http_matches_in_process(llama_server: str, small_pack_home: Path,
                                                    runs_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same greedy model answers the same way over HTTP and in-process, single-stream on both sides: the
    server decodes one call at a time, and batched decoding may differ from it in floating-point detail (a
    different mode, named in the model's identity: docs/scale.md)."""
    monkeypatch.setenv("KNOWGAP_PARALLEL", "1")
    http = knowgap.run("starter", models={"target": f"openai-compat:qwen-0.5b@{llama_server}"},
                       options={"sample": 3, "prompts": ["grounded"]}, runs_root=runs_root, concurrency=2)
    local = knowgap.run("starter", models={"target": "local:qwen2.5-0.5b"},
                        options={"sample": 3, "prompts": ["grounded"]}, runs_root=runs_root)
    assert http.manifest.trials_ok == local.manifest.trials_ok == 3
    by_id_http = {r.trial_id: r for r in knowgap.iter_trials(http.run_id, runs_root)}
    by_id_local = {r.trial_id: r for r in knowgap.iter_trials(local.run_id, runs_root)}
    assert by_id_http.keys() == by_id_local.keys()
    for trial_id, record in by_id_http.items():
        assert record.calls[0].response is not None and by_id_local[trial_id].calls[0].response is not None
        assert record.calls[0].response.text == by_id_local[trial_id].calls[0].response.text
        assert record.scores == by_id_local[trial_id].scores
