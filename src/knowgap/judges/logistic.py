"""A small L2-regularised logistic regression in numpy: the learned combiner of an offline judge's signals.

:func:`fit_logistic` standardises the features, weighs the two classes equally (balanced: the rarer class is
not drowned out) and solves by Newton's method (IRLS). :class:`Logistic` is the fitted model as a pydantic
record, so its weights can ship as a few-KB JSON file next to the judge.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel


class Logistic(BaseModel):
    """P(positive | x) = sigmoid(bias + sum(weights * (x - mean) / scale))."""

    features: list[str]
    mean: list[float]
    scale: list[float]
    weights: list[float]
    bias: float
    l2: float

    def decision(self, x: np.ndarray) -> np.ndarray:
        z = (np.asarray(x, dtype=np.float64) - np.asarray(self.mean)) / np.asarray(self.scale)
        return np.asarray(z @ np.asarray(self.weights) + self.bias)

    def probability(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(1.0 / (1.0 + np.exp(-np.clip(self.decision(x), -30, 30))))


def fit_logistic(x: np.ndarray, y: np.ndarray, features: list[str], *, l2: float = 1.0, balanced: bool = True,
                 iterations: int = 50) -> Logistic:
    """Fit on rows ``x`` (n, d) and 0/1 labels ``y``; ``l2`` penalises the standardised weights (not the bias)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != len(features) or len(y) != len(x):
        raise ValueError(f"x {x.shape}, y {y.shape} and {len(features)} features do not fit together")
    if not 0 < y.sum() < len(y):
        raise ValueError("both classes are needed to fit")
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    pos = y.sum()
    w_row = np.where(y > 0, len(y) / (2 * pos), len(y) / (2 * (len(y) - pos))) if balanced else np.ones(len(y))
    penalty = np.full(z.shape[1], l2)
    penalty[0] = 0.0
    beta = np.zeros(z.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ beta, -30, 30)))
        grad = z.T @ (w_row * (p - y)) + penalty * beta
        hess = (z * (w_row * p * (1 - p))[:, None]).T @ z + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return Logistic(features=list(features), mean=mean.tolist(), scale=scale.tolist(), weights=beta[1:].tolist(),
                    bias=float(beta[0]), l2=l2)
