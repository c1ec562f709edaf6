"""What the offline faithfulness checker measures about a (source, summary) pair, before any weighting.

:class:`SourceIndex` holds everything about one source that does not depend on the summary: its units
(sentences; for short sources also clauses and adjacent sentence pairs), their content words and IDF, its
numbers, names, clauses and n-grams, and (only for a combiner that uses e5 similarity) the e5 embedding of
each unit, computed the first time it is needed and kept for the life of the index. :class:`SourceCache`
keeps indexes by the sha256 of the source text, so two summaries of one article never analyse or embed it
twice.

:func:`claim_evidence` aligns each claim of a summary with the source unit it shares the most IDF-weighted
content words with, and records its support: content-token recall, ordered bigram precision, novel words, the
number / name / negation / polarity disagreements, and whether a copied claim lost its context (it opens with
a pronoun, or names someone the source mentions only far from the aligned sentence). :func:`pair_features`
turns the claims into the named features (:data:`FEATURES`) that the learned combiner
(:mod:`knowgap.judges.faithfulness_model`) weighs.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from knowgap.text.claims import has_negation, numbers, polarity, proper_names, split_claims
from knowgap.text.embed import Embedder
from knowgap.text.segment import content_tokens, sentences, tokens

PENALTY = 0.5
"""A claim's support is halved for each disagreement with the source."""
WEAK_RECALL = 0.5
"""A claim is weakly supported when it disagrees with the source, or fewer of its content words than this
share occur in the source."""
MAX_UNIT_WORDS = 60
_ZH_CHAR = re.compile(r"[\u4e00-\u9fff]")
_ZH_RUN = re.compile(r"[\u4e00-\u9fff]+")

_META_WORDS = frozenset("""reviewer reviewers customer customers user users author writer diner diners guest guests
buyer buyers review overall 顾客 用户 评论 买家 客人 评论者 总体 整体""".split())
"""Words a summary uses about the review itself; the source need not contain them."""
_PRONOUNS = frozenset("""he she it they his her its their him them this these those there here 他 她 它 他们 她们
它们 这 那 该""".split())


def _stem(token: str) -> str:
    token = token.removesuffix("'s")
    if token.isascii() and len(token) > 4:
        for suffix in ("ing", "ed", "es", "s", "ly"):
            if token.endswith(suffix):
                return token[: -len(suffix)]
    return token


def _clip(unit: str) -> str:
    words = unit.split()
    if len(words) > MAX_UNIT_WORDS:
        return " ".join(words[:MAX_UNIT_WORDS])
    return unit[:160] if _ZH_CHAR.search(unit) else unit


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


def _effective_polarity(clause: str) -> int:
    """The lexicon polarity; a negated clause without evaluative words counts as negative ("the food was not")."""
    value = polarity(clause)
    return -1 if value == 0 and has_negation(clause) else value


def _ngrams(words: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]


def _words(text: str) -> list[str]:
    """All word tokens (stopwords kept, stemmed): the unit of copy and word-order measures."""
    return [_stem(t) for t in tokens(text)]


@dataclass
class SourceIndex:
    """One source, analysed once; unit embeddings are filled in as claims need them."""

    text: str
    units: list[str]
    unit_sentence: list[int]
    """The index of the (first) source sentence each unit comes from."""
    sentence_words: list[set[str]]
    sentence_numbers: list[set[float]]
    unit_keys: list[set[str]]
    idf: dict[str, float]
    content: set[str]
    content_norm: str
    numbers: set[float]
    names: set[str]
    lower: str
    clauses: list[tuple[str, set[str]]]
    bigrams: set[tuple[str, ...]]
    fourgrams: set[tuple[str, ...]]
    word_set: set[str]
    vectors: dict[int, np.ndarray] = field(default_factory=dict)

    @classmethod
    def build(cls, source: str) -> SourceIndex:
        sents = sentences(source) or [source]
        units: list[str] = []
        owner: list[int] = []
        for i, sentence in enumerate(sents):
            units.append(sentence)
            owner.append(i)
        if len(sents) <= 12:
            for i, sentence in enumerate(sents):
                parts = split_claims(sentence)
                if len(parts) > 1:
                    units += parts
                    owner += [i] * len(parts)
            for i in range(len(sents) - 1):
                units.append(f"{sents[i]} {sents[i + 1]}")
                owner.append(i)
        seen: dict[str, int] = {}
        for unit, i in zip(units, owner, strict=True):
            clipped = _clip(unit)
            if clipped.strip() and clipped not in seen:
                seen[clipped] = i
        unit_texts = list(seen)
        unit_keys = [{_stem(t) for t in content_tokens(u)} for u in unit_texts]
        df = Counter(k for keys in unit_keys for k in keys)
        idf = {k: math.log(1 + len(unit_texts) / v) for k, v in df.items()}
        words = _words(source)
        content = content_tokens(source)
        return cls(text=source, units=unit_texts, unit_sentence=list(seen.values()),
                   sentence_words=[set(_words(s)) for s in sents],
                   sentence_numbers=[numbers(s) for s in sents], unit_keys=unit_keys, idf=idf,
                   content={_stem(t) for t in content}, content_norm=" ".join(content), numbers=numbers(source),
                   names={n.lower() for n in proper_names(source)}, lower=source.lower(),
                   clauses=[(c, _clause_keys(c)) for c in _clauses(source)], bigrams=set(_ngrams(words, 2)),
                   fourgrams=set(_ngrams(words, 4)), word_set=set(words))

    def candidates(self, keys: set[str], k: int) -> list[int]:
        """The ``k`` units sharing the most IDF-weighted content words with ``keys`` (ties: source order)."""
        scores = [sum(self.idf.get(w, 0.0) for w in keys & unit) for unit in self.unit_keys]
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return order[:k]

    def embed_units(self, indexes: Sequence[int], embedder: Embedder) -> np.ndarray:
        missing = [i for i in dict.fromkeys(indexes) if i not in self.vectors]
        if missing:
            rows = embedder.embed([self.units[i] for i in missing], "query")
            for i, row in zip(missing, rows, strict=True):
                self.vectors[i] = np.asarray(row, dtype=np.float32)
        return np.stack([self.vectors[i] for i in indexes])


class SourceCache:
    """Source indexes by the sha256 of the source text, for the life of the checker (bounded, oldest out)."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._items: dict[str, SourceIndex] = {}

    def get(self, source: str) -> SourceIndex:
        key = hashlib.sha256(source.encode("utf-8")).hexdigest()
        index = self._items.pop(key, None) or SourceIndex.build(source)
        self._items[key] = index  # most recently used last
        while len(self._items) > self.size:
            self._items.pop(next(iter(self._items)))
        return index


@dataclass
class ClaimEvidence:
    claim: str
    unit: int
    """The source unit the claim aligned with (most IDF-weighted content words shared)."""
    content_words: int
    recall: float
    bigram_precision: float
    novel_words: int
    issues: list[str]
    displaced: int
    """Names or numbers the source states, but not within one sentence of the aligned source sentence."""
    pronoun_copy: bool
    """A near-verbatim claim that opens with a pronoun: its referent was left behind in the source."""
    misplaced: int
    """Content words the source has, but not within one sentence of the aligned source sentence."""

    @property
    def score(self) -> float:
        """The rule-based claim score: content-word recall, halved per disagreement."""
        return self.recall * PENALTY ** len(self.issues)


def _recall(words: list[str], index: SourceIndex) -> tuple[float, int]:
    """The share of a claim's content words found in the source, and how many were not found."""
    if not words:
        return 1.0, 0
    found, novel = 0.0, 0
    for w in words:
        if _stem(w) in index.content or (_ZH_CHAR.search(w) and w in index.content_norm):
            found += 1
        elif _ZH_CHAR.search(w) and len(w) > 1 and sum(ch in index.content_norm for ch in w) / len(w) >= 0.5:
            found += 0.5  # a Chinese word re-segmented or paraphrased with one shared character
        else:
            novel += 1
    return found / len(words), novel


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


def _displaced(claim: str, index: SourceIndex, unit: int, claim_names: set[str]) -> int:
    """Names and numbers of the claim that the source states, but not near the aligned sentence."""
    s = index.unit_sentence[unit]
    near = slice(max(0, s - 1), s + 2)
    window: set[str] = set().union(*index.sentence_words[near])
    count = sum(1 for n in claim_names if n in index.names and _stem(n) not in window and n not in window)
    return count + len(numbers(claim) & index.numbers - set().union(*index.sentence_numbers[near]))


def claim_evidence(claims: Sequence[str], index: SourceIndex) -> list[ClaimEvidence]:
    out: list[ClaimEvidence] = []
    for claim in claims:
        words = [w for w in content_tokens(claim) if not w.replace(".", "").isdigit() and w not in _META_WORDS]
        keys = {_stem(w) for w in words}
        unit = index.candidates(keys, 1)[0]
        recall, novel = _recall(words, index)
        claim_words = _words(claim)
        grams = _ngrams(claim_words, 2)
        if grams:
            bigram = sum(g in index.bigrams for g in grams) / len(grams)
        else:
            bigram = float(claim_words[0] in index.word_set) if claim_words else 1.0
        names = proper_names(claim)
        issues = []
        if numbers(claim) - index.numbers:
            issues.append("number")
        if {n for n in names if n not in index.names and n not in index.lower}:
            issues.append("name")
        issues += _contradictions(claim, index.clauses)
        first = tokens(claim)[:1]
        s = index.unit_sentence[unit]
        window: set[str] = set().union(*index.sentence_words[max(0, s - 1): s + 2])
        misplaced = sum(1 for k in keys if k in index.content and k not in window)
        out.append(ClaimEvidence(claim=claim, unit=unit, content_words=len(words), recall=recall,
                                 bigram_precision=bigram, novel_words=novel, issues=issues,
                                 displaced=_displaced(claim, index, unit, names),
                                 pronoun_copy=bool(first) and first[0] in _PRONOUNS and bigram >= 0.7,
                                 misplaced=misplaced))
    return out


FEATURES: tuple[str, ...] = (
    "rule_score", "claim_score_min", "claim_score_mean", "weak_claims", "recall_min", "recall_mean",
    "bigram_min", "bigram_mean", "novel_words_max", "novel_words_total", "novel_ratio", "copy_novel",
    "issues_number", "issues_name", "issues_negation", "copy_rate", "word_precision", "near_copy_novel",
    "displaced", "misplaced", "pronoun_copy", "coverage", "claims", "log_words", "log_source_words",
)
"""Every feature :func:`pair_features` computes (a combiner uses some of them, by name)."""
EMBEDDING_FEATURES = frozenset({"summary_sim"})
"""Features that need e5 embeddings (computed only when a combiner uses them)."""


def pair_features(summary: str, evidence: Sequence[ClaimEvidence], index: SourceIndex,
                  min_weight: float = 0.5) -> dict[str, float]:
    """The lexical features of one pair (see :data:`FEATURES`)."""
    scores = [e.score for e in evidence]
    rule = min_weight * min(scores) + (1 - min_weight) * sum(scores) / len(scores)
    words = _words(summary)
    grams = _ngrams(words, 4)
    copy_rate = sum(g in index.fourgrams for g in grams) / len(grams) if grams else 0.0
    summary_content = {_stem(t) for t in content_tokens(summary)}
    issues = Counter(i for e in evidence for i in e.issues)
    n = len(evidence)
    novel = sum(e.novel_words for e in evidence)
    return {
        "rule_score": rule,
        "claim_score_min": min(scores),
        "claim_score_mean": sum(scores) / n,
        "weak_claims": sum(bool(e.issues) or e.recall < WEAK_RECALL for e in evidence) / n,
        "recall_min": min(e.recall for e in evidence),
        "recall_mean": sum(e.recall for e in evidence) / n,
        "bigram_min": min(e.bigram_precision for e in evidence),
        "bigram_mean": sum(e.bigram_precision for e in evidence) / n,
        "novel_words_max": float(max(e.novel_words for e in evidence)),
        "novel_words_total": float(novel),
        "novel_ratio": novel / max(1, sum(e.content_words for e in evidence)),
        "copy_novel": copy_rate * novel,
        "issues_number": float(issues["number"]),
        "issues_name": float(issues["name"]),
        "issues_negation": float(issues["negation"] + issues["polarity"]),
        "copy_rate": copy_rate,
        "word_precision": sum(w in index.word_set for w in words) / len(words) if words else 1.0,
        "near_copy_novel": float(sum(e.novel_words for e in evidence if e.bigram_precision >= 0.6)),
        "displaced": float(sum(e.displaced for e in evidence)),
        "misplaced": float(sum(e.misplaced for e in evidence)),
        "pronoun_copy": float(sum(e.pronoun_copy for e in evidence)),
        "coverage": len(summary_content & index.content) / max(1, len(index.content)),
        "claims": float(n),
        "log_words": math.log1p(len(words)),
        "log_source_words": math.log1p(len(index.word_set)),
    }


def summary_similarity(summary: str, evidence: Sequence[ClaimEvidence], index: SourceIndex,
                       embedder: Embedder) -> float:
    """The best e5 similarity between the whole summary and the source units its claims aligned with."""
    whole = embedder.embed([summary], "query")[0]
    return float((index.embed_units(sorted({e.unit for e in evidence}), embedder) @ whole).max())
