"""Pieces shared by the experiments that ask the embedded model a yes/no question per labelled item and measure
what its token probability adds to an offline judge: P(yes) from the top logprobs, a resumable file of those
probabilities, and the held-out comparison measures (AUC, balanced accuracy, a paired gain with a bootstrap over
groups)."""

from __future__ import annotations

import asyncio
import json
import math
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from knowgap.judges.cards import binary_measures, confusion_of
from knowgap.models.base import ChatModel
from knowgap.models.registry import create_model
from knowgap.models.types import ChatRequest, Message
from knowgap.stats import percentile_interval

YES, NO = {"yes", "是"}, {"no", "否"}


def yes_no_request(system: str, text: str) -> ChatRequest:
    """One generated token at temperature 0, its 20 most likely tokens returned."""
    return ChatRequest(messages=[Message(role="system", content=system), Message(role="user", content=text)],
                       max_tokens=1, temperature=0.0, seed=0, top_logprobs=20)


def p_yes(model: ChatModel, req: ChatRequest) -> tuple[float, float, float]:
    """P(yes) among yes and no, the probability mass the two hold, and the call's seconds."""
    response = asyncio.run(model.chat(req))
    top = response.logprobs[0].top if response.logprobs else []
    yes = sum(math.exp(t.logprob) for t in top if t.token.strip().lower() in YES)
    no = sum(math.exp(t.logprob) for t in top if t.token.strip().lower() in NO)
    return (yes / (yes + no) if yes + no > 0 else 0.5), yes + no, response.latency_s or 0.0


RATINGS = {str(r): r for r in range(1, 6)}


def rating(model: ChatModel, req: ChatRequest) -> tuple[float, float, float]:
    """The probability-weighted mean of a 1-5 rating (G-Eval style) from one token's top log-probabilities, mapped
    to 0..1; the probability mass the five digits hold, and the call's seconds."""
    response = asyncio.run(model.chat(req))
    top = response.logprobs[0].top if response.logprobs else []
    weights = {r: 0.0 for r in RATINGS.values()}
    for t in top:
        r = RATINGS.get(t.token.strip())
        if r is not None:
            weights[r] += math.exp(t.logprob)
    mass = sum(weights.values())
    mean = sum(r * w for r, w in weights.items()) / mass if mass > 0 else 3.0
    return (mean - 1) / 4, mass, response.latency_s or 0.0


Signal = Callable[[ChatModel, ChatRequest], tuple[float, float, float]]
"""A model's answer to one request read as a 0..1 signal: (signal, probability mass read, seconds)."""


def measure(spec: str, order: Sequence[int], request_of: Callable[[int], ChatRequest], out: Path, *,
            label: str, total: int, limit_seconds: float | None, signal: Signal = p_yes) -> None:
    """Append ``{"i", "p_yes", "mass", "seconds"}`` for every item of ``order`` not yet in ``out`` (so a stopped
    run resumes), stopping after ``limit_seconds``. ``p_yes`` holds ``signal``'s value (P(yes), or a rating mapped
    to 0..1)."""
    done = {json.loads(line)["i"] for line in out.read_text(encoding="utf-8").splitlines()} if out.exists() else set()
    todo = [i for i in order if i not in done]
    model = create_model(spec)
    started = time.monotonic()
    with out.open("a", encoding="utf-8") as fh:
        for n, i in enumerate(todo, 1):
            p, mass, seconds = signal(model, request_of(i))
            fh.write(json.dumps({"i": i, "p_yes": p, "mass": round(mass, 4), "seconds": round(seconds, 3)}) + "\n")
            fh.flush()
            if n % 50 == 0:
                print(f"{label}: {len(done) + n}/{total} items, {time.monotonic() - started:.0f} s", flush=True)
            if limit_seconds is not None and time.monotonic() - started > limit_seconds:
                break


def grouped_order(groups: Sequence[str], seed: int = 0) -> list[int]:
    """Item indices with the groups in a seeded order (so a stopped run has measured a random set of whole
    groups) and the items of one group together (so they share a prompt prefix)."""
    keys = sorted(set(groups))
    random.Random(seed).shuffle(keys)
    rank = {g: k for k, g in enumerate(keys)}
    return sorted(range(len(groups)), key=lambda i: (rank[groups[i]], i))


def load_signal(file: Path, n: int) -> np.ndarray:
    """P(yes) of each of ``n`` items from a file written by :func:`measure`; NaN where not measured."""
    s = np.full(n, np.nan)
    for line in file.read_text(encoding="utf-8").splitlines() if file.exists() else []:
        row = json.loads(line)
        s[row["i"]] = row["p_yes"]
    return s


def logit(p: np.ndarray) -> np.ndarray:
    q = np.clip(p, 1e-4, 1 - 1e-4)
    return np.asarray(np.log(q / (1 - q)))


def auc(score: np.ndarray, y: np.ndarray) -> float:
    pos, neg = score[y > 0], score[y == 0]
    return float((pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean())


def balanced(pred: np.ndarray, y: np.ndarray) -> float:
    return float(0.5 * (pred[y > 0].mean() + (~pred[y == 0]).mean()))


def paired_gain(base: np.ndarray, other: np.ndarray, y: np.ndarray,
                groups: Sequence[str]) -> tuple[float, float, float]:
    """Balanced accuracy of ``other`` minus ``base`` (verdicts on the same rows), 95% CI by resampling groups."""
    members: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    keys = sorted(members)
    rng = np.random.default_rng(1)
    draws = []
    for _ in range(2000):
        rows = np.concatenate([members[k] for k in rng.choice(keys, len(keys))])
        if 0 < y[rows].sum() < len(rows):
            draws.append(balanced(other[rows], y[rows]) - balanced(base[rows], y[rows]))
    low, high = percentile_interval(draws)
    return balanced(other, y) - balanced(base, y), low, high


Variants = dict[str, tuple[np.ndarray, list[str]]]
"""Label -> (feature matrix, feature names) of each combiner compared; the first is the baseline."""


def compare(variants: Variants, y: np.ndarray, groups: Sequence[str],
            held_out: Callable[[np.ndarray, list[str], int], np.ndarray], seeds: Sequence[int] = (0, 1, 2)) -> None:
    """Print, per fold seed, each variant's held-out balanced accuracy (at P >= 0.5, bootstrap CI) and AUC, and
    its gain over the first variant paired on the same rows. ``held_out(x, names, seed)``: every row's held-out
    probability."""
    width = max(len(label) for label in variants)
    for seed in seeds:
        base = None
        for label, (x, names) in variants.items():
            score = held_out(x, names, seed)
            pred = score >= 0.5
            c, _ = confusion_of(pred.tolist(), (y > 0).tolist())
            est = binary_measures(c)["balanced_accuracy"]
            line = (f"  fold seed {seed}, {label:{width}s}: BA {est.value:.3f} [{est.ci_low:.3f}, {est.ci_high:.3f}], "
                    f"AUC {auc(score, y):.3f}")
            if base is None:
                base = pred
            else:
                gain, low, high = paired_gain(base, pred, y, groups)
                line += f", gain {gain:+.3f} [{low:+.3f}, {high:+.3f}]"
            print(line)
