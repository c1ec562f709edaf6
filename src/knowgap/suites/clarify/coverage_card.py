"""The validity card of the ``element-coverage`` judge, measured on the hand-labelled calibration pairs.

The shipped thresholds (:data:`~knowgap.suites.clarify.coverage.THRESHOLDS`) were fitted on these very pairs, so
their accuracy there is in-sample. The card's main numbers are held out instead: leave-one-element-out
cross-validation (every pair of an element is judged with a threshold fitted, per language, by
:func:`~knowgap.suites.clarify.coverage.best_threshold` on the other elements' pairs). The shipped thresholds'
in-sample balanced accuracy is kept in ``extra`` for comparison.

The card's ``extra`` also holds the judge's **precision** (of the pairs it calls covered, the share that truly
match: Wilson 95% CI, held out and in-sample, and held out per language). Element recall counts every such call,
so this is how far it can over-credit: the reports show it beside ``element_recall``
(:mod:`knowgap.suites.clarify.recall_bound`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from knowgap.judges.cards import (
    Estimate,
    ValidityCard,
    binary_card,
    binary_measures,
    confusion_of,
    sha256_files,
)
from knowgap.judges.judge import Judge
from knowgap.judges.validation import stratified_sample
from knowgap.stats import wilson
from knowgap.suites.clarify import coverage
from knowgap.suites.clarify.coverage import best_threshold, load_pairs, pair_scores
from knowgap.text import detect_lang
from knowgap.text.embed import default_embedder

DATASET = "knowgap clarify calibration_pairs.jsonl"


def _shipped(lang: str) -> float:
    return coverage.THRESHOLDS.get(lang, coverage.THRESHOLDS["en"])


def precision(name: str, verdicts: Sequence[bool | None], labels: Sequence[bool]) -> dict[str, Estimate | float]:
    """``{name: estimate, name_n: n}``: of the n items judged positive, the share labelled positive, with its
    Wilson 95% interval (no value when none was judged positive)."""
    called = [label for verdict, label in zip(verdicts, labels, strict=True) if verdict]
    if not called:
        return {name: Estimate(value=None), f"{name}_n": 0.0}
    low, high = wilson(sum(called), len(called))
    return {name: Estimate(value=sum(called) / len(called), ci_low=low, ci_high=high), f"{name}_n": float(len(called))}


def validate_element_coverage(data_dir: Path | None = None, limit: int | None = None, judge_model: str | None = None,
                              progress: Callable[[int, int], None] | None = None) -> ValidityCard:
    """Held-out (leave-one-element-out) agreement of the coverage threshold rule with the hand labels.
    ``data_dir`` and ``judge_model`` are not used: the pairs ship with knowgap and the judge is offline."""
    pairs = load_pairs(coverage.CALIBRATION_FILE)
    labels = [p.match for p in pairs]
    picked = stratified_sample(pairs, labels, limit)
    pairs, labels = [pairs[i] for i in picked], [labels[i] for i in picked]
    start = time.perf_counter()
    scores = pair_scores(pairs, default_embedder())
    langs = [detect_lang(p.element) for p in pairs]
    elements = list(dict.fromkeys(p.element for p in pairs))
    held_out: list[bool | None] = [None] * len(pairs)
    for done, element in enumerate(elements, start=1):
        test = [i for i, p in enumerate(pairs) if p.element == element]
        lang = langs[test[0]]
        train = [i for i, p in enumerate(pairs) if p.element != element and langs[i] == lang]
        if len({labels[i] for i in train}) < 2:  # no threshold can be fitted: the language's shipped one
            threshold = _shipped(lang)
        else:
            threshold = best_threshold([scores[i] for i in train], [labels[i] for i in train])
        for i in test:
            held_out[i] = scores[i] >= threshold
        if progress:
            progress(done, len(elements))
    seconds = time.perf_counter() - start
    shipped = [s >= _shipped(lang) for s, lang in zip(scores, langs, strict=True)]
    in_sample = binary_measures(confusion_of(shipped, labels)[0])["balanced_accuracy"]
    extra: dict[str, Estimate | float | str] = {"in_sample_balanced_accuracy_shipped_thresholds": in_sample}
    extra.update(precision("precision_held_out", held_out, labels))
    extra.update(precision("precision_in_sample_shipped_thresholds", shipped, labels))
    for lang in sorted(set(langs)):
        members = [i for i, x in enumerate(langs) if x == lang]
        extra.update(precision(f"precision_held_out_{lang}", [held_out[i] for i in members],
                               [labels[i] for i in members]))
    return binary_card("element-coverage", coverage.VERSION, held_out, labels,
                       positive="the text covers the element",
                       dataset=DATASET, dataset_sha256=sha256_files([coverage.CALIBRATION_FILE]), seconds=seconds,
                       method=f"leave-one-element-out cross-validation ({len(elements)} elements, {len(pairs)} "
                              "pairs): each element judged with thresholds fitted on the others",
                       extra=extra,
                       notes="the shipped thresholds were fitted on these pairs; the held-out numbers are the "
                             "honest estimate")


ELEMENT_COVERAGE = Judge(
    name="element-coverage", kind="offline", decides="does a response sentence name or ask about a missing element?",
    current=coverage.VERSION, positive="the text covers the element",
    labelled_set="clarify calibration_pairs.jsonl (82 hand-labelled element/sentence pairs, shipped)",
    validator=validate_element_coverage, needs_data=False)
