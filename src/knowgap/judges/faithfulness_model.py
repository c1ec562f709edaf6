"""The learned combiner of the offline faithfulness checker: a logistic regression over named features.

:class:`Combiner` is a pydantic record (it is shipped as ``judges/data/faithfulness_combiner.json``): the
feature names in order, their standardisation (mean, scale), the weights and bias, the decision threshold on
the probability, the sha256 of the labelled data it was fitted on and a version string derived from all of
that, so the judge version changes whenever the weights or the features change. :func:`fit` trains one with
plain numpy (L2-regularised, class-balanced, full-batch Newton steps).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from importlib.resources import files
from pathlib import Path

import numpy as np
from pydantic import BaseModel

SHIPPED = Path(str(files("knowgap.judges") / "data" / "faithfulness_combiner.json"))


class Combiner(BaseModel):
    features: list[str]
    mean: list[float]
    scale: list[float]
    weights: list[float]
    bias: float
    threshold: float = 0.5
    """Faithful at or above this probability."""
    l2: float
    training_data: str
    """What it was fitted on (benchmark names)."""
    training_sha256: str
    trained_on: int

    @property
    def version(self) -> str:
        """``lr-`` and 10 hex digits of a hash over the features, standardisation, weights and threshold."""
        body = json.dumps([self.features, self.mean, self.scale, self.weights, self.bias, self.threshold])
        return "lr-" + hashlib.sha256(body.encode()).hexdigest()[:10]

    def matrix(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        return np.array([[row[f] for f in self.features] for row in rows], dtype=np.float64)

    def probability(self, row: Mapping[str, float]) -> float:
        return float(self.probabilities(self.matrix([row]))[0])

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        z = (x - np.asarray(self.mean)) / np.asarray(self.scale)
        return np.asarray(_sigmoid(z @ np.asarray(self.weights) + self.bias))


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


def fit(x: np.ndarray, y: np.ndarray, features: Sequence[str], *, l2: float = 1.0, training_data: str = "",
        training_sha256: str = "", steps: int = 30) -> Combiner:
    """Logistic regression with class-balanced sample weights (each class weighs half) and an L2 penalty on
    the standardised weights (not the bias), fitted by Newton's method."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    pos = y.astype(bool)
    sample = np.where(pos, 0.5 / max(1, pos.sum()), 0.5 / max(1, (~pos).sum())) * len(y)
    penalty = np.full(z.shape[1], l2)
    penalty[-1] = 0.0
    w = np.zeros(z.shape[1])
    for _ in range(steps):
        p = _sigmoid(z @ w)
        grad = z.T @ (sample * (p - y)) + penalty * w
        hess = (z * (sample * p * (1 - p))[:, None]).T @ z + np.diag(penalty) + 1e-9 * np.eye(z.shape[1])
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return Combiner(features=list(features), mean=[round(float(v), 6) for v in mean],
                    scale=[round(float(v), 6) for v in scale], weights=[round(float(v), 6) for v in w[:-1]],
                    bias=round(float(w[-1]), 6), l2=l2, training_data=training_data,
                    training_sha256=training_sha256, trained_on=len(y))


def load(path: Path = SHIPPED) -> Combiner:
    return Combiner.model_validate_json(path.read_text(encoding="utf-8"))
