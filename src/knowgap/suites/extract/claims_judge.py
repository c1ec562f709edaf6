"""Ragas-style faithfulness by a judge model: split the summary into atomic claims, verify each claim against
the review, score = supported / total.

Every way this can go wrong is its own outcome, never NaN and never a silent default:

- ``empty``: the summary is empty; ``refusal``: the summary is a refusal (no claims to check);
- ``no_claims``: the judge found no claim in a non-empty summary;
- ``judge_parse_failure``: the judge's decomposition or verdicts could not be read (or did not match the
  claims one to one);
- ``scored``: ``score`` = supported / total claims.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knowgap.judges.abstention import abstention_phrase
from knowgap.models.structured import ParseFailure, parse_as
from knowgap.models.types import ChatRequest, ChatResponse

PROMPT_VERSION = "extract-claims-v1"
Outcome = Literal["scored", "empty", "refusal", "no_claims", "judge_parse_failure"]

DECOMPOSE_SYSTEM = (
    "Break the SUMMARY into short, standalone factual claims (one fact each, no pronouns that need the other "
    'claims). Write the claims in the language of the summary. Reply with JSON only: {"claims": ["...", "..."]}'
)
VERIFY_SYSTEM = (
    "You check claims against a customer REVIEW. For each numbered claim decide whether the review supports "
    "it: \"supported\" if the review states it or it follows directly from the review, \"not_supported\" if the "
    "review contradicts it or does not say it. Reply with JSON only: "
    '{"verdicts": [{"claim": 1, "verdict": "supported"}, ...]} with one entry per claim, in order.'
)

DECOMPOSE_SCHEMA = {"type": "object", "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
                    "required": ["claims"]}
VERIFY_SCHEMA = {
    "type": "object",
    "properties": {"verdicts": {"type": "array", "items": {
        "type": "object",
        "properties": {"claim": {"type": "integer"}, "verdict": {"type": "string",
                                                                 "enum": ["supported", "not_supported"]}},
        "required": ["claim", "verdict"]}}},
    "required": ["verdicts"],
}


class _Claims(BaseModel):
    model_config = ConfigDict(extra="ignore")
    claims: list[str]


class _Verdict(BaseModel):
    claim: int
    verdict: Literal["supported", "not_supported"]


class _Verdicts(BaseModel):
    model_config = ConfigDict(extra="ignore")
    verdicts: list[_Verdict]


class ClaimVerdict(BaseModel):
    claim: str
    supported: bool


class JudgeFaithfulness(BaseModel):
    outcome: Outcome
    score: float | None = None
    claims: list[ClaimVerdict] = Field(default_factory=list)
    reason: str | None = None
    """Why the outcome is not ``scored`` (parse failure reason...)."""


Generate = Callable[[ChatRequest], Awaitable[ChatResponse]]


async def judge_faithfulness(review: str, summary: str, generate: Generate, *, max_tokens: int = 384,
                             seed: int | None = 0, refusals: bool = True) -> JudgeFaithfulness:
    """Decompose ``summary`` into claims and verify each against ``review`` with two judge calls. A short summary
    holding an abstention phrase is a ``refusal`` without a call (the rule before the model); ``refusals=False``
    asks the model of it all the same (the validity card's model-only figure; runs never do)."""
    if not summary.strip():
        return JudgeFaithfulness(outcome="empty")
    if refusals and abstention_phrase(summary) is not None and len(summary) < 200:
        return JudgeFaithfulness(outcome="refusal", reason=abstention_phrase(summary))
    decompose = ChatRequest.simple(f"SUMMARY:\n{summary}", system=DECOMPOSE_SYSTEM, max_tokens=max_tokens,
                                   seed=seed, json_schema=DECOMPOSE_SCHEMA)
    parsed = parse_as((await generate(decompose)).text, _Claims)
    if isinstance(parsed, ParseFailure):
        return JudgeFaithfulness(outcome="judge_parse_failure", reason=f"claims: {parsed.reason}")
    claims = [c.strip() for c in parsed.claims if c.strip()]
    if not claims:
        return JudgeFaithfulness(outcome="no_claims")
    numbered = "\n".join(f"{i}. {c}" for i, c in enumerate(claims, start=1))
    verify = ChatRequest.simple(f"REVIEW:\n{review}\n\nCLAIMS:\n{numbered}", system=VERIFY_SYSTEM,
                                max_tokens=max_tokens, seed=seed, json_schema=VERIFY_SCHEMA)
    verdicts = parse_as((await generate(verify)).text, _Verdicts)
    if isinstance(verdicts, ParseFailure):
        return JudgeFaithfulness(outcome="judge_parse_failure", reason=f"verdicts: {verdicts.reason}")
    if len(verdicts.verdicts) != len(claims):
        return JudgeFaithfulness(outcome="judge_parse_failure",
                                 reason=f"verdicts: {len(verdicts.verdicts)} verdicts for {len(claims)} claims")
    checked = [ClaimVerdict(claim=c, supported=v.verdict == "supported")
               for c, v in zip(claims, verdicts.verdicts, strict=True)]
    supported = sum(c.supported for c in checked)
    return JudgeFaithfulness(outcome="scored", score=supported / len(checked), claims=checked)
