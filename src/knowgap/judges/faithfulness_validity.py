"""Measure the offline faithfulness checker against labelled benchmarks: its validity card and its training.

The shipped card is measured on real summaries of the extract suite's reviews instead (issue 37, the card rule:
:func:`validate_faithfulness_real`, the catalogue's validator, and :mod:`knowgap.judges.extract_summary_cards`); the
benchmarks are measured with ``--data`` and their figures are kept in that card's ``extra``.

:func:`validate_faithfulness` scores SummEdits + AggreFact (read from ``data_dir``, see
:mod:`knowgap.judges.faithfulness_data`) with the shipped checker's features, and measures the shipped
combiner *recipe* (its feature list and regularisation) by cross-validation grouped by source document:
the weights are refitted on the other folds, so every verdict is held out and no document is in both the
training and the scoring part. The card's extras hold the pick-the-faithful accuracy on the near-verbatim
pairs (:func:`knowgap.judges.faithfulness_data.near_verbatim_pairs`) with a 95% CI from a bootstrap over
documents, and the rule-based score's held-out balanced accuracy for comparison.

:func:`train` fits the combiner on every pair and returns it with the training data's sha256 (this is how
``judges/data/faithfulness_combiner.json`` is made; see docs/judges.md).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from knowgap.judges.cards import Estimate, ValidityCard, binary_card, sha256_files
from knowgap.judges.faithfulness import JUDGE_NAME, VERSION, Analysis, OfflineFaithfulness
from knowgap.judges.faithfulness_data import (
    CalibrationPair,
    benchmark_files,
    group_of,
    load_benchmarks,
    near_verbatim_pairs,
)
from knowgap.judges.faithfulness_model import Combiner, fit
from knowgap.judges.judge import Judge, Progress
from knowgap.judges.validation import data_folder
from knowgap.stats import mean_interval

DATASET = "faithfulness/summedits+aggrefact"
FOLDS = 5
SHIPPED_FEATURES = ("weak_claims", "copy_novel")
"""The shipped combiner's inputs: the share of claims with weak support, and novel words weighted by how much of
the summary is copied (a near-verbatim summary with new words in it). Chosen by the held-out numbers of the
feature sets tried (docs/judges.md)."""


def sample_pairs(pairs: Sequence[CalibrationPair], limit: int | None, seed: int = 0) -> list[CalibrationPair]:
    """All pairs, or whole documents drawn at random per (benchmark, label of their first pair) until about
    ``limit`` pairs, so the sample stays stratified and keeps every summary of a drawn document."""
    if not limit or limit >= len(pairs):
        return list(pairs)
    groups: dict[str, list[CalibrationPair]] = {}
    for pair in pairs:
        groups.setdefault(group_of(pair), []).append(pair)
    strata: dict[tuple[str, bool], list[str]] = {}
    for key, members in groups.items():
        strata.setdefault((members[0].benchmark, any(not p.faithful for p in members)), []).append(key)
    rng = random.Random(seed)
    for keys in strata.values():
        rng.shuffle(keys)
    chosen: list[CalibrationPair] = []
    order = [keys for _, keys in sorted(strata.items())]
    while len(chosen) < limit and any(order):
        for keys in order:
            if keys and len(chosen) < limit:
                chosen += groups[keys.pop()]
    return chosen


def grouped_folds(groups: Sequence[str], folds: int = FOLDS, seed: int = 0) -> np.ndarray:
    """The fold of each row: documents shuffled with ``seed`` and dealt to folds in turn."""
    unique = sorted(set(groups))
    random.Random(seed).shuffle(unique)
    fold_of = {g: i % folds for i, g in enumerate(unique)}
    return np.array([fold_of[g] for g in groups])


def held_out_probabilities(x: np.ndarray, y: np.ndarray, groups: Sequence[str], recipe: Combiner, *,
                           folds: int = FOLDS, seed: int = 0) -> np.ndarray:
    """Every row's probability from a combiner fitted (same features and L2) on the other folds."""
    fold = grouped_folds(groups, folds, seed)
    out = np.zeros(len(y))
    for k in range(folds):
        test = fold == k
        if not test.any():
            continue
        model = fit(x[~test], y[~test], recipe.features, l2=recipe.l2)
        out[test] = model.probabilities(x[test])
    return out


def pick_accuracy(scores: Sequence[float], pairs: Sequence[tuple[int, int]], groups: Sequence[str], *,
                  reps: int = 2000, seed: int = 0) -> Estimate:
    """How often the faithful summary of a pair scores higher (a tie counts half), with a 95% CI from a
    bootstrap that resamples documents (pairs of one document are not independent); where every document has
    the same share (a perfect picker), not a point but Wilson's interval over the documents
    (:func:`knowgap.stats.mean_interval`)."""
    if not pairs:
        return Estimate(value=None)
    wins = [1.0 if scores[f] > scores[u] else 0.5 if scores[f] == scores[u] else 0.0 for f, u in pairs]
    ci = mean_interval(wins, [groups[f] for f, _ in pairs], reps=reps, seed=seed)
    return Estimate(value=float(np.mean(wins)), ci_low=ci[0] if ci else None, ci_high=ci[1] if ci else None)


def featurize(pairs: Sequence[CalibrationPair], checker: OfflineFaithfulness,
              progress: Callable[[int, int], None] | None = None) -> list[dict[str, float] | None]:
    """Each pair's features (None for an empty, refusal or other-language summary, which the judge does not
    score)."""
    out: list[dict[str, float] | None] = []
    for i, pair in enumerate(pairs):
        analysis = checker.analyse(pair.source, pair.summary)
        out.append(analysis.features if isinstance(analysis, Analysis) else None)
        if progress:
            progress(i + 1, len(pairs))
    return out


def train(data_dir: Path, *, features: Sequence[str] = SHIPPED_FEATURES, l2: float = 1.0) -> Combiner:
    """The combiner fitted on every pair of the benchmarks in ``data_dir``; write it to
    :data:`knowgap.judges.faithfulness_model.SHIPPED` to ship it (a new version)."""
    placeholder = fit(np.zeros((2, len(features))), np.array([0.0, 1.0]), features, l2=l2)
    checker = OfflineFaithfulness(combiner=placeholder)  # computes the features the combiner names
    pairs = load_benchmarks(data_dir)
    rows = featurize(pairs, checker)
    kept = [(r, p.faithful) for r, p in zip(rows, pairs, strict=True) if r is not None]
    x = np.array([[r[f] for f in features] for r, _ in kept])
    y = np.array([label for _, label in kept], dtype=float)
    return fit(x, y, features, l2=l2, training_data=DATASET,
               training_sha256=sha256_files(benchmark_files(data_dir)))


def validate_faithfulness(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                          progress: Progress | None = None) -> ValidityCard:
    """The validity card of the shipped offline faithfulness judge, measured on ``data_dir`` (a folder with
    ``summedits/`` and ``aggrefact_errortypes/``) by grouped cross-validation; ``limit``: about this many
    pairs, whole documents drawn stratified by benchmark (seed 0). An offline judge: ``judge_model`` does not
    apply; ``progress`` is not called."""
    data_dir = data_folder(data_dir)
    checker = OfflineFaithfulness()
    recipe = checker.combiner
    pairs = sample_pairs(load_benchmarks(data_dir), limit)
    started = time.perf_counter()
    rows = featurize(pairs, checker)
    seconds = time.perf_counter() - started
    scored = [i for i, r in enumerate(rows) if r is not None]
    x = recipe.matrix([rows[i] or {} for i in scored])
    y = np.array([pairs[i].faithful for i in scored], dtype=float)
    groups = [group_of(p) for p in pairs]
    probs = np.zeros(len(pairs))
    probs[scored] = held_out_probabilities(x, y, [groups[i] for i in scored], recipe)
    verdicts: list[bool | None] = [None] * len(pairs)
    for i in scored:
        verdicts[i] = bool(probs[i] >= checker.threshold)
    labels = [p.faithful for p in pairs]
    hard = near_verbatim_pairs(pairs)
    both = near_verbatim_pairs(pairs, both=True)
    extra: dict[str, Estimate | float | str] = {
        "near_verbatim_pick_accuracy": pick_accuracy(list(probs), hard, groups),
        "near_verbatim_pairs": float(len(hard)),
        "near_verbatim_documents": float(len({groups[f] for f, _ in hard})),
        "both_near_verbatim_pick_accuracy": pick_accuracy(list(probs), both, groups),
        "both_near_verbatim_pairs": float(len(both)),
        "documents": float(len(set(groups))),
    }
    return binary_card(JUDGE_NAME, checker.version, verdicts, labels, positive="faithful", dataset=DATASET,
                       dataset_sha256=sha256_files(benchmark_files(data_dir)), seconds=seconds,
                       method=f"{FOLDS}-fold cross-validation grouped by source document (seed 0): the combiner "
                              f"(same features, L2 {recipe.l2}) refitted on the other folds; "
                              + (f"sample of {len(pairs)} pairs (whole documents, stratified by benchmark)"
                                 if limit else "all pairs"),
                       notes="empty, refusal or other-language summaries count as wrong verdicts (parse_failures); "
                             "near-verbatim: same document, one faithful and one unfaithful summary whose word "
                             "tokens are >= 90% in the source; pick accuracy CI: bootstrap over documents",
                       extra=extra)


def validate_faithfulness_real(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                               progress: Progress | None = None) -> ValidityCard:
    """The shipped checker on the labelled real summaries of the extract suite's normal reviews (every item of
    ``judges/data/labelled/extract_summaries.jsonl``: its weights were fitted on the benchmarks, so every verdict is
    held out; :func:`knowgap.judges.extract_summary_cards.faithfulness_offline_card`). With ``data_dir``, the
    cross-validation on SummEdits + AggreFact (:func:`validate_faithfulness`). ``limit``: a seeded sample stratified
    by language and label. An offline judge: ``judge_model`` does not apply; ``progress`` is not called."""
    if data_dir is not None:
        return validate_faithfulness(data_dir, limit, judge_model, progress)
    from knowgap.judges.extract_summary_cards import faithfulness_offline_card

    return faithfulness_offline_card(limit=limit)[0]


FAITHFULNESS = Judge(
    name=JUDGE_NAME, kind="offline", decides="is a summary faithful to its source? (offline checker)", current=VERSION,
    positive="faithful",
    labelled_set="judges/data/labelled/extract_summaries.jsonl (real summaries of local:qwen2.5-0.5b and "
                 "local:qwen2.5-1.5b of the extract suite's normal reviews, zh and en; rule claims-1, label "
                 "unfaithful); with --data, SummEdits + AggreFact (faithfulness/)",
    validator=validate_faithfulness_real, needs_data=False)
