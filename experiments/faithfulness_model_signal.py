"""Does the embedded model's yes/no token probability add to the offline faithfulness judge? (issue 15)

For every pair of the faithfulness benchmarks (SummEdits + AggreFact, ``knowgap.judges.faithfulness_data``), the
model reads the source document, then the summary, and is asked one yes/no question ("is every statement of the
summary supported by the document?"; one generated token, its 20 most likely tokens read): the signal is
P(yes) = p(yes) / (p(yes) + p(no)). The document comes first, so the summaries of one document share the prompt
prefix and the local provider restores its saved state instead of reading the document again. Documents go in a
seeded order (a stopped run has measured a random set of documents, every summary of each), and each P(yes) is
appended to ``OUT/supported.jsonl`` as it comes, so a stopped run resumes where it left off.

Then the shipped combiner's recipe (logistic regression over its two features, L2 1, faithful at P >= 0.5) is
cross-validated with and without logit P(yes), on the pairs measured so far: 5 folds grouped by document (fold
seeds 0, 1, 2); balanced accuracy with its bootstrap CI, AUC, the gain paired on the same folds with a bootstrap
over documents, and the model's signal alone (AUC; balanced accuracy at P(yes) >= 0.5).

    python experiments/faithfulness_model_signal.py ../shared/data --minutes 60

Results and what they mean: docs/judges.md, faithfulness, "What was tried".
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import numpy as np
from model_signal import Variants, auc, balanced, compare, grouped_order, load_signal, logit, measure, yes_no_request

from knowgap.judges.faithfulness import OfflineFaithfulness
from knowgap.judges.faithfulness_data import CalibrationPair, group_of, load_benchmarks
from knowgap.judges.faithfulness_model import fit
from knowgap.judges.faithfulness_validity import SHIPPED_FEATURES, featurize, held_out_probabilities
from knowgap.models.types import ChatRequest

SYSTEM = "You check summaries against a source document. Reply with one word: Yes or No."
QUESTION = ("Is every statement in the summary supported by the document, with no detail that the document "
            "contradicts or does not state? Reply Yes or No.")
FOLD_SEEDS = (0, 1, 2)


def request(pair: CalibrationPair) -> ChatRequest:
    return yes_no_request(SYSTEM, f"Document:\n{pair.source}\n\nSummary:\n{pair.summary}\n\n{QUESTION}")


def order_of(pairs: list[CalibrationPair]) -> list[int]:
    """Documents in a seeded order, the summaries of one document together."""
    return grouped_order([group_of(p) for p in pairs])


def shipped_features(pairs: list[CalibrationPair]) -> np.ndarray:
    """The shipped combiner's features of every pair (NaN rows for an empty summary or a refusal)."""
    rows = featurize(pairs, OfflineFaithfulness())
    return np.array([[r[f] for f in SHIPPED_FEATURES] if r is not None else [np.nan] * len(SHIPPED_FEATURES)
                     for r in rows])


def report(pairs: list[CalibrationPair], features: np.ndarray, signal: np.ndarray) -> None:
    rows = np.flatnonzero(~np.isnan(signal) & ~np.isnan(features).any(axis=1))
    y = np.array([pairs[i].faithful for i in rows], dtype=float)
    groups = [group_of(pairs[i]) for i in rows]
    print(f"{len(rows)} pairs ({int(y.sum())} faithful) from {len(set(groups))} documents have P(yes); "
          f"{dict(Counter(pairs[i].benchmark for i in rows))}")
    s = signal[rows]
    print(f"  P(yes) alone: AUC {auc(s, y):.3f}, balanced accuracy at 0.5 {balanced(s >= 0.5, y):.3f}, "
          f"mean P(yes) faithful {s[y > 0].mean():.3f} / unfaithful {s[y == 0].mean():.3f}")
    for subset in sorted({pairs[i].subset for i in rows}):
        mine = np.array([pairs[i].subset == subset for i in rows])
        if 0 < y[mine].sum() < mine.sum():
            print(f"    {subset}: {int(mine.sum())} pairs, P(yes) alone AUC {auc(s[mine], y[mine]):.3f}")
    variants: Variants = {"shipped (2)": (features[rows], list(SHIPPED_FEATURES)),
                "shipped + P(yes)": (np.column_stack([features[rows], logit(s)]), [*SHIPPED_FEATURES, "model_yes"]),
                "P(yes) refitted": (logit(s)[:, None], ["model_yes"])}
    def held_out(x: np.ndarray, names: list[str], seed: int) -> np.ndarray:
        recipe = fit(np.zeros((2, len(names))), np.array([0.0, 1.0]), names)  # the recipe: names and L2 1
        return held_out_probabilities(x, y, groups, recipe, seed=seed)

    compare(variants, y, groups, held_out, FOLD_SEEDS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", type=Path, help="the shared data folder (holds summedits/, aggrefact_errortypes/)")
    parser.add_argument("--model", default="local:qwen2.5-1.5b", help="a model spec that returns logprobs")
    parser.add_argument("--out", type=Path, default=Path("faithfulness-model-signal"), help="folder for P(yes)")
    parser.add_argument("--minutes", type=float, default=None, help="stop asking after this long; a later run "
                        "resumes")
    parser.add_argument("--report-only", action="store_true", help="ask nothing; cross-validate what is stored")
    args = parser.parse_args()
    pairs = load_benchmarks(args.data_dir)
    args.out.mkdir(parents=True, exist_ok=True)
    file = args.out / "supported.jsonl"
    if not args.report_only:
        measure(args.model, order_of(pairs), lambda i: request(pairs[i]), file, label="supported",
                total=len(pairs), limit_seconds=None if args.minutes is None else args.minutes * 60)
    report(pairs, shipped_features(pairs), load_signal(file, len(pairs)))


if __name__ == "__main__":
    main()
