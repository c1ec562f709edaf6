"""An offline faithfulness checker (no LLM): is each claim of a summary supported by its source?

Each claim (:func:`knowgap.text.claims.split_claims`) is aligned with the source unit (sentence, clause or
pair of sentences) whose multilingual-e5 embedding is closest. The claim's support is the mean of

- the embedding similarity, rescaled from [SIM_LOW, SIM_HIGH] to [0, 1], and
- its content-token recall: the share of its content words (jieba words for Chinese) found in the source;

then halved for each disagreement with the source: a number the source does not state, a name the source
does not mention, or a flipped polarity / negation against the aligned source unit. The summary's score
mixes the weakest claim with the mean claim (one invented fact makes a summary unfaithful).

Scores are 0..1, higher = more faithful; ``verdict`` is ``faithful`` at or above the threshold, else
``unfaithful``. An empty summary or a refusal has no claims: its verdict is ``empty`` / ``refusal`` and its
score is None (never a number that would be averaged in). The threshold comes from
``knowgap judge faithfulness-calibrate`` (see docs/extract.md for the measured numbers).
"""

from __future__ import annotations

import re
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from knowgap.judges.abstention import abstention_phrase
from knowgap.text.claims import has_negation, numbers, polarity, proper_names, split_claims
from knowgap.text.embed import Embedder, default_embedder
from knowgap.text.segment import content_tokens, sentences

SIM_LOW, SIM_HIGH = 0.80, 0.95
"""Cosine range of e5 that maps to support 0..1 (unrelated text sits near 0.8, a paraphrase above 0.92)."""
DEFAULT_THRESHOLD = 0.54
"""Faithful at or above: the threshold knowgap judge faithfulness-calibrate chose on SummEdits + AggreFact
(tuning half, --limit 60, seed 0); it also separates the shipped review calibration cases (docs/extract.md)."""
PENALTY = 0.5
VERSION = "faithfulness-offline-1"
"""Judge ``faithfulness``; change whenever the scoring or the threshold changes."""

Verdict = Literal["faithful", "unfaithful", "empty", "refusal"]


class ClaimCheck(BaseModel):
    claim: str
    evidence: str
    """The source unit the claim aligned with."""
    similarity: float
    token_recall: float
    issues: list[str] = Field(default_factory=list)
    """number / name / negation / polarity disagreements with the source."""
    score: float


class FaithfulnessResult(BaseModel):
    score: float | None
    verdict: Verdict
    claims: list[ClaimCheck] = Field(default_factory=list)


_META_WORDS = frozenset("""reviewer reviewers customer customers user users author writer diner diners guest guests
buyer buyers review overall 顾客 用户 评论 买家 客人 评论者 总体 整体""".split())
"""Words a summary uses about the review itself; the source need not contain them."""


def _stem(token: str) -> str:
    token = token.removesuffix("'s")
    if token.isascii() and len(token) > 4:
        for suffix in ("ing", "ed", "es", "s", "ly"):
            if token.endswith(suffix):
                return token[: -len(suffix)]
    return token


MAX_UNIT_WORDS = 60
_ZH_CHAR = re.compile(r"[\u4e00-\u9fff]")


def _clip(unit: str) -> str:
    words = unit.split()
    if len(words) > MAX_UNIT_WORDS:
        return " ".join(words[:MAX_UNIT_WORDS])
    return unit[:160] if _ZH_CHAR.search(unit) else unit


def _source_units(source: str) -> list[str]:
    """Sentences of the source and, for short sources (reviews), their clauses and adjacent sentence pairs; each
    clipped to about 60 words (embedding cost grows with length; a claim rarely spans more)."""
    sents = sentences(source) or [source]
    units = list(sents)
    if len(sents) <= 12:
        for sentence in sents:
            parts = split_claims(sentence)
            if len(parts) > 1:
                units += parts
        units += [f"{a} {b}" for a, b in zip(sents, sents[1:], strict=False)]
    return list(dict.fromkeys(_clip(u) for u in units if u.strip()))


def _recall(claim: str, source_tokens: set[str], source_norm: str) -> float:
    words = [w for w in content_tokens(claim) if not w.replace(".", "").isdigit() and w not in _META_WORDS]
    if not words:
        return 1.0
    found = 0.0
    for w in words:
        if _stem(w) in source_tokens or (_ZH_CHAR.search(w) and w in source_norm):
            found += 1
        elif _ZH_CHAR.search(w) and len(w) > 1 and sum(ch in source_norm for ch in w) / len(w) >= 0.5:
            found += 0.5  # a Chinese word re-segmented or paraphrased with one shared character
    return found / len(words)


_CLAUSE_CUT = re.compile(r"[，,；;。.!?！？、:：\n]+|\s+(?=(?:but|however|although|though|whereas|yet)\b)"
                         r"|(?=但是|不过|然而|可是)", re.I)


def _clauses(text: str) -> list[str]:
    return [c.strip() for c in _CLAUSE_CUT.split(text) if c and c.strip()]


def _clause_keys(clause: str) -> set[str]:
    """Content words, plus character bigrams of Chinese runs (robust to different segmentation)."""
    keys = {_stem(t) for t in content_tokens(clause)}
    for run in _ZH_RUN.findall(clause):
        keys |= {run[i:i + 2] for i in range(len(run) - 1)}
    return keys


_ZH_RUN = re.compile(r"[\u4e00-\u9fff]+")


def _effective_polarity(clause: str) -> int:
    """The lexicon polarity; a negated clause without evaluative words counts as negative ("the food was not")."""
    value = polarity(clause)
    return -1 if value == 0 and has_negation(clause) else value


def _contradictions(claim: str, source_clauses: list[tuple[str, set[str]]]) -> list[str]:
    """Polarity / negation disagreements between each clause of the claim and the source clause that shares
    the most words with it (clause level, so a negation elsewhere in a long sentence does not count)."""
    found: list[str] = []
    for clause in _clauses(claim):
        keys = _clause_keys(clause)
        if not keys or not source_clauses:
            continue
        best, overlap = max(((c, len(keys & k)) for c, k in source_clauses), key=lambda x: x[1])
        if overlap == 0:
            continue
        claim_pol, source_pol = _effective_polarity(clause), _effective_polarity(best)
        if claim_pol and source_pol:
            if claim_pol == source_pol:
                continue
            issue = "polarity"
        elif has_negation(clause) != has_negation(best):
            issue = "negation"
        else:
            continue
        if issue not in found:
            found.append(issue)
    return found


class OfflineFaithfulness:
    """``check(source, summary)`` -> :class:`FaithfulnessResult`; no model calls, only local embeddings."""

    def __init__(self, embedder: Embedder | None = None, threshold: float = DEFAULT_THRESHOLD,
                 min_weight: float = 0.5) -> None:
        self.embedder = embedder or default_embedder()
        self.threshold = threshold
        self.min_weight = min_weight

    def verdict(self, score: float) -> Verdict:
        return "faithful" if score >= self.threshold else "unfaithful"

    def check(self, source: str, summary: str) -> FaithfulnessResult:
        if not summary or not summary.strip():
            return FaithfulnessResult(score=None, verdict="empty")
        if abstention_phrase(summary) is not None and len(summary) < 200:
            return FaithfulnessResult(score=None, verdict="refusal")
        claims = split_claims(summary) or [summary.strip()]
        units = _source_units(source)
        vectors = self.embedder.embed(claims + units, "query")
        sims = np.asarray(vectors[: len(claims)] @ vectors[len(claims):].T)
        source_tokens = {_stem(t) for t in content_tokens(source)}
        source_norm = " ".join(content_tokens(source))
        source_numbers = numbers(source)
        source_names = {n.lower() for n in proper_names(source)}
        source_lower = source.lower()
        source_clauses = [(c, _clause_keys(c)) for c in _clauses(source)]
        checks = []
        for i, claim in enumerate(claims):
            j = int(np.argmax(sims[i]))
            sim, evidence = float(sims[i, j]), units[j]
            support = min(1.0, max(0.0, (sim - SIM_LOW) / (SIM_HIGH - SIM_LOW)))
            recall = _recall(claim, source_tokens, source_norm)
            issues = []
            if numbers(claim) - source_numbers:
                issues.append("number")
            if {n for n in proper_names(claim) if n not in source_names and n not in source_lower}:
                issues.append("name")
            issues += _contradictions(claim, source_clauses)
            score = (0.5 * support + 0.5 * recall) * PENALTY ** len(issues)
            checks.append(ClaimCheck(claim=claim, evidence=evidence, similarity=round(sim, 4),
                                     token_recall=round(recall, 4), issues=issues, score=round(score, 4)))
        values = [c.score for c in checks]
        total = self.min_weight * min(values) + (1 - self.min_weight) * (sum(values) / len(values))
        total = round(total, 4)
        return FaithfulnessResult(score=total, verdict=self.verdict(total), claims=checks)
