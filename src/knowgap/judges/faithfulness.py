"""An offline faithfulness checker (no LLM): is a summary supported by its source?

Each claim of the summary (:func:`knowgap.text.claims.split_claims`) is aligned with the source unit it
shares the most (IDF-weighted) content words with, and checked: content-token recall, word-order overlap, and
the number / name / negation / polarity disagreements with the source (see
:mod:`knowgap.judges.faithfulness_features`). A learned combiner (a logistic regression shipped as
``judges/data/faithfulness_combiner.json``, see :mod:`knowgap.judges.faithfulness_model`) weighs the share of
weakly supported claims and the summary's novel words in copied text into ``score``: the estimated
probability that the summary is faithful, 0..1. The shipped combiner needs no embeddings; one that names an
e5 feature gets it computed.

``verdict`` is ``faithful`` at or above the threshold (0.5), else ``unfaithful``. An empty summary or a
refusal has no claims: its verdict is ``empty`` / ``refusal`` and its score is None (never a number that
would be averaged in). Nor is a summary written in another language than its source (an English summary of a
Chinese review): the checker compares words, so it would find none of them supported and call every such summary
unfaithful, whatever it says (it scored them all 0.249 before this outcome existed). Its verdict is
``other_language`` and its score None; both languages must be told
(:func:`~knowgap.text.languages.different_languages`), a short or mixed text is checked as before.

Each source is analysed and embedded once per checker (kept by the sha256 of its text), so scoring several
summaries of one source costs little more than scoring one. ``version`` names the combiner and the revision of
these rules (:data:`RULES`); its measured validity card is in ``judges/cards/`` (docs/judges.md).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from knowgap.judges.abstention import abstention_phrase
from knowgap.judges.faithfulness_features import (
    EMBEDDING_FEATURES,
    ClaimEvidence,
    SourceCache,
    claim_evidence,
    pair_features,
    summary_similarity,
)
from knowgap.judges.faithfulness_model import Combiner, load
from knowgap.text.claims import split_claims
from knowgap.text.embed import Embedder, default_embedder
from knowgap.text.languages import different_languages

JUDGE_NAME = "faithfulness"
_SHIPPED = load()
RULES = "lang1"
"""The revision of what the checker decides before its combiner (``empty``, ``refusal``, ``other_language``);
part of the version."""


def judge_version(combiner: Combiner) -> str:
    """The judge's version with ``combiner``: the combiner's (``lr-<hash>``: changes with its weights and features)
    and the rules' revision; cards name it."""
    return f"{combiner.version}+{RULES}"


VERSION = judge_version(_SHIPPED)
"""The shipped judge's version."""
DEFAULT_THRESHOLD = 0.5
"""Faithful at or above this score (the combiner's probability; class-balanced, so 0.5 is its natural cut)."""

Verdict = Literal["faithful", "unfaithful", "empty", "refusal", "other_language"]
"""The last three come with no score: nothing the checker can compare."""


class ClaimCheck(BaseModel):
    claim: str
    evidence: str
    """The source unit the claim aligned with."""
    token_recall: float
    """The share of the claim's content words found in the source."""
    bigram_precision: float
    """The share of the claim's word bigrams found in the source (word order kept)."""
    issues: list[str] = Field(default_factory=list)
    """number / name / negation / polarity disagreements with the source; ``context`` for a copied claim
    whose names or numbers sit elsewhere in the source or that opens with a pronoun left without referent."""
    score: float
    """The claim's rule-based support: its token recall, halved per disagreement."""


class FaithfulnessResult(BaseModel):
    score: float | None
    verdict: Verdict
    claims: list[ClaimCheck] = Field(default_factory=list)


class Analysis(BaseModel):
    """What the checker measured about one pair, before weighting (none for an unscored verdict)."""

    claims: list[ClaimCheck]
    features: dict[str, float]


class OfflineFaithfulness:
    """``check(source, summary)`` -> :class:`FaithfulnessResult`; no model calls, only local embeddings.

    ``combiner``: the weights (default: the shipped ones); ``threshold``: faithful at or above."""

    def __init__(self, embedder: Embedder | None = None, threshold: float = DEFAULT_THRESHOLD,
                 combiner: Combiner | None = None, cache_size: int = 256) -> None:
        self.embedder = embedder or default_embedder()
        self.threshold = threshold
        self._combiner = combiner
        self.sources = SourceCache(cache_size)

    @property
    def combiner(self) -> Combiner:
        if self._combiner is None:
            self._combiner = _SHIPPED
        return self._combiner

    @property
    def version(self) -> str:
        return judge_version(self.combiner)

    def verdict(self, score: float) -> Verdict:
        return "faithful" if score >= self.threshold else "unfaithful"

    def analyse(self, source: str, summary: str) -> Analysis | Verdict:
        """The claims and features of a pair, or the verdict ``empty`` / ``refusal`` / ``other_language`` when
        there is nothing to check."""
        if not summary or not summary.strip():
            return "empty"
        if abstention_phrase(summary) is not None and len(summary) < 200:
            return "refusal"
        if different_languages(source, summary):
            return "other_language"
        claims = split_claims(summary) or [summary.strip()]
        index = self.sources.get(source)
        evidence = claim_evidence(claims, index)
        features = pair_features(summary, evidence, index)
        if EMBEDDING_FEATURES & set(self.combiner.features):
            features["summary_sim"] = summary_similarity(summary, evidence, index, self.embedder)
        return Analysis(claims=[_check(e, index.units[e.unit]) for e in evidence], features=features)

    def check(self, source: str, summary: str) -> FaithfulnessResult:
        analysis = self.analyse(source, summary)
        if not isinstance(analysis, Analysis):
            return FaithfulnessResult(score=None, verdict=analysis)
        score = round(self.combiner.probability(analysis.features), 4)
        return FaithfulnessResult(score=score, verdict=self.verdict(score), claims=analysis.claims)


def _check(e: ClaimEvidence, unit: str) -> ClaimCheck:
    issues = list(e.issues) + (["context"] if e.displaced or e.pronoun_copy else [])
    return ClaimCheck(claim=e.claim, evidence=unit, token_recall=round(e.recall, 4),
                      bigram_precision=round(e.bigram_precision, 4), issues=issues, score=round(e.score, 4))
