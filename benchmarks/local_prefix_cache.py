"""Prompt-prefix state cache of the local provider: a suite's call pattern with and without it.

    .venv/bin/python benchmarks/local_prefix_cache.py [--pack qwen2.5-0.5b] [--cases 6] [--max-tokens 48]
                                                      [--json OUT]

Suites alternate calls on one model: a short target prompt, then a judge prompt that repeats a long shared
guideline before the case (clarify's rubric, partial's reasoning rubric, abstain's long context). llama-cpp-
python reuses its KV cache only against the previous prompt, so every judge call evaluates the guideline again.
``knowgap.models.local.prefix_cache`` keeps the state after each call and restores the longest common prefix.

Both sides load the same GGUF file into two ``Llama`` objects (one with the cache, one without) and run the
identical call sequence on the same thread, alternating cases (off, on, off, on, ...) so warm-up and drift hit
both. Reported: seconds per (target + judge) pair per side, the ratio on / off (target < 0.8 for a guideline of
~900 tokens), and whether both sides produced the same text.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from _shared import print_table, write_json

from knowgap.models.local import _import_llama, prefix_cache
from knowgap.models.packs import ensure_pack

TARGET_RATIO = 0.8
GUIDELINE = "\n".join(
    f"{i}. 评分细则第{i}条：阅读回答，判断它是否指出了问题中缺失的关键事实，是否提出了具体的澄清问题，"
    f"是否使用了条件性表述，是否避免了绝对化的断言。Rule {i}: score each dimension from 1 to 5 and explain briefly."
    for i in range(1, 13))
CASES = [
    "我在单位做了一个月，单位要辞退我，应该要多少赔偿？",
    "房东不退押金怎么办？",
    "My employer has not paid my overtime. Can I sue?",
    "朋友借钱不还，没有借条，能起诉吗？",
    "The shop refuses to refund a faulty phone after 10 days. What are my rights?",
    "离婚时房子怎么分？",
    "同事把我的电动车撞坏了，谁赔？",
    "Can my landlord enter the flat without notice?",
]


def pair(llm: Any, case: str, max_tokens: int) -> tuple[float, list[str]]:
    start = time.perf_counter()
    texts = []
    answer = llm.create_chat_completion(messages=[{"role": "user", "content": case}], temperature=0.0,
                                        max_tokens=max_tokens, seed=0)["choices"][0]["message"]["content"]
    texts.append(answer)
    judge = [{"role": "system", "content": "你是评分员。\n" + GUIDELINE},
             {"role": "user", "content": f"问题：{case}\n回答：{answer}\n请输出JSON评分。"}]
    texts.append(llm.create_chat_completion(messages=judge, temperature=0.0, max_tokens=max_tokens,
                                            seed=0)["choices"][0]["message"]["content"])
    return time.perf_counter() - start, texts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pack", default="qwen2.5-0.5b")
    ap.add_argument("--cases", type=int, default=6)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--json")
    args = ap.parse_args()
    path = ensure_pack(args.pack)
    llama = _import_llama()
    off = llama(model_path=str(path), n_ctx=4096, verbose=False)
    on = llama(model_path=str(path), n_ctx=4096, verbose=False)
    on.set_cache(prefix_cache(1024))
    prompt_tokens = len(off.tokenize(GUIDELINE.encode()))
    times: dict[str, list[float]] = {"off": [], "on": []}
    same = 0
    cases = (CASES * (args.cases // len(CASES) + 1))[: args.cases]
    for case in cases:
        t_off, text_off = pair(off, case, args.max_tokens)
        t_on, text_on = pair(on, case, args.max_tokens)
        times["off"].append(t_off)
        times["on"].append(t_on)
        same += text_off == text_on
    # the first pair fills the cache: report it apart from the steady state
    steady = {k: sum(v[1:]) / max(1, len(v) - 1) for k, v in times.items()}
    ratio = steady["on"] / steady["off"]
    rows = [["off (llama-cpp-python default)", f"{times['off'][0]:.2f}", f"{steady['off']:.2f}", ""],
            ["on (knowgap prefix cache)", f"{times['on'][0]:.2f}", f"{steady['on']:.2f}",
             f"{ratio:.2f} (target < {TARGET_RATIO})"]]
    print(f"{args.pack}: guideline {prompt_tokens} tokens, {len(cases)} target+judge pairs per side")
    print_table(["side", "first pair s", "later pairs s (mean)", "on / off"], rows)
    print(f"identical texts: {same}/{len(cases)} pairs")
    write_json(args.json, {"pack": args.pack, "guideline_tokens": prompt_tokens, "cases": len(cases),
                           "seconds": times, "steady_mean": steady, "ratio": ratio, "identical": same,
                           "target_ratio": TARGET_RATIO, "met": ratio < TARGET_RATIO})


if __name__ == "__main__":
    main()
