"""Continuous batching of the embedded model (issue 40): concurrent calls to the 0.5B pack decoded as parallel
sequences of one llama.cpp context give what single-stream calls give; each call joins and leaves on its own, with
its own max_tokens, stop strings, JSON grammar and log-probabilities; one failing call harms no other.

The model is the session's assembled 0.5B GGUF (``local:PATH``), with a 2,048-token window to keep the KV caches
small; every test here shares its one load."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest
from pydantic import BaseModel

from knowgap.judges.geval import read_scale
from knowgap.models import ChatRequest, parse_as
from knowgap.models.errors import ModelUnavailableError, PermanentModelError
from knowgap.models.local import LocalModel
from knowgap.models.local_sizing import DEFAULT_PARALLEL, choose_sizing, kv_bytes_per_token, parallel_setting
from knowgap.models.types import ChatResponse

N_CTX = 2048
COUNT = "Count from 1 to 100, separated by commas. Write only the numbers."


def model(gguf: Path, parallel: int) -> LocalModel:
    return LocalModel(f"local:{gguf}", str(gguf), n_ctx=N_CTX, parallel=parallel)


def together(m: LocalModel, requests: Sequence[ChatRequest]) -> list[ChatResponse]:
    async def go() -> list[ChatResponse]:
        return list(await asyncio.gather(*(m.chat(r) for r in requests)))

    return asyncio.run(go())


def one_by_one(m: LocalModel, requests: Sequence[ChatRequest]) -> list[ChatResponse]:
    return [asyncio.run(m.chat(r)) for r in requests]


class Capital(BaseModel):
    country: str
    capital: str


# sizing and settings (no model loaded) ------------------------------------------------------------------------
def test_parallel_setting_reads_the_environment_value() -> None:
    assert parallel_setting(None) is None and parallel_setting(" ") is None
    assert parallel_setting("off") == 1 and parallel_setting("1") == 1 and parallel_setting("8") == 8
    with pytest.raises(ModelUnavailableError, match="KNOWGAP_PARALLEL='many'.*number of parallel sequences"):
        parallel_setting("many")


def test_sizing_gives_each_sequence_the_whole_window_and_fewer_sequences_to_little_memory() -> None:
    qwen05 = {"general.architecture": "qwen2", "qwen2.block_count": "24", "qwen2.attention.head_count": "14",
              "qwen2.attention.head_count_kv": "2", "qwen2.embedding_length": "896"}
    per_token = kv_bytes_per_token(qwen05)
    assert per_token == 24 * 2 * (64 + 64) * 2  # f16 keys and values: 12 KiB a token
    roomy = choose_sizing(4096, setting=None, bytes_per_token=per_token, available=8 << 30)
    assert (roomy.parallel, roomy.kv_tokens) == (DEFAULT_PARALLEL, DEFAULT_PARALLEL * 4096)
    tight = choose_sizing(4096, setting=8, bytes_per_token=per_token, available=600 << 20)
    assert tight.parallel == 3 and tight.kv_tokens == 3 * 4096 and "cut to 3" in tight.why  # 150 MiB: 3 x 48
    starved = choose_sizing(4096, setting=4, bytes_per_token=per_token, available=1 << 20)
    assert starved.parallel == 1  # never no sequence at all
    assert choose_sizing(4096, setting=1, bytes_per_token=per_token, available=None).parallel == 1


def test_the_mode_is_part_of_the_identity_and_the_description(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KNOWGAP_PARALLEL", raising=False)
    batched = LocalModel("local:qwen2.5-0.5b", "qwen2.5-0.5b")
    monkeypatch.setenv("KNOWGAP_PARALLEL", "off")
    single = LocalModel("local:qwen2.5-0.5b", "qwen2.5-0.5b")
    assert batched.batched and not single.batched
    assert batched.default_concurrency == DEFAULT_PARALLEL and single.default_concurrency == 1
    assert single.identity() == "gguf:sha256:" + single.sha256()  # single-stream keeps the identity it had
    assert batched.identity() != single.identity() and batched.identity().startswith(single.identity())
    assert batched.describe()["decoding"].startswith("batched")
    assert single.describe()["decoding"] == "single-stream (KNOWGAP_PARALLEL=1)"
    monkeypatch.setenv("KNOWGAP_PARALLEL", "lots")
    with pytest.raises(ModelUnavailableError, match="KNOWGAP_PARALLEL"):
        LocalModel("local:qwen2.5-0.5b", "qwen2.5-0.5b")


# the batch on the real model -----------------------------------------------------------------------------------
@pytest.mark.local_model
@pytest.mark.slow
def test_concurrent_greedy_calls_give_the_single_stream_answers(small_gguf: Path) -> None:
    requests = [ChatRequest.simple(p, max_tokens=12, seed=3)
                for p in ("Say the number one.", "请说出数字二。", "Name a colour.", "What is 2 + 2?")]
    batched = together(model(small_gguf, 4), requests)
    single = one_by_one(model(small_gguf, 1), requests)
    assert [r.text for r in batched] == [r.text for r in single]
    assert [r.usage for r in batched] == [r.usage for r in single]
    assert [r.finish_reason for r in batched] == [r.finish_reason for r in single]
    assert all(r.text.strip() for r in batched)


@pytest.mark.local_model
@pytest.mark.slow
def test_a_call_that_ends_early_frees_its_slot_for_the_next(small_gguf: Path) -> None:
    """Two slots: a short call leaves after two tokens and a third call takes its place and finishes while the
    long call, which arrived first, is still decoding."""
    m = model(small_gguf, 2)
    long_call = ChatRequest.simple(COUNT, max_tokens=60, seed=0)
    short = ChatRequest.simple("Say OK.", max_tokens=2, seed=0)
    third = ChatRequest.simple("What is 2 + 2? Answer with a number.", max_tokens=6, seed=0)

    async def go() -> list[str]:
        finished: list[str] = []

        async def ask(name: str, request: ChatRequest) -> ChatResponse:
            response = await m.chat(request)
            finished.append(name)
            return response

        results = await asyncio.gather(ask("long", long_call), ask("short", short), ask("third", third))
        assert results[0].usage.completion_tokens == 60 and results[0].finish_reason == "length"
        return finished

    assert asyncio.run(go()) == ["short", "third", "long"]
    decoder = m._decoder
    assert decoder is not None and decoder.parallel == 2


@pytest.mark.local_model
@pytest.mark.slow
def test_each_sequence_keeps_its_own_max_tokens_and_stop_strings(small_gguf: Path) -> None:
    lengths = [1, 5, 9, 17]
    requests = [ChatRequest.simple(COUNT, max_tokens=n, seed=0) for n in lengths]
    requests += [ChatRequest.simple(COUNT, max_tokens=40, seed=0, stop=stop) for stop in (["7"], ["12", "xyz"])]
    responses = together(model(small_gguf, 4), requests)
    for n, r in zip(lengths, responses, strict=False):
        assert r.usage.completion_tokens == n and r.finish_reason == "length", (n, r)
    for stop, r in zip(("7", "12"), responses[len(lengths):], strict=True):
        assert r.finish_reason == "stop" and stop not in r.text and r.text.rstrip().endswith(","), r.text
    assert "6" in responses[-2].text and "11" in responses[-1].text
    single = one_by_one(model(small_gguf, 1), requests)
    assert [r.text for r in responses] == [r.text for r in single]


@pytest.mark.local_model
@pytest.mark.slow
def test_json_mode_and_logprobs_in_a_batch(small_gguf: Path) -> None:
    """A JSON-schema call keeps its grammar and a rating call its log-probabilities beside other calls; the
    rating's probabilities are the single-stream ones up to floating-point detail."""
    rating = ChatRequest.simple("How good is the sentence 'the cat sat on the mat', from 1 to 5? Reply with one digit "
                                "and nothing else.", max_tokens=4, top_logprobs=5, seed=0)
    capital = ChatRequest.simple("What is the capital of France? Reply as JSON with fields country and capital.",
                                 max_tokens=48, json_schema=Capital.model_json_schema(), seed=0)
    other = ChatRequest.simple(COUNT, max_tokens=20, seed=0)
    rated, answered, _ = together(model(small_gguf, 4), [rating, capital, other])
    parsed = parse_as(answered.text, Capital)
    assert isinstance(parsed, Capital) and "paris" in parsed.capital.lower(), answered.text
    assert rated.logprobs and len(rated.logprobs) == rated.usage.completion_tokens
    assert "".join(t.token for t in rated.logprobs).strip() == rated.text.strip()
    first = rated.logprobs[0]
    assert len(first.top) == 5 and first.token == first.top[0].token  # greedy: the top token was taken
    assert [t.logprob for t in first.top] == sorted((t.logprob for t in first.top), reverse=True)
    score = read_scale(rated)
    assert score is not None and score.from_logprobs
    single = asyncio.run(model(small_gguf, 1).chat(rating))
    assert single.text == rated.text and single.logprobs is not None
    assert first.logprob == pytest.approx(single.logprobs[0].logprob, abs=0.05)
    reference = read_scale(single)
    assert reference is not None and score.expected == pytest.approx(reference.expected, abs=0.05)


@pytest.mark.local_model
@pytest.mark.slow
def test_a_failing_call_harms_no_other(small_gguf: Path) -> None:
    too_long = ChatRequest.simple("word " * (N_CTX + 100), max_tokens=4)
    good = [ChatRequest.simple(p, max_tokens=8, seed=1) for p in ("Say the number one.", "Name a colour.")]
    m = model(small_gguf, 4)

    async def go() -> list[ChatResponse | BaseException]:
        return list(await asyncio.gather(*(m.chat(r) for r in [good[0], too_long, good[1]]), return_exceptions=True))

    first, error, second = asyncio.run(go())
    assert isinstance(error, PermanentModelError) and "exceed context window of 2048" in str(error)
    assert str(error).startswith(f"local:{small_gguf}: ")
    assert isinstance(first, ChatResponse) and isinstance(second, ChatResponse)
    assert [first.text, second.text] == [r.text for r in one_by_one(model(small_gguf, 1), good)]


@pytest.mark.local_model
@pytest.mark.slow
def test_a_cancelled_call_leaves_the_batch(small_gguf: Path) -> None:
    m = model(small_gguf, 2)

    async def go() -> tuple[bool, ChatResponse]:
        first = asyncio.create_task(m.chat(ChatRequest.simple(COUNT, max_tokens=300, seed=0)))
        second = asyncio.create_task(m.chat(ChatRequest.simple(COUNT + " ", max_tokens=300, seed=0)))
        while m._decoder is None or m._decoder.steps < 3:
            await asyncio.sleep(0.02)
        first.cancel()
        short = await m.chat(ChatRequest.simple("Say OK.", max_tokens=3, seed=0))
        still_running = not second.done()
        second.cancel()
        await asyncio.gather(first, second, return_exceptions=True)
        return still_running, short

    still_running, short = asyncio.run(go())
    assert still_running and short.text.strip()


@pytest.mark.local_model
@pytest.mark.slow
def test_calls_sharing_a_prompt_start_evaluate_it_once(small_gguf: Path) -> None:
    guideline = "Rules for the grader. " + " ".join(f"Rule {i}: check the answer carefully." for i in range(30))
    questions = ["Grade: 2 + 2 = 4.", "Grade: the sky is green.", "Grade: water boils at 100 C at sea level."]
    requests = [ChatRequest.simple(q, system=guideline, max_tokens=4, seed=0) for q in questions]
    m = model(small_gguf, 4)
    m.prepare()
    decoder = m._decoder
    assert decoder is not None
    evaluated, shared = decoder.prompt_tokens_evaluated, decoder.prompt_tokens_shared  # earlier tests' calls
    responses = together(m, requests)
    prompts = sum(r.usage.prompt_tokens for r in responses)
    guideline_tokens = len(decoder.llm.tokenize(guideline.encode()))
    assert decoder.prompt_tokens_shared - shared >= 2 * guideline_tokens  # the 2nd and 3rd copied the 1st's cells
    assert decoder.prompt_tokens_evaluated - evaluated <= prompts - 2 * guideline_tokens
    evaluated = decoder.prompt_tokens_evaluated
    again = asyncio.run(m.chat(ChatRequest.simple("Grade: 3 > 2.", system=guideline, max_tokens=4, seed=0)))
    assert decoder.prompt_tokens_evaluated - evaluated < again.usage.prompt_tokens - guideline_tokens
    assert all(r.text.strip() for r in [*responses, again])

    # with sharing off (the benchmark's baseline) every prompt is evaluated whole
    decoder.forget()
    decoder.share_prefixes = False
    try:
        evaluated, shared = decoder.prompt_tokens_evaluated, decoder.prompt_tokens_shared
        whole = together(m, requests)
        assert decoder.prompt_tokens_shared == shared
        assert decoder.prompt_tokens_evaluated - evaluated == sum(r.usage.prompt_tokens for r in whole)
        assert all(r.text.strip() for r in whole)
    finally:
        decoder.share_prefixes = True
