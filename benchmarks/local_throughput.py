"""Local-model throughput through knowgap vs calling llama-cpp-python directly, on the same prompts.

    .venv/bin/python benchmarks/local_throughput.py [--prompts 8] [--max-tokens 48] [--rounds 2] [--json OUT]

Both sides use the same Llama object (knowgap.models.local.load_llama caches one per process): "direct"
calls Llama.create_chat_completion; "knowgap" sends the same requests through the engine's ModelClient
(cache off) and the LocalModel provider. Rounds alternate direct / knowgap to cancel warm-up effects.
Target: knowgap >= 95% of the direct completion tokens per second.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from knowgap.engine.client import ModelClient, RetryPolicy
from knowgap.models.local import LocalModel, load_llama
from knowgap.models.packs import ensure_pack
from knowgap.models.types import ChatRequest

PROMPTS = [
    "Explain in two sentences what a refund policy is.",
    "用两句话解释什么是劳动合同。",
    "List three things a library card lets you do.",
    "简要说明押金在租期结束后如何退还。",
    "What should a customer do if a parcel arrives damaged?",
    "请说明公交老年卡的用途。",
    "Summarise why a warranty matters, briefly.",
    "什么是民间借贷？请简短回答。",
]


def direct(llm: object, requests: list[ChatRequest]) -> tuple[int, float]:
    tokens, start = 0, time.perf_counter()
    for r in requests:
        out = llm.create_chat_completion(  # type: ignore[attr-defined]
            messages=[m.model_dump() for m in r.messages], temperature=r.temperature,
            max_tokens=r.max_tokens, seed=r.seed)
        tokens += out["usage"]["completion_tokens"]
    return tokens, time.perf_counter() - start


def through_knowgap(client: ModelClient, requests: list[ChatRequest]) -> tuple[int, float]:
    async def go() -> int:
        total = 0
        for r in requests:
            record = await client.call("target", r, 0)
            assert record.response is not None, record.error
            total += record.response.usage.completion_tokens
        return total

    start = time.perf_counter()
    tokens = asyncio.run(go())
    return tokens, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    path = ensure_pack("qwen2.5-0.5b")
    llm, _ = load_llama(path)
    requests = [ChatRequest.simple(PROMPTS[i % len(PROMPTS)], max_tokens=args.max_tokens, seed=i)
                for i in range(args.prompts)]
    with tempfile.TemporaryDirectory():
        client = ModelClient(LocalModel("local:qwen2.5-0.5b", "qwen2.5-0.5b"), run_id="bench", cache=None,
                             use_cache=False, concurrency=1, retry=RetryPolicy())
        direct(llm, requests[:1])  # warm-up
        totals = {"direct": [0, 0.0], "knowgap": [0, 0.0]}
        for _ in range(args.rounds):
            for name in ("direct", "knowgap"):
                tokens, seconds = direct(llm, requests) if name == "direct" else through_knowgap(client, requests)
                totals[name][0] += tokens
                totals[name][1] += seconds
    rates = {name: t / s for name, (t, s) in totals.items()}
    ratio = rates["knowgap"] / rates["direct"]
    print(f"local throughput, 0.5B pack, {args.prompts} prompts x {args.rounds} rounds, max_tokens {args.max_tokens}")
    for name, (tokens, seconds) in totals.items():
        print(f"  {name:8s} {tokens:6d} tokens in {seconds:7.2f}s = {rates[name]:6.2f} tokens/s")
    print(f"  knowgap / direct = {ratio:.1%} (target >= 95%) -> {'OK' if ratio >= 0.95 else 'MISSED'}")
    if args.json:
        args.json.write_text(json.dumps({"rates": rates, "ratio": ratio, "totals": totals}, indent=2))


if __name__ == "__main__":
    main()
