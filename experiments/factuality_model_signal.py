"""Does the embedded model's yes/no token probability add to the offline factuality judge? (issue 15)

For every tiered answer of ``policybench/responses_dev.jsonl`` (the factuality judge's labelled set), the model
is asked one yes/no question about the answer against the expected answer (``--prompt``; one generated token, its
20 most likely tokens read): the signal is P(yes) = p(yes) / (p(yes) + p(no)). Each answer's P(yes) is appended to
``OUT/PROMPT.jsonl`` as it comes, so a stopped run resumes where it left off. Then the shipped recipe (logistic
regression over the 19 offline signals, contradiction cap, acceptable at P >= 0.5) is cross-validated with and
without logit P(yes) of each prompt measured so far, on the answers every one of them covers: 5 folds grouped by
question, fold seeds 0, 1 and 2; balanced accuracy (acceptable vs tier_3) with its bootstrap CI, AUC, and the
gain paired on the same folds with a bootstrap over questions.

    python experiments/factuality_model_signal.py ../shared/data --prompt same --prompt omits

Results and what they mean: docs/judges.md, factuality, "What was tried".
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import time
from pathlib import Path

import numpy as np

from knowgap.judges.cards import binary_measures, confusion_of, sha256_files
from knowgap.judges.factuality import CONTRADICTION_CAP
from knowgap.judges.factuality_features import FEATURES, FEATURES_REVISION, FactualityRow, feature_matrix
from knowgap.judges.factuality_validation import DATASET, L2, LabelledRows, grouped_folds, load_labelled
from knowgap.judges.logistic import fit_logistic
from knowgap.models.base import ChatModel
from knowgap.models.registry import create_model
from knowgap.models.types import ChatRequest, Message

SYSTEM = "You check answers against a reference answer. Reply with one word: Yes or No."
QUESTIONS = {
    # Yes = the answer matches (higher is better)
    "same": "Does the candidate answer give the same answer as the reference answer, keeping its key facts and "
            "conditions and saying nothing that contradicts it? Reply Yes or No.",
    # Yes = something is missing or contradicted (higher is worse)
    "omits": "Does the candidate answer leave out a condition, limit, requirement or key fact that the reference "
             "answer states, or state something the reference answer contradicts? Reply Yes or No.",
}
YES, NO = {"yes", "是"}, {"no", "否"}
FOLD_SEEDS = (0, 1, 2)


def request(row: FactualityRow, prompt: str) -> ChatRequest:
    """Question and reference first, so the answers to one question share a prompt prefix (the local provider
    restores its saved state for it)."""
    text = (f"Question: {row.question}\n\nReference answer: {row.expected}\n\nCandidate answer: {row.response}\n\n"
            f"{QUESTIONS[prompt]}")
    return ChatRequest(messages=[Message(role="system", content=SYSTEM), Message(role="user", content=text)],
                       max_tokens=1, temperature=0.0, seed=0, top_logprobs=20)


def p_yes(model: ChatModel, req: ChatRequest) -> tuple[float, float, float]:
    """P(yes) among yes and no, the probability mass the two hold, and the call's seconds."""
    response = asyncio.run(model.chat(req))
    top = response.logprobs[0].top if response.logprobs else []
    yes = sum(math.exp(t.logprob) for t in top if t.token.strip().lower() in YES)
    no = sum(math.exp(t.logprob) for t in top if t.token.strip().lower() in NO)
    return (yes / (yes + no) if yes + no > 0 else 0.5), yes + no, response.latency_s or 0.0


def measure(data: LabelledRows, spec: str, prompt: str, out: Path, limit_seconds: float | None) -> None:
    """Append P(yes) of every row not yet in ``out``; questions in a seeded order (so a partial file is a random
    set of questions), the answers of one question together."""
    done = {json.loads(line)["i"] for line in out.read_text(encoding="utf-8").splitlines()} if out.exists() else set()
    questions = sorted(set(data.groups))
    random.Random(0).shuffle(questions)
    rank = {q: k for k, q in enumerate(questions)}
    order = sorted((i for i in range(len(data)) if i not in done), key=lambda i: (rank[data.groups[i]], i))
    model = create_model(spec)
    started = time.monotonic()
    with out.open("a", encoding="utf-8") as fh:
        for n, i in enumerate(order, 1):
            p, mass, seconds = p_yes(model, request(data.rows[i], prompt))
            fh.write(json.dumps({"i": i, "p_yes": p, "mass": round(mass, 4), "seconds": round(seconds, 3)}) + "\n")
            fh.flush()
            if n % 50 == 0:
                print(f"{prompt}: {len(done) + n}/{len(data)} answers, {time.monotonic() - started:.0f} s", flush=True)
            if limit_seconds is not None and time.monotonic() - started > limit_seconds:
                break


def held_out(x: np.ndarray, y: np.ndarray, groups: list[str], names: list[str], seed: int) -> np.ndarray:
    """P(acceptable) of every row from the combiner fitted on the other folds, capped for contradictions."""
    fold = grouped_folds(groups, 5, seed)
    score = np.zeros(len(y))
    for k in range(5):
        train, test = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
        score[test] = fit_logistic(x[train], y[train], names, l2=L2).probability(x[test])
    contradiction = (x[:, [FEATURES.index("numbers_conflict"), FEATURES.index("polarity_mismatch")]] > 0).any(axis=1)
    return np.where(contradiction, np.minimum(score, CONTRADICTION_CAP), score)


def auc(score: np.ndarray, y: np.ndarray) -> float:
    pos, neg = score[y > 0], score[y == 0]
    return float((pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean())


def balanced(pred: np.ndarray, y: np.ndarray) -> float:
    return float(0.5 * (pred[y > 0].mean() + (~pred[y == 0]).mean()))


def paired_gain(base: np.ndarray, other: np.ndarray, y: np.ndarray, groups: list[str]) -> tuple[float, float, float]:
    """Balanced accuracy of ``other`` minus ``base`` (verdicts on the same rows), 95% CI by resampling questions."""
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
    low, high = np.percentile(draws, [2.5, 97.5])
    return balanced(other, y) - balanced(base, y), float(low), float(high)


def report(data: LabelledRows, features: np.ndarray, signals: dict[str, np.ndarray]) -> None:
    rows = np.flatnonzero(np.all([~np.isnan(s) for s in signals.values()], axis=0))
    y = np.array([data.tiers[i] != "tier_3" for i in rows], dtype=float)
    groups = [data.groups[i] for i in rows]
    print(f"{len(rows)} answers ({int(y.sum())} acceptable) from {len(set(groups))} questions have "
          f"{', '.join(signals)}")
    for name, s in signals.items():  # a model that reads the question: above 0.5 for 'same', below for 'omits'
        print(f"  P(yes) of '{name}' alone as a score of acceptable answers: AUC {auc(s[rows], y):.3f}")
    logit = {name: np.log(np.clip(s[rows], 1e-4, 1 - 1e-4) / (1 - np.clip(s[rows], 1e-4, 1 - 1e-4)))
             for name, s in signals.items()}
    variants = {"19 signals": (features[rows], list(FEATURES))}
    for name in signals:
        variants[f"19 + {name}"] = (np.column_stack([features[rows], logit[name]]), [*FEATURES, f"model_{name}"])
    if len(signals) > 1:
        variants["19 + all"] = (np.column_stack([features[rows], *logit.values()]),
                                [*FEATURES, *(f"model_{n}" for n in signals)])
    for seed in FOLD_SEEDS:
        base = None
        for label, (x, names) in variants.items():
            score = held_out(x, y, groups, names, seed)
            pred = score >= 0.5
            c, _ = confusion_of(pred.tolist(), (y > 0).tolist())
            est = binary_measures(c)["balanced_accuracy"]
            line = f"  fold seed {seed}, {label:14s}: BA {est.value:.3f} [{est.ci_low:.3f}, {est.ci_high:.3f}], " \
                   f"AUC {auc(score, y):.3f}"
            if base is None:
                base = pred
            else:
                gain, low, high = paired_gain(base, pred, y, groups)
                line += f", gain {gain:+.3f} [{low:+.3f}, {high:+.3f}]"
            print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", type=Path, help="the shared data folder (holds policybench/)")
    parser.add_argument("--model", default="local:qwen2.5-1.5b", help="a model spec that returns logprobs")
    parser.add_argument("--prompt", action="append", choices=sorted(QUESTIONS),
                        help="the question(s) to ask (repeatable; default: same)")
    parser.add_argument("--out", type=Path, default=Path("factuality-model-signal"), help="folder for P(yes) files")
    parser.add_argument("--minutes", type=float, default=None, help="stop asking after this long per prompt; "
                        "a later run resumes")
    parser.add_argument("--report-only", action="store_true", help="ask nothing; cross-validate what is stored")
    args = parser.parse_args()
    prompts = args.prompt or ["same"]
    data = load_labelled(args.data_dir / DATASET)
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        for prompt in prompts:
            measure(data, args.model, prompt, args.out / f"{prompt}.jsonl",
                    None if args.minutes is None else args.minutes * 60)
    signals = {}
    for prompt in prompts:
        s = np.full(len(data), np.nan)
        file = args.out / f"{prompt}.jsonl"
        for line in file.read_text(encoding="utf-8").splitlines() if file.exists() else []:
            row = json.loads(line)
            s[row["i"]] = row["p_yes"]
        signals[prompt] = s
    report(data, features(data, args.data_dir / DATASET, args.out), signals)


def features(data: LabelledRows, path: Path, out: Path) -> np.ndarray:
    """The 19 offline signals of every row, computed once per dataset and features revision (kept in ``out``)."""
    from knowgap.text.embed import default_embedder

    kept = out / f"features-{FEATURES_REVISION}-{sha256_files([path])[:12]}.npy"
    if kept.exists():
        return np.asarray(np.load(kept))
    x = feature_matrix(data.rows, default_embedder())
    np.save(kept, x)
    return x


if __name__ == "__main__":
    main()
