"""Does the embedded model's yes/no token probability (or its 1-5 rating) add to the offline factuality judge?
(issue 15)

For every tiered answer of ``policybench/responses_dev.jsonl`` (the factuality judge's labelled set), the model
is asked one yes/no question about the answer against the expected answer (``--prompt``; one generated token, its
20 most likely tokens read): the signal is P(yes) = p(yes) / (p(yes) + p(no)). Each answer's P(yes) is appended to
``OUT/PROMPT.jsonl`` as it comes, so a stopped run resumes where it left off. Then the shipped recipe (logistic
regression over the 19 offline signals, contradiction cap, acceptable at P >= 0.5) is cross-validated with and
without logit P(yes) of each prompt measured so far, on the answers every one of them covers: 5 folds grouped by
question, fold seeds 0, 1 and 2; balanced accuracy (acceptable vs tier_3) with its bootstrap CI, AUC, and the
gain paired on the same folds with a bootstrap over questions.

    python experiments/factuality_model_signal.py ../shared/data --prompt same --prompt omits
    python experiments/factuality_model_signal.py ../shared/data --prompt anchor --prompt same

``--prompt anchor`` asks the 'same' question once per question with the reference answer itself as the candidate
(no label needed): the report then adds logit P(yes) minus its question's anchor, a per-question calibration.

Results and what they mean: docs/judges.md, factuality, "What was tried".
"""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

import numpy as np
from model_signal import (
    Signal,
    Variants,
    auc,
    compare,
    grouped_order,
    load_signal,
    logit,
    measure,
    p_yes,
    rating,
    yes_no_request,
)

from knowgap.judges.cards import sha256_files
from knowgap.judges.factuality import CONTRADICTION_CAP
from knowgap.judges.factuality_features import FEATURES, FEATURES_REVISION, FactualityRow, feature_matrix
from knowgap.judges.factuality_validation import DATASET, L2, LabelledRows, grouped_folds, load_labelled
from knowgap.judges.logistic import fit_logistic
from knowgap.models.base import ChatModel
from knowgap.models.types import ChatRequest

__all__ = ["p_yes", "report", "request"]

SYSTEM = "You check answers against a reference answer. Reply with one word: Yes or No."
QUESTIONS = {
    # Yes = the answer matches (higher is better)
    "same": "Does the candidate answer give the same answer as the reference answer, keeping its key facts and "
            "conditions and saying nothing that contradicts it? Reply Yes or No.",
    # Yes = something is missing or contradicted (higher is worse)
    "omits": "Does the candidate answer leave out a condition, limit, requirement or key fact that the reference "
             "answer states, or state something the reference answer contradicts? Reply Yes or No.",
    # a 1-5 rating read as its probability-weighted mean (higher is better)
    "rate": "Rate how well the candidate answer matches the reference answer, from 1 to 5: 5 = the same answer "
            "with every key fact and condition; 4 = the same answer, a minor detail missing; 3 = partly the "
            "same, a key fact or condition missing; 2 = mostly different or missing the key facts; 1 = wrong or "
            "contradicting the reference. Reply with one digit.",
}
RATING_SYSTEM = "You grade answers against a reference answer. Reply with one digit from 1 to 5."
FOLD_SEEDS = (0, 1, 2)


ANCHOR = "anchor"
"""Not a question of its own: the 'same' question with the reference answer itself as the candidate, one call per
question (label-free: the model's P(yes) for an answer it should call the same), to calibrate 'same' per question."""


def request(row: FactualityRow, prompt: str) -> ChatRequest:
    """Question and reference first, so the answers to one question share a prompt prefix (the local provider
    restores its saved state for it)."""
    system = RATING_SYSTEM if prompt == "rate" else SYSTEM
    candidate, question = (row.expected, QUESTIONS["same"]) if prompt == ANCHOR else (row.response, QUESTIONS[prompt])
    return yes_no_request(system, f"Question: {row.question}\n\nReference answer: {row.expected}\n\n"
                                  f"Candidate answer: {candidate}\n\n{question}")


def once_per_request(signal: Signal) -> Signal:
    """``signal`` asked once per distinct request (the anchor's rows of one question share theirs)."""
    seen: dict[str, tuple[float, float, float]] = {}

    def ask(model: ChatModel, req: ChatRequest) -> tuple[float, float, float]:
        key = req.fingerprint()
        if key not in seen:
            seen[key] = signal(model, req)
        return seen[key]

    return ask


def request_of(data: LabelledRows, prompt: str, i: int) -> ChatRequest:
    return request(data.rows[i], prompt)


def held_out(x: np.ndarray, y: np.ndarray, groups: list[str], names: list[str], seed: int) -> np.ndarray:
    """P(acceptable) of every row from the combiner fitted on the other folds, capped for contradictions."""
    fold = grouped_folds(groups, 5, seed)
    score = np.zeros(len(y))
    for k in range(5):
        train, test = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
        score[test] = fit_logistic(x[train], y[train], names, l2=L2).probability(x[test])
    contradiction = (x[:, [FEATURES.index("numbers_conflict"), FEATURES.index("polarity_mismatch")]] > 0).any(axis=1)
    return np.where(contradiction, np.minimum(score, CONTRADICTION_CAP), score)


def report(data: LabelledRows, features: np.ndarray, signals: dict[str, np.ndarray]) -> None:
    rows = np.flatnonzero(np.all([~np.isnan(s) for s in signals.values()], axis=0))
    y = np.array([data.tiers[i] != "tier_3" for i in rows], dtype=float)
    groups = [data.groups[i] for i in rows]
    print(f"{len(rows)} answers ({int(y.sum())} acceptable) from {len(set(groups))} questions have "
          f"{', '.join(signals)}")
    for name, s in signals.items():  # a model that reads the question: above 0.5 for 'same', below for 'omits'
        print(f"  the signal of '{name}' alone as a score of acceptable answers: AUC {auc(s[rows], y):.3f}")
    logits = {name: logit(s[rows]) for name, s in signals.items()}
    variants: Variants = {"19 signals": (features[rows], list(FEATURES))}
    for name in signals:
        variants[f"19 + {name}"] = (np.column_stack([features[rows], logits[name]]), [*FEATURES, f"model_{name}"])
    if len(signals) > 1:
        variants["19 + all"] = (np.column_stack([features[rows], *logits.values()]),
                                [*FEATURES, *(f"model_{n}" for n in signals)])
    if "same" in logits and ANCHOR in logits:  # 'same' against the model's P(yes) for the reference itself
        shifted = logits["same"] - logits[ANCHOR]
        print(f"  logit P(yes) minus its question's anchor, alone: AUC {auc(shifted, y):.3f}")
        variants["19 + same - anchor"] = (np.column_stack([features[rows], shifted]), [*FEATURES, "model_shifted"])
    compare(variants, y, groups, lambda x, names, seed: held_out(x, y, groups, names, seed), FOLD_SEEDS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", type=Path, help="the shared data folder (holds policybench/)")
    parser.add_argument("--model", default="local:qwen2.5-1.5b", help="a model spec that returns logprobs")
    parser.add_argument("--prompt", action="append", choices=sorted([*QUESTIONS, ANCHOR]),
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
            measure(args.model, grouped_order(data.groups), partial(request_of, data, prompt),
                    args.out / f"{prompt}.jsonl", label=prompt, total=len(data),
                    limit_seconds=None if args.minutes is None else args.minutes * 60,
                    signal=rating if prompt == "rate" else once_per_request(p_yes) if prompt == ANCHOR else p_yes)
    signals = {prompt: load_signal(args.out / f"{prompt}.jsonl", len(data)) for prompt in prompts}
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
