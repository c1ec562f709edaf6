"""The system behind the metric-identity runs (``python:tests/stats/identity_system.py:reply``): one function that
plays every role of every built-in suite (target, judges, generator, simulated user) with replies of the right
shape but mixed quality, drawn from a generator seeded by the request (its messages and seed), so repeats of a
case differ where the engine gives them different seeds and the metrics have spread to put intervals on.

It is not a model of anything: it exists so the stored runs under ``tests/fixtures/metric_identity/`` hold
every kind of outcome a suite counts (right, wrong, abstained, parse failures, leaks, requests for evidence,
judge verdicts of every class), made by the real engine. ``tests/stats/metric_identity.py make`` calls it."""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

from knowgap.models.types import ChatRequest, ChatResponse, ToolCall, Usage

ABSTAIN = {"en": ["I don't know: the context does not say.", "I cannot answer from the given information.",
                  "There is not enough information to answer that."],
           "zh": ["根据所给信息无法回答。", "我不知道，上下文没有提到。"]}
JUNK = ["Sure! Here is my answer.", "{\"unfinished\": ", "42", "As an AI model I think so."]


def _rng(request: ChatRequest) -> random.Random:
    text = "\x00".join(f"{m.role}:{m.content}" for m in request.messages) + f"\x00{request.seed}"
    return random.Random(hashlib.sha256(text.encode()).digest())


def _zh(text: str) -> bool:
    return sum("\u4e00" <= c <= "\u9fff" for c in text) > len(text) // 10


def _sentences(text: str) -> list[str]:
    parts = [p.strip() for p in re.split(r"(?<=[.!?。！？])\s*|\n+", text) if len(p.strip()) > 3]
    return parts or [text.strip()[:80]]


def _fragment(rng: random.Random, text: str) -> str:
    return rng.choice(_sentences(text))


def _after(text: str, marker: str) -> str:
    return text.split(marker, 1)[1] if marker in text else text


def _starter(rng: random.Random, user: str) -> str:
    context = _after(user, "Context:").split("Question:", 1)[0]
    lang = "zh" if _zh(user) else "en"
    roll = rng.random()
    if roll < 0.35:
        return rng.choice(ABSTAIN[lang])
    if roll < 0.85:
        return _fragment(rng, context)
    return rng.choice(JUNK)


def _abstain_loo(rng: random.Random, user: str) -> str:
    facts = re.findall(r"Fact (\d+): (.*?)(?=\nFact \d+:|\Z)", user, flags=re.S)
    roll = rng.random()
    if roll < 0.35 or not facts:
        return json.dumps({"response": rng.choice(ABSTAIN["en"]), "citation": "no citation"})
    if roll < 0.8:
        number, fact = rng.choice(facts)
        answer = _after(fact, "A:").strip()[:200]
        return json.dumps({"response": answer, "citation": int(number) if rng.random() < 0.8 else 99})
    if roll < 0.93:
        return json.dumps({"response": "The fee is 27 dollars and it applies to everyone.", "citation": 0})
    return rng.choice(JUNK)


def _free_answer(rng: random.Random, user: str) -> str:
    lang = "zh" if _zh(user) else "en"
    roll = rng.random()
    if roll < 0.4:
        return rng.choice(ABSTAIN[lang])
    passage = _after(user, "Passage:") if "Passage:" in user else _after(user, "段落：")
    if roll < 0.8 and passage is not user:
        return _fragment(rng, passage)
    return "It is 1912, in Paris." if lang == "en" else "是1912年，在巴黎。"


def _clarify_target(rng: random.Random, user: str) -> str:
    zh = _zh(user)
    roll = rng.random()
    if roll < 0.4:
        return ("请问：1. 您是否签订了书面劳动合同？2. 对方给出了什么理由？3. 事情发生在什么时间？" if zh else
                "Could you tell me when this happened, whether you signed a written contract, and what reason "
                "they gave?")
    if roll < 0.7:
        return ("如果您已签订书面合同且对方无正当理由，您可以主张赔偿；否则需要看具体证据。" if zh else
                "If you signed a written contract and they gave no lawful reason, you can claim compensation; "
                "otherwise it depends on the evidence.")
    if roll < 0.9:
        return "可以，您一定能拿到双倍赔偿。" if zh else "Yes, you will certainly get double compensation."
    return "这个问题比较复杂，建议咨询律师。" if zh else "This is complicated; please consult a lawyer."


def _partial(rng: random.Random, request: ChatRequest, system: str, user: str) -> ChatResponse:
    turns = sum(1 for m in request.messages if m.role == "assistant")
    budget = "request_evidence" in system or "request_evidence" in user
    paths = re.findall(r'"([a-z_]+)":', user)
    example = re.search(r'"path": "([^"]+)"', user)
    if budget and turns < 2 and rng.random() < 0.6:
        path = (example.group(1) if example and rng.random() < 0.5 else rng.choice(paths or ["records"]))
        if request.tools:
            return ChatResponse(text="", tool_calls=[ToolCall(id=f"call-{turns}", name="request_evidence",
                                                              arguments={"path": path})])
        return ChatResponse(text=json.dumps({"action": "request_evidence", "path": path}))
    if rng.random() < 0.06:
        return ChatResponse(text=rng.choice(JUNK))
    options = re.search(r'"answer": (?:one of|以下之一) ((?:"[^"]+"(?:, )?)+)', user)
    reply: dict[str, Any] = {"action": "answer", "confidence": rng.choice([0.3, 0.5, 0.7, 0.9, 1.0]),
                             "sufficient": rng.random() < 0.5,
                             "missing": rng.sample(paths, min(len(paths), rng.randint(0, 2))),
                             "evidence_used": rng.sample(paths, min(len(paths), rng.randint(0, 3))),
                             "reasoning": _fragment(rng, user)[:160]}
    if options:
        reply["answer"] = rng.choice(re.findall(r'"([^"]+)"', options.group(1)))
    tokens = Usage(prompt_tokens=rng.randint(300, 1500), completion_tokens=rng.randint(20, 200))
    return ChatResponse(text=json.dumps(reply, ensure_ascii=False), usage=tokens)


def _extract(rng: random.Random, user: str) -> str:
    review = _after(user, "<<<").split(">>>", 1)[0]
    if rng.random() < 0.07:
        return rng.choice(JUNK)
    return json.dumps({"summary": _fragment(rng, review)[:200],
                       "overall_sentiment": rng.choice(["positive", "negative", "neutral"]),
                       "contains_conflicting_signals": rng.random() < 0.4}, ensure_ascii=False)


def _claims(rng: random.Random, user: str) -> str:
    if rng.random() < 0.05:
        return rng.choice(JUNK)
    summary = _after(user, "SUMMARY:")
    return json.dumps({"claims": _sentences(summary)[:3]}, ensure_ascii=False)


def _verdicts(rng: random.Random, user: str) -> str:
    claims = re.findall(r"^(\d+)\. ", _after(user, "CLAIMS:"), flags=re.M)
    return json.dumps({"verdicts": [{"claim": int(c), "verdict": "supported" if rng.random() < 0.7 else
                                     "not_supported"} for c in claims]})


def _judge_choice(rng: random.Random, text: str) -> str | None:
    """A judge whose spec asks for one of a few outcomes, as JSON or as the bare word."""
    for outcomes in (("dodges", "addresses"), ("grounded", "ungrounded"), ("tier_1", "tier_2", "tier_3")):
        if all(f'"{o}"' in text for o in outcomes):
            return json.dumps({"outcome": rng.choice(outcomes), "reason": "judged"})
    if "REFERENCE CONCLUSION" in text:
        return json.dumps({"verdict": rng.choice(["correct", "partially_correct", "incorrect"]), "reason": "x"})
    return None


def reply(request: ChatRequest) -> ChatResponse | str:
    rng = _rng(request)
    system = request.messages[0].content if request.messages[0].role == "system" else ""
    users = [m.content for m in request.messages if m.role == "user"]
    user, last = users[0] if users else "", users[-1] if users else ""
    everything = system + "\n" + last
    judged = _judge_choice(rng, everything)
    if judged is not None:
        return judged
    if "RATER GUIDELINE" in last or last.startswith("You grade") or "from 1 (poor) to 5 (excellent)" in last:
        return str(rng.choice([1, 2, 3, 3, 4, 4, 5, 5]))
    if system.startswith("Break the SUMMARY"):
        return _claims(rng, user)
    if system.startswith("You check claims"):
        return _verdicts(rng, user)
    if "customer reviews" in system or "overall_sentiment" in system:
        return _extract(rng, user)
    if "evidence" in system and ("role:" in system or "角色" in system):
        return _partial(rng, request, system, user)
    if '"citation"' in system:
        return _abstain_loo(rng, user)
    if "扮演" in system or "You are playing" in system:
        return "我签了两年合同，还在试用期。" if "扮演" in system else "I signed a two-year contract last spring."
    if user.startswith("Context:") and "Question:" in user:
        return _starter(rng, user)
    if any(w in system for w in ("法律", "legal", "law", "助手", "assistant")) and "Passage" not in user:
        return _clarify_target(rng, user)
    return _free_answer(rng, user)


reply.concurrency = 4  # type: ignore[attr-defined]
