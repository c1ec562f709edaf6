"""What the validators of every offline detector share: :func:`offline_card` runs an offline detector over a
labelled set, timed, and builds its card (with sensitivity and specificity per group when asked);
:func:`sample_method` says which part of the set it measured; :func:`labelled_set_card` is the whole of a plain
validator: draw the seeded label-balanced sample of a labelled file's items, run the detector on each, build the
card. The judges package's own validators (:mod:`knowgap.judges.detector_validation`) and the suites' own
(``suites/partial/leak_card.py``...) use them."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from knowgap.judges.cards import (
    Estimate,
    KnownFailure,
    Labelling,
    ValidityCard,
    binary_card,
    binary_measures,
    confusion_of,
    sha256_files,
)
from knowgap.judges.labelled_sets import Progress, stratified

Row = TypeVar("Row")


def offline_card(judge: str, version: str, positive: str, dataset: str, sha: str, labels: Sequence[bool],
                 decide: Callable[[int], bool], progress: Progress | None, *, method: str, notes: str,
                 groups: Sequence[str] | None = None, claim: str | None = None,
                 item_languages: Sequence[str] | None = None, writers: Sequence[str | None] | None = None,
                 replies_how: str = "", labelling: Labelling | None = None,
                 known_failures: Sequence[KnownFailure] = ()) -> ValidityCard:
    """Run an offline detector (``decide(i)``) over every item, timed, and build its card; with ``groups`` (one
    name per item), the card's ``extra`` also holds sensitivity and specificity within each group. The card
    rule's facts of the labelled set (``claim``, each item's language and writer, ``labelling``) go to
    :func:`~knowgap.judges.cards.binary_card` as given: a validator that states them issues a whole card on a
    changed set, where a shipped card's facts are carried over only to a card of the same set (same sha256); so are
    the judge's ``known_failures``, measured again by the validator."""
    start = time.perf_counter()
    verdicts: list[bool | None] = []
    for i in range(len(labels)):
        verdicts.append(decide(i))
        if progress:
            progress(i + 1, len(labels))
    seconds = time.perf_counter() - start
    extra: dict[str, Estimate | float | str] = {}
    for group in sorted(set(groups or ())):
        members = [i for i, g in enumerate(groups or ()) if g == group]
        confusion, _ = confusion_of([verdicts[i] for i in members], [labels[i] for i in members])
        measures = binary_measures(confusion)
        for measure in ("sensitivity", "specificity"):
            if measures[measure].value is not None:
                extra[f"{measure}_{group}"] = measures[measure]
    return binary_card(judge, version, verdicts, labels, positive=positive, dataset=dataset, dataset_sha256=sha,
                       seconds=seconds, method=method, notes=notes, extra=extra, claim=claim,
                       item_languages=item_languages, writers=writers, replies_how=replies_how, labelling=labelling,
                       known_failures=known_failures)


def sample_method(n_all: int, chosen: Sequence[int], limit: int | None, what: str) -> str:
    if limit is None or len(chosen) >= n_all:
        return f"all {n_all} {what}"
    return f"seeded sample of {len(chosen)} of {n_all} {what}, balanced between the two labels (seed 0)"


def labelled_set_card(judge: str, version: str, positive: str, items: Sequence[Row], path: Path, *,
                      label: Callable[[Row], bool], decide: Callable[[Row], bool], limit: int | None,
                      progress: Progress | None, what: str, notes: str,
                      group: Callable[[Row], str] | None = None) -> ValidityCard:
    """The card of an offline detector (``decide``) on the labelled items read from ``path`` (its name and sha256
    are the card's dataset): the seeded sample of ``limit`` items balanced between the two labels (:func:`stratified`;
    None: all), ``what`` naming them in the card's method, and with ``group`` (a name per item) sensitivity and
    specificity per group in ``extra``."""
    chosen = stratified([label(it) for it in items], limit)
    rows = [items[i] for i in chosen]
    return offline_card(judge, version, positive, path.name, sha256_files([path]), [label(r) for r in rows],
                        lambda i: decide(rows[i]), progress, method=sample_method(len(items), chosen, limit, what),
                        groups=None if group is None else [group(r) for r in rows], notes=notes)
