"""The validity card of the ``element-coverage`` judge, measured on the hand-labelled calibration pairs.

The shipped thresholds (:data:`~knowgap.suites.clarify.coverage.THRESHOLDS`) were fitted on these very pairs, so
their accuracy there is in-sample. The card's main numbers are held out instead: leave-one-element-out
cross-validation (every pair of an element is judged with a threshold fitted, per language, by
:func:`~knowgap.suites.clarify.coverage.best_threshold` on the other elements' pairs). The shipped thresholds'
in-sample balanced accuracy is kept in ``extra`` for comparison.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from knowgap.judges.cards import ValidityCard, binary_card, binary_measures, confusion_of, sha256_files
from knowgap.judges.validation import stratified_sample
from knowgap.suites.clarify import coverage
from knowgap.suites.clarify.coverage import best_threshold, load_pairs, pair_scores
from knowgap.text import detect_lang
from knowgap.text.embed import default_embedder

DATASET = "knowgap clarify calibration_pairs.jsonl"


def _shipped(lang: str) -> float:
    return coverage.THRESHOLDS.get(lang, coverage.THRESHOLDS["en"])


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
    return binary_card("element-coverage", coverage.VERSION, held_out, labels,
                       positive="the text covers the element",
                       dataset=DATASET, dataset_sha256=sha256_files([coverage.CALIBRATION_FILE]), seconds=seconds,
                       method=f"leave-one-element-out cross-validation ({len(elements)} elements, {len(pairs)} "
                              "pairs): each element judged with thresholds fitted on the others",
                       extra={"in_sample_balanced_accuracy_shipped_thresholds": in_sample},
                       notes="the shipped thresholds were fitted on these pairs; the held-out numbers are the "
                             "honest estimate")
