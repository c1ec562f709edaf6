"""Missing-element coverage: which annotated missing elements a response names or asks about.

The sentences of a response that ask, condition or say a fact is unknown (a statement that merely talks
about the same subject does not name a missing fact) are cut into units (sentences, and the clauses of long
sentences). Each annotated element is
compared with every unit by cosine similarity of multilingual-e5-small embeddings (``query`` prefix on both
sides, which separates matches from near-misses better than ``passage`` on the calibration pairs). An element
is *covered* when its best unit reaches the language's threshold. Thresholds are calibrated on hand-labelled
(element, sentence, match) pairs shipped in ``data/calibration_pairs.jsonl``: :func:`calibrate` picks, per
language, the threshold with the best accuracy (the midpoint between neighbouring scores), and
``knowgap clarify calibrate`` prints it with its accuracy and AUC.

A response written in another language than the case's missing elements (both told:
:func:`knowgap.text.languages.different_languages`) is not scored (:func:`other_language`): e5-small's similarity
across languages stays under the thresholds. Three hand-written English replies to Chinese cases, each asking the
case's three expected questions in translation, scored 0.80-0.88 on all nine elements against the Chinese threshold
of 0.883 (recall 0), where the same questions in Chinese scored 0.89-0.99 (recall 1).

Recall = covered elements / annotated elements. Precision = the response's gap items (each clarifying question,
conditional statement or unknown fact it names: :func:`knowgap.judges.clarification.gap_items`) that match some
element or expected question / its gap items. F2 weighs recall four times as much as precision (a missed
prerequisite costs more than one superfluous question).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from knowgap.jsonl import read_models
from knowgap.suites.clarify.dataset import DATA_DIR
from knowgap.text import detect_lang, sentences
from knowgap.text.embed import Embedder, Kind, default_embedder
from knowgap.text.languages import different_languages

CALIBRATION_FILE = DATA_DIR / "calibration_pairs.jsonl"
THRESHOLDS: dict[str, float] = {"zh": 0.883, "en": 0.839}
"""Calibrated by ``knowgap clarify calibrate`` on data/calibration_pairs.jsonl (see docs/clarify.md)."""
UNCERTAIN_MARGIN = 0.02
"""A best similarity within this distance of the threshold makes the automatic verdict 'uncertain'."""
KIND: Kind = "query"
VERSION = "element-coverage-2"
"""Judge ``element-coverage``; change with THRESHOLDS, KIND or the unit rules. 2: a response in another language
than the elements is not scored (1 scored it, recall near 0)."""

_CLAUSE = re.compile(r"[，,；;：:]")


def response_units(response: str) -> list[str]:
    """Sentences of the response, plus the clauses of sentences long enough to hold several points."""
    units: list[str] = []
    for sentence in sentences(response):
        sentence = sentence.strip()
        if len(sentence) < 2:
            continue
        units.append(sentence)
        parts = [p.strip() for p in _CLAUSE.split(sentence) if len(p.strip()) >= 4]
        if len(parts) > 1:
            units.extend(parts)
    return list(dict.fromkeys(units))


def other_language(elements: Sequence[str], response: str) -> bool:
    """Whether ``response`` is written in another language than ``elements`` (both told; a short or mixed text is
    not called different): such a response is not scored."""
    return different_languages(" ".join(elements), response)


def threshold_for(text: str) -> float:
    return THRESHOLDS[detect_lang(text)]


@dataclass
class Coverage:
    element_scores: list[float]
    covered: list[bool]
    uncertain: bool
    item_matches: list[bool]
    missing_info_similarity: float
    expected_questions_similarity: float

    @property
    def recall(self) -> float:
        return sum(self.covered) / len(self.covered) if self.covered else 0.0

    @property
    def precision(self) -> float | None:
        return sum(self.item_matches) / len(self.item_matches) if self.item_matches else None

    @property
    def f2(self) -> float:
        return f_beta(self.precision or 0.0, self.recall, 2.0)


def f_beta(precision: float, recall: float, beta: float) -> float:
    if precision <= 0 and recall <= 0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


def _best(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each row of a, the best cosine against the rows of b (rows are L2-normalised)."""
    if len(a) == 0:
        return np.zeros(0)
    if len(b) == 0:
        return np.zeros(len(a))
    return np.asarray((a @ b.T).max(axis=1))


def coverage(gap_text: str, elements: Sequence[str], expected_questions: Sequence[str],
             items: Sequence[str], embedder: Embedder | None = None,
             similarity_text: str | None = None) -> Coverage:
    """Coverage of ``elements`` by ``gap_text`` (the response's sentences that ask, condition or say a fact is
    unknown: see :func:`knowgap.judges.clarification.gap_sentences`); ``items`` are the gap items precision counts
    (:func:`knowgap.judges.clarification.gap_items`). The seed's two similarities are computed over
    ``similarity_text`` (the whole response) when given."""
    emb = embedder or default_embedder()
    units = response_units(gap_text)
    lang_threshold = threshold_for(" ".join(elements) or gap_text)
    e_el = emb.embed(list(elements), KIND)
    e_q = emb.embed(list(expected_questions), KIND)
    e_units = emb.embed(units, KIND)
    el_best = _best(e_el, e_units)
    all_units = e_units if similarity_text is None else emb.embed(response_units(similarity_text), KIND)
    el_sim = _best(e_el, all_units)
    q_best = _best(e_q, all_units)
    covered = [bool(s >= lang_threshold) for s in el_best]
    uncertain = any(abs(float(s) - lang_threshold) < UNCERTAIN_MARGIN for s in el_best)
    matches: list[bool] = []
    if items:
        e_items = emb.embed(list(items), KIND)
        refs = np.vstack([m for m in (e_el, e_q) if len(m)]) if len(e_el) or len(e_q) else np.zeros((0, 1))
        matches = [bool(s >= lang_threshold) for s in _best(e_items, refs)]
    return Coverage(element_scores=[round(float(s), 4) for s in el_best], covered=covered, uncertain=uncertain,
                    item_matches=matches,
                    missing_info_similarity=float(el_sim.mean()) if len(el_sim) else 0.0,
                    expected_questions_similarity=float(q_best.mean()) if len(q_best) else 0.0)


# --- calibration -------------------------------------------------------------------------------------------
class CalibrationPair(BaseModel):
    element: str
    text: str
    match: bool


class LanguageCalibration(BaseModel):
    lang: str
    n: int
    positives: int
    threshold: float
    accuracy: float
    precision: float
    recall: float
    auc: float


def load_pairs(path: Path = CALIBRATION_FILE) -> list[CalibrationPair]:
    return [pair for _, pair in read_models(path, CalibrationPair, what="pairs")]


def best_threshold(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """The threshold (midpoint between neighbouring scores) with the highest accuracy; ties: the lowest."""
    values = sorted(set(scores))
    candidates = [values[0] - 1e-6] + [(a + b) / 2 for a, b in zip(values, values[1:], strict=False)]
    candidates.append(values[-1] + 1e-6)
    s, y = np.asarray(scores), np.asarray(labels, dtype=bool)
    best, best_acc = candidates[0], -1.0
    for t in candidates:
        acc = float(((s >= t) == y).mean())
        if acc > best_acc + 1e-12:
            best, best_acc = t, acc
    return float(best)


def pair_scores(pairs: Sequence[CalibrationPair], embedder: Embedder) -> list[float]:
    """The cosine of each pair's element and text (e5, ``query`` prefix on both sides)."""
    a = embedder.embed([p.element for p in pairs], KIND)
    b = embedder.embed([p.text for p in pairs], KIND)
    return [float(x) for x in (a * b).sum(axis=1)]


def calibrate(pairs: Sequence[CalibrationPair], embedder: Embedder | None = None) -> list[LanguageCalibration]:
    emb = embedder or default_embedder()
    out = []
    for lang in ("zh", "en"):
        subset = [p for p in pairs if detect_lang(p.element) == lang]
        if not subset:
            continue
        scores = pair_scores(subset, emb)
        labels = [p.match for p in subset]
        t = best_threshold(scores, labels)
        s, y = np.asarray(scores), np.asarray(labels, dtype=bool)
        pred = s >= t
        pos, neg = s[y], s[~y]
        auc = float((pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean()) \
            if len(pos) and len(neg) else float("nan")
        out.append(LanguageCalibration(
            lang=lang, n=len(subset), positives=int(y.sum()), threshold=round(t, 3),
            accuracy=round(float((pred == y).mean()), 3),
            precision=round(float((pred & y).sum() / max(1, pred.sum())), 3),
            recall=round(float((pred & y).sum() / max(1, y.sum())), 3), auc=round(auc, 3)))
    return out
