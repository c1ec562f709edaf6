"""The offline factuality judge: KnowOrNot's tiers of an answer against the expected answer, without an LLM.

tier_1 (functionally equivalent), tier_2 (substitutable), tier_3 (unacceptable). A logistic regression over
the signals of :mod:`knowgap.judges.factuality_features` gives ``score`` = P(acceptable, i.e. tier 1 or 2);
``acceptable`` is ``score >= acceptable_threshold``; an acceptable answer is tier_1 when ``score >=
tier1_threshold`` (a second threshold on the same score, chosen on the training rows for exact tier
agreement), else tier_2; an unacceptable one is tier_3.

The weights ship in ``judges/data/factuality_weights.json`` with the sha256 of the rows they were trained on
and the feature list; :attr:`OfflineFactuality.version` is derived from that file's content and the features'
revision, so it changes whenever either does (and a validity card never carries over). How it was trained and
measured: :mod:`knowgap.judges.factuality_validation` and ``docs/judges.md``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from importlib.resources import files
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from knowgap.errors import KnowgapError
from knowgap.judges.factuality_features import FEATURES, FEATURES_REVISION, FactualityRow, feature_matrix
from knowgap.judges.logistic import Logistic
from knowgap.text.embed import Embedder

JUDGE_NAME = "factuality"
WEIGHTS_PATH = Path(str(files("knowgap.judges") / "data" / "factuality_weights.json"))
TIERS = ("tier_1", "tier_2", "tier_3")
POSITIVE = "acceptable (tier_1 or tier_2)"
CONTRADICTION_CAP = 0.05
"""The highest score of a response that contradicts the expected answer (part of features revision)."""


class TrainingSet(BaseModel):
    """The labelled rows the weights were fitted on."""

    dataset: str
    sha256: str
    n: int
    tiers: dict[str, int]


class FactualityWeights(BaseModel):
    """What ships: the fitted combiner, its two thresholds, the features it expects and its training data."""

    features_revision: str
    model: Logistic
    acceptable_threshold: float
    tier1_threshold: float
    training: TrainingSet

    def version(self) -> str:
        digest = hashlib.sha256(self.model_dump_json().encode("utf-8")).hexdigest()[:10]
        return f"offline-lr-{self.features_revision}-{digest}"

    def tier(self, score: float) -> str:
        if score < self.acceptable_threshold:
            return "tier_3"
        return "tier_1" if score >= self.tier1_threshold else "tier_2"


def scores(weights: FactualityWeights, x: np.ndarray) -> np.ndarray:
    """P(acceptable) for feature rows ``x``, capped for outright contradictions."""
    contradiction = (x[:, FEATURES.index("numbers_conflict")] > 0) | (x[:, FEATURES.index("polarity_mismatch")] > 0)
    return np.where(contradiction, np.minimum(weights.model.probability(x), CONTRADICTION_CAP),
                    weights.model.probability(x))


class FactualityVerdict(BaseModel):
    tier: str
    acceptable: bool
    score: float
    """P(acceptable) from the combiner, 0..1."""
    method: str = "offline"
    version: str


def load_weights(path: Path = WEIGHTS_PATH) -> FactualityWeights:
    try:
        weights = FactualityWeights.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise KnowgapError(f"{path}: not a factuality weights file ({exc})") from None
    if weights.features_revision != FEATURES_REVISION or tuple(weights.model.features) != FEATURES:
        raise KnowgapError(f"{path}: weights for features {weights.features_revision} "
                           f"{weights.model.features}, the code computes {FEATURES_REVISION} {list(FEATURES)}")
    return weights


class OfflineFactuality:
    """The shipped offline factuality judge (or one with other ``weights``, e.g. a cross-validation fold's)."""

    def __init__(self, weights: FactualityWeights | None = None, embedder: Embedder | None = None) -> None:
        self.weights = weights or load_weights()
        self._embedder = embedder

    @property
    def version(self) -> str:
        return self.weights.version()

    def _embed(self) -> Embedder:
        if self._embedder is None:
            from knowgap.text.embed import default_embedder

            self._embedder = default_embedder()
        return self._embedder

    def judge(self, rows: Sequence[FactualityRow], *, batch: int = 64,
              progress: Callable[[int], None] | None = None) -> list[FactualityVerdict]:
        """Verdicts for ``rows`` in order, embedded ``batch`` rows at a time."""
        out: list[FactualityVerdict] = []
        version = self.version
        for start in range(0, len(rows), batch):
            x = feature_matrix(rows[start:start + batch], self._embed())
            for score in scores(self.weights, x):
                s = float(score)
                tier = self.weights.tier(s)
                out.append(FactualityVerdict(tier=tier, acceptable=tier != "tier_3", score=round(s, 4),
                                             version=version))
            if progress:
                progress(len(out))
        return out

    def judge_one(self, question: str, expected: str, response: str) -> FactualityVerdict:
        return self.judge([FactualityRow(question, expected, response)])[0]


_default: OfflineFactuality | None = None


_SHIPPED = load_weights()
VERSION = _SHIPPED.version()
"""The shipped weights' version (changes with the weights and the feature revision); cards name it."""


def default_factuality() -> OfflineFactuality:
    """The process-wide shipped offline judge, on the same weights :data:`VERSION` names (read once)."""
    global _default
    if _default is None:
        _default = OfflineFactuality(_SHIPPED)
    return _default
