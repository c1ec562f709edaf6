"""Training and measuring the offline factuality judge on labelled answers (PolicyBench dev responses), and its
catalogue validator (:func:`validate_factuality_real`): the shipped weights on the labelled real answers of the
embedded models (``judges/data/labelled/abstain_replies.jsonl``, :mod:`knowgap.judges.abstain_reply_cards`; issue
37's card rule), or, given ``--data``, the cross-validation below.

The training set is ``policybench/responses_dev.jsonl`` of the shared data folder: GPT-4o answers with a
``factuality`` tier (tier_1 / tier_2 / tier_3; ``NA`` rows, the abstentions, are skipped). The same question
appears under several retrieval and prompt configurations, so every split is by ``question_id``, never by row:

- :func:`validate_factuality` runs a 5-fold cross-validation grouped by question (seeded), fitting the
  combiner and its thresholds on four folds and judging the fifth, so every verdict on the card is held out;
- :func:`train_weights` fits the shipped weights on all rows;
- ``python -m knowgap.judges.factuality_validation DATA_DIR`` does both and writes the weights and the card
  into the package (how the shipped files were made).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from knowgap.errors import InputError
from knowgap.judges.cards import Estimate, ValidityCard, binary_card, sha256_files
from knowgap.judges.factuality import (
    JUDGE_NAME,
    POSITIVE,
    TIERS,
    VERSION,
    WEIGHTS_PATH,
    FactualityWeights,
    TrainingSet,
    scores,
)
from knowgap.judges.factuality_features import FEATURES, FEATURES_REVISION, FactualityRow, feature_matrix
from knowgap.judges.judge import Judge, Progress
from knowgap.judges.logistic import fit_logistic
from knowgap.judges.validation import EARLIER_POLICYBENCH, POLICYBENCH_LABELS, REAL_REPLIES, data_folder
from knowgap.stats import wilson
from knowgap.text.embed import Embedder

DATASET = "policybench/responses_dev.jsonl"
FOLDS = 5
SEED = 0
L2 = 1.0


class LabelledRows:
    """The tiered rows of a labelled file: inputs, reference tiers and question ids, in file order."""

    def __init__(self, rows: list[FactualityRow], tiers: list[str], groups: list[str]) -> None:
        self.rows, self.tiers, self.groups = rows, tiers, groups

    def __len__(self) -> int:
        return len(self.rows)


def load_labelled(path: Path, *, limit: int | None = None, seed: int = SEED) -> LabelledRows:
    """Rows of ``path`` with a tier label; with ``limit``, a seeded sample stratified by tier (each tier keeps its
    share, at least one row), in file order. A row without the needed fields is one line naming file, line and
    field."""
    from knowgap.jsonl import read_objects

    fields = ("question_id", "question", "expected_answer", "response", "factuality")
    picked = [row for _, row in read_objects(path, fields) if row["factuality"] in TIERS]
    if limit is not None and limit < len(picked):
        rng = np.random.default_rng(seed)
        by_tier: dict[str, list[int]] = {}
        for i, row in enumerate(picked):
            by_tier.setdefault(row["factuality"], []).append(i)
        keep: list[int] = []
        for members in by_tier.values():
            take = max(1, round(limit * len(members) / len(picked)))
            keep += rng.choice(members, size=min(take, len(members)), replace=False).tolist()
        picked = [picked[i] for i in sorted(keep)]
    return LabelledRows([FactualityRow(str(r["question"]), str(r["expected_answer"]), str(r["response"]))
                         for r in picked],
                        [r["factuality"] for r in picked], [r["question_id"] for r in picked])


def grouped_folds(groups: Sequence[str], folds: int = FOLDS, seed: int = SEED) -> np.ndarray:
    """The fold of each row: the distinct groups, shuffled with ``seed``, dealt round-robin into ``folds``."""
    distinct = sorted(set(groups))
    order = np.random.default_rng(seed).permutation(len(distinct))
    fold_of = {distinct[j]: k % folds for k, j in enumerate(order)}
    return np.array([fold_of[g] for g in groups])


def _best_tier1_threshold(score: np.ndarray, tiers: Sequence[str], acceptable_threshold: float) -> float:
    """The tier_1 cut on the score that gives the most exact tier agreement on the training rows."""
    labels = np.array(tiers)
    candidates = np.unique(np.concatenate([[acceptable_threshold], score[score >= acceptable_threshold], [1.01]]))
    best, best_hits = 1.01, -1
    for cut in candidates:
        predicted = np.where(score < acceptable_threshold, "tier_3", np.where(score >= cut, "tier_1", "tier_2"))
        hits = int((predicted == labels).sum())
        if hits > best_hits:
            best, best_hits = float(cut), hits
    return best


def fit_weights(x: np.ndarray, tiers: Sequence[str], training: TrainingSet, *, l2: float = L2) -> FactualityWeights:
    """The combiner (balanced classes; acceptable at P >= 0.5) and the tier_1 cut, fitted on ``x``."""
    y = np.array([t != "tier_3" for t in tiers], dtype=float)
    model = fit_logistic(x, y, list(FEATURES), l2=l2)
    weights = FactualityWeights(features_revision=FEATURES_REVISION, model=model, acceptable_threshold=0.5,
                                tier1_threshold=1.01, training=training)
    weights.tier1_threshold = _best_tier1_threshold(scores(weights, x), tiers, weights.acceptable_threshold)
    return weights


def _training_set(data: LabelledRows, sha256: str) -> TrainingSet:
    counts = Counter(data.tiers)
    return TrainingSet(dataset=DATASET, sha256=sha256, n=len(data), tiers={t: counts.get(t, 0) for t in TIERS})


def _features(data: LabelledRows, embedder: Embedder | None) -> np.ndarray:
    from knowgap.text.embed import default_embedder

    return feature_matrix(data.rows, embedder or default_embedder())


def cross_validated_tiers(x: np.ndarray, data: LabelledRows, training: TrainingSet, *, folds: int = FOLDS,
                          seed: int = SEED) -> list[str]:
    """Each row's tier from weights fitted on the other folds (grouped by question)."""
    fold = grouped_folds(data.groups, folds, seed)
    out = [""] * len(data)
    for k in range(folds):
        train, test = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
        if not len(test):
            continue
        weights = fit_weights(x[train], [data.tiers[i] for i in train], training)
        for i, score in zip(test, scores(weights, x[test]), strict=True):
            out[i] = weights.tier(float(score))
    return out


def tier_kappa(labels: Sequence[str], predicted: Sequence[str]) -> float | None:
    """Cohen's kappa over the three tiers (unweighted)."""
    n = len(labels)
    if not n:
        return None
    po = sum(a == b for a, b in zip(labels, predicted, strict=True)) / n
    la, pa = Counter(labels), Counter(predicted)
    pe = sum(la[t] * pa[t] for t in TIERS) / n ** 2
    return None if pe >= 1 else (po - pe) / (1 - pe)


def validate_factuality(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                        progress: Progress | None = None, *, embedder: Embedder | None = None) -> ValidityCard:
    """The shipped judge version's card, measured by grouped 5-fold cross-validation on the PolicyBench dev
    answers in ``data_dir`` (the shared data folder); ``limit``: a seeded tier-stratified sample of that many rows
    (cross-validated among themselves, so trained on fewer rows than the shipped weights). An offline judge:
    ``judge_model`` does not apply; ``progress`` is not called (the folds are fitted at once)."""
    path = data_folder(data_dir) / DATASET
    if not path.is_file():
        raise InputError(str(path), "not found (the labelled PolicyBench dev answers)")
    sha = sha256_files([path])
    started = time.perf_counter()
    data = load_labelled(path, limit=limit)
    x = _features(data, embedder)
    return card_from_features(x, data, sha, seconds=time.perf_counter() - started, limit=limit)


def card_from_features(x: np.ndarray, data: LabelledRows, sha256: str, *, seconds: float | None = None,
                       limit: int | None = None) -> ValidityCard:
    """:func:`validate_factuality` once the rows' features are computed."""
    from knowgap.judges.factuality import load_weights

    predicted = cross_validated_tiers(x, data, _training_set(data, sha256))
    exact = sum(a == b for a, b in zip(data.tiers, predicted, strict=True))
    lo, hi = wilson(exact, len(data))
    kappa = tier_kappa(data.tiers, predicted)
    sample = f"a tier-stratified sample of {len(data)} rows (seed {SEED}); " if limit is not None else ""
    return binary_card(
        JUDGE_NAME, load_weights().version(), [p != "tier_3" for p in predicted], [t != "tier_3" for t in data.tiers],
        positive=POSITIVE, dataset=DATASET, dataset_sha256=sha256, seconds=seconds,
        method=f"{sample}{FOLDS}-fold cross-validation grouped by question_id (seed {SEED}): the logistic "
               f"combiner and its tier_1 cut refitted on 4 folds, every verdict on a held-out fold; rows with "
               f"factuality NA skipped",
        extra={"exact_tier_agreement": Estimate(value=exact / len(data), ci_low=lo, ci_high=hi),
               **({"tier_kappa": round(kappa, 4)} if kappa is not None else {}),
               "rows_per_tier": json.dumps(dict(Counter(data.tiers)), sort_keys=True)},
        notes="seconds_per_item includes embedding (e5-small, CPU) and the refits; timed on a shared machine")


def ship(data_dir: Path, *, x: np.ndarray | None = None, embedder: Embedder | None = None
         ) -> tuple[FactualityWeights, ValidityCard]:
    """Fit the weights to ship on every tiered dev row, write them to the package, then measure and return their
    card (``x``: the rows' features, if already computed). How the shipped files were made."""
    path = Path(data_dir) / DATASET
    sha = sha256_files([path])
    data = load_labelled(path)
    started = time.perf_counter()
    seconds = None
    if x is None:
        x = _features(data, embedder)
        seconds = time.perf_counter() - started
    weights = fit_weights(x, data.tiers, _training_set(data, sha))
    WEIGHTS_PATH.write_text(weights.model_dump_json(indent=1) + "\n", encoding="utf-8")
    return weights, card_from_features(x, data, sha, seconds=seconds)


def main(argv: Sequence[str] | None = None) -> None:  # pragma: no cover - how the shipped files were made
    import argparse

    from knowgap.judges.cards import fmt

    parser = argparse.ArgumentParser(
        description="Fit the shipped factuality weights on PolicyBench's dev rows. The shipped card is measured "
                    "apart, on the embedded models' labelled real answers: run `knowgap judge validate factuality "
                    "--ship` afterwards (a new process, which reads the new weights' version).")
    parser.add_argument("data_dir", type=Path, help="the shared data folder (holds policybench/)")
    args = parser.parse_args(argv)
    weights, card = ship(args.data_dir)
    # The PolicyBench cross-validation is in-sample for these weights: it is printed, never shipped as the card
    # (shipping it would put GPT-4o's rows in place of the real-reply card the metric stands beside).
    print(f"{card.version}: PolicyBench cross-validated balanced accuracy {fmt(card.balanced_accuracy)}, "
          f"n={card.n}; written {WEIGHTS_PATH}. Now run: knowgap judge validate factuality --ship")


def validate_factuality_real(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                             progress: Progress | None = None) -> ValidityCard:
    """The shipped offline factuality judge on the labelled real answers of the embedded models (every item of
    ``abstain_replies.jsonl`` labelled answered, unless ``limit``): the weights were fitted on PolicyBench, so every
    verdict is held out. With ``data_dir``, the cross-validation on PolicyBench's GPT-4o rows
    (:func:`validate_factuality`)."""
    if data_dir is not None:
        return validate_factuality(data_dir, limit, judge_model, progress)
    from knowgap.judges.abstain_reply_cards import factuality_offline_card, offline_tiers

    card, _ = factuality_offline_card(lambda records: offline_tiers(records, progress), limit=limit,
                                      earlier=EARLIER_POLICYBENCH)
    return card


FACTUALITY = Judge(
    name=JUDGE_NAME, kind="offline", decides="KnowOrNot tier of an answer against the expected answer",
    current=VERSION, positive=POSITIVE,
    labelled_set=f"{REAL_REPLIES}, label tier (with --data: {POLICYBENCH_LABELS}, label factuality)",
    validator=validate_factuality_real, needs_data=False)


if __name__ == "__main__":  # pragma: no cover
    main()
