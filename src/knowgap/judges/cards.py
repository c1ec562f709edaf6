"""Validity cards: how well a judge agrees with human (or reference) labels, measured on a named labelled set.

A :class:`ValidityCard` records one measurement of one judge version (and, for a model-backed judge, one
judge model): the labelled set and its sha256, n, the confusion counts against the judge's positive class,
balanced accuracy / agreement / Cohen's kappa with 95% CIs, sensitivity and specificity, seconds per item,
parse failures and the date. :func:`binary_card` builds one from verdicts and labels.

A judge's verdict that could not be parsed (``None``) never leaves the denominator: it counts as a wrong
verdict (a missed positive, or a false positive), and ``parse_failures`` says how many there were.

:func:`assess` decides whether a number from a judge may be reported: a judge with no card, or a card below
balanced accuracy :data:`REPORTABLE_BALANCED_ACCURACY`, makes the number a **screen** (for screening, not
for reporting). :func:`corrected` corrects an observed rate for the judge's known sensitivity and
specificity (Rogan-Gladen, :func:`knowgap.stats.corrected_rate`), with an interval that also carries the card's
own uncertainty.

Cards ship with knowgap in ``judges/cards/*.json``; ``knowgap judge validate`` writes measured ones to
``KNOWGAP_HOME/judge_cards/``, which :func:`find_card` prefers. The cards of a judge's earlier versions ship in
``judges/cards/superseded/``: a run made with such a version is still reported with the card of the judge it
used (not as a judge without a card), while ``knowgap judges`` lists the current versions only.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Iterable, Sequence
from datetime import date
from importlib.resources import files
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from knowgap.errors import first_validation_error
from knowgap.stats import corrected_rate as _corrected_rate
from knowgap.stats import interval_of_draws, percentile_interval, wilson

log = logging.getLogger("knowgap.judges")

REPORTABLE_BALANCED_ACCURACY = 0.80
"""A judge below this balanced accuracy (or without a card) produces screens, not reportable numbers."""
SHIPPED_DIR = Path(str(files("knowgap.judges") / "cards"))
SUPERSEDED_DIR = SHIPPED_DIR / "superseded"
"""The shipped cards of judge versions knowgap no longer runs, for the reports of runs that did."""
_BOOTSTRAP_REPS = 2000


class Estimate(BaseModel):
    """A measured quantity with its 95% interval (None when it cannot be computed, e.g. no positives)."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None


class Confusion(BaseModel):
    """Counts against the judge's positive class; a parse failure is counted as a wrong verdict."""

    tp: int = 0
    fn: int = 0
    fp: int = 0
    tn: int = 0

    @property
    def n(self) -> int:
        return self.tp + self.fn + self.fp + self.tn


class ValidityCard(BaseModel):
    """One measurement of one judge version on one labelled set."""

    judge: str = Field(description="The judge's name in the catalogue (knowgap judges).")
    version: str = Field(description="The judge version measured; a card never applies to another version.")
    judge_model: str | None = Field(default=None, description="The judge model spec, for model-backed judges.")
    positive: str = Field(description="What the judge's positive verdict means, e.g. 'abstained'.")
    dataset: str = Field(description="The labelled set, e.g. 'policybench/responses_dev.jsonl'.")
    dataset_sha256: str
    n: int
    confusion: Confusion | None = None
    balanced_accuracy: Estimate | None = None
    agreement: Estimate | None = None
    kappa: Estimate | None = None
    sensitivity: Estimate | None = None
    specificity: Estimate | None = None
    parse_failures: int = 0
    seconds_per_item: float | None = None
    measured: str = Field(default_factory=lambda: date.today().isoformat())
    method: str = Field(default="", description="How it was measured: sample, cross-validation, limit.")
    extra: dict[str, Estimate | float | str] = Field(default_factory=dict,
                                                    description="Other measures (exact tier agreement, ...).")
    notes: str = ""

    @property
    def key(self) -> str:
        return card_key(self.judge, self.version, self.judge_model)


def card_key(judge: str, version: str, judge_model: str | None = None) -> str:
    """The file stem a card is stored under."""
    raw = f"{judge}@{version}" + (f"@{judge_model}" if judge_model else "")
    return "".join(c if c.isalnum() or c in "@._-" else "_" for c in raw)


def sha256_files(paths: Iterable[str | Path]) -> str:
    """One sha256 over the bytes of ``paths`` in the given order (a labelled set may span several files)."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()


def _rate(k: int, n: int) -> Estimate:
    if n <= 0:
        return Estimate(value=None)
    lo, hi = wilson(k, n)
    return Estimate(value=k / n, ci_low=lo, ci_high=hi)


def _kappa(tp: float, fn: float, fp: float, tn: float) -> float | None:
    n = tp + fn + fp + tn
    if n <= 0:
        return None
    po = (tp + tn) / n
    pe = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / n ** 2
    return None if pe >= 1 else (po - pe) / (1 - pe)


def confusion_of(verdicts: Sequence[bool | None], labels: Sequence[bool]) -> tuple[Confusion, int]:
    """The confusion counts and the number of parse failures (``None`` verdicts, counted as wrong)."""
    if len(verdicts) != len(labels):
        raise ValueError(f"{len(verdicts)} verdicts for {len(labels)} labels")
    c = Confusion()
    failures = 0
    for verdict, label in zip(verdicts, labels, strict=True):
        if verdict is None:
            failures += 1
            verdict = not label
        if label:
            c.tp += verdict
            c.fn += not verdict
        else:
            c.fp += verdict
            c.tn += not verdict
    return c, failures


def binary_measures(c: Confusion, *, seed: int = 0) -> dict[str, Estimate]:
    """Balanced accuracy, agreement, kappa, sensitivity and specificity with 95% CIs. Balanced accuracy and
    kappa use seeded draws of the two class recalls from their Jeffreys Beta posteriors (positives and negatives
    separately), so a perfect score on a small set still gets an honest interval."""
    pos, neg = c.tp + c.fn, c.fp + c.tn
    out = {"agreement": _rate(c.tp + c.tn, c.n), "sensitivity": _rate(c.tp, pos), "specificity": _rate(c.tn, neg)}
    kappa = _kappa(c.tp, c.fn, c.fp, c.tn)
    if not pos or not neg:
        out["balanced_accuracy"] = Estimate(value=None)
        out["kappa"] = Estimate(value=kappa)
        return out
    rng = np.random.default_rng(seed)
    # class recalls drawn from Jeffreys Beta posteriors, not resampled at the observed rate: a judge right on all
    # of 14 positives gets an interval below 1, not the degenerate [1, 1] a plug-in bootstrap gives
    sens = rng.beta(c.tp + 0.5, c.fn + 0.5, _BOOTSTRAP_REPS)
    spec = rng.beta(c.tn + 0.5, c.fp + 0.5, _BOOTSTRAP_REPS)
    ba = (sens + spec) / 2
    drawn = (_kappa(a * pos, (1 - a) * pos, (1 - b) * neg, b * neg) for a, b in zip(sens, spec, strict=True))
    kappas = [k for k in drawn if k is not None]
    ba_low, ba_high = percentile_interval(ba.tolist())
    out["balanced_accuracy"] = Estimate(value=(c.tp / pos + c.tn / neg) / 2, ci_low=ba_low, ci_high=ba_high)
    kappa_low, kappa_high = interval_of_draws(kappas, _BOOTSTRAP_REPS) or (None, None)
    out["kappa"] = Estimate(value=kappa, ci_low=kappa_low, ci_high=kappa_high)
    return out


def binary_card(judge: str, version: str, verdicts: Sequence[bool | None], labels: Sequence[bool], *,
                positive: str, dataset: str, dataset_sha256: str, seconds: float | None = None,
                judge_model: str | None = None, method: str = "", notes: str = "",
                extra: dict[str, Estimate | float | str] | None = None) -> ValidityCard:
    """A card from a judge's verdicts (``None`` = could not be parsed) and the reference labels."""
    c, failures = confusion_of(verdicts, labels)
    measures = binary_measures(c)
    return ValidityCard(judge=judge, version=version, judge_model=judge_model, positive=positive, dataset=dataset,
                        dataset_sha256=dataset_sha256, n=c.n, confusion=c, parse_failures=failures,
                        seconds_per_item=None if seconds is None or not c.n else seconds / c.n, method=method,
                        notes=notes, extra=extra or {}, balanced_accuracy=measures["balanced_accuracy"],
                        agreement=measures["agreement"], kappa=measures["kappa"],
                        sensitivity=measures["sensitivity"], specificity=measures["specificity"])


# --- what a card means for a reported number ------------------------------------------------------------------

Status = Literal["reportable", "screen", "computed"]


class Assessment(BaseModel):
    """Whether a metric may be reported, given the card of the judge that produced it."""

    status: Status
    reason: str
    card: ValidityCard | None = None


def assess(card: ValidityCard | None, *, judged: bool = True) -> Assessment:
    """``computed`` for a metric no judge decided (an exact rule on structured output); ``screen`` when the
    judge has no card or a balanced accuracy below the bar; else ``reportable``."""
    if not judged:
        return Assessment(status="computed", reason="computed by an exact rule, no judgement")
    if card is None:
        return Assessment(status="screen", reason="the judge has no validity card: its accuracy is unmeasured")
    ba = card.balanced_accuracy.value if card.balanced_accuracy else None
    if ba is None:
        return Assessment(status="screen", card=card,
                          reason=f"the judge's card ({card.dataset}) has no balanced accuracy")
    if ba < REPORTABLE_BALANCED_ACCURACY:
        return Assessment(status="screen", card=card,
                          reason=f"judge balanced accuracy {ba:.2f} < {REPORTABLE_BALANCED_ACCURACY:.2f} "
                                 f"on {card.dataset} (n={card.n})")
    return Assessment(status="reportable", card=card,
                      reason=f"judge balanced accuracy {ba:.2f} on {card.dataset} (n={card.n})")


def corrected(k: float, n: float, card: ValidityCard, *, reps: int = 4000, seed: int = 0) -> Estimate | None:
    """The rate corrected for the judge's sensitivity and specificity by the card's confusion counts
    (Rogan-Gladen, clipped to [0, 1]; :func:`knowgap.stats.corrected_rate`), with a 95% interval from a seeded
    Monte Carlo that also draws the card's sensitivity and specificity, so the judge's own uncertainty widens it.
    None when the card has no confusion counts or the judge is no better than chance (sensitivity + specificity
    <= 1). For a clustered rate, ``k`` and ``n`` are effective counts (p * n_eff and n_eff), fractional."""
    c = card.confusion
    if c is None:
        return None
    found = _corrected_rate(k, n, c.tp, c.fn, c.fp, c.tn, reps=reps, seed=seed)
    if found is None:
        return None
    point, ci = found
    return Estimate(value=point) if ci is None else Estimate(value=point, ci_low=ci[0], ci_high=ci[1])


# --- where cards live ----------------------------------------------------------------------------------------


def measured_dir() -> Path:
    from knowgap.paths import home

    return home() / "judge_cards"


def _read(path: Path) -> ValidityCard | None:
    """The card in ``path``; None, with a warning naming the file and the field, when it cannot be read (the
    judge then counts as having no card there, so its metrics show as screens, never silently as reportable)."""
    try:
        return ValidityCard.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        where, message = first_validation_error(exc)
        log.warning("ignoring the judge card %s: %s: %s", path, where or "(the file)", message)
    except (OSError, ValueError) as exc:
        log.warning("ignoring the judge card %s: %s", path, exc)
    return None


def find_card(judge: str, version: str, judge_model: str | None = None) -> ValidityCard | None:
    """The card for this judge version (and judge model): one measured here (``knowgap judge validate``) first,
    else the one shipped with knowgap (of a current version, or of a superseded one for an older run); None when
    none exists."""
    stem = card_key(judge, version, judge_model)
    for folder in (measured_dir(), SHIPPED_DIR, SUPERSEDED_DIR):
        path = folder / f"{stem}.json"
        if path.is_file() and (card := _read(path)) is not None:
            return card
    return None


def save_card(card: ValidityCard, folder: Path | None = None) -> Path:
    """Write ``card`` to ``folder`` (default: KNOWGAP_HOME/judge_cards) under its key; returns the path."""
    folder = folder or measured_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{card.key}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(card.model_dump_json(indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def ship_card(card: ValidityCard, folder: Path = SHIPPED_DIR) -> tuple[Path, list[Path]]:
    """Write ``card`` among the shipped cards and move the shipped cards of the same judge (and judge model) at
    other versions to ``folder/superseded``; returns the card's path and the moved cards' new paths."""
    moved = []
    for old in cards_in(folder):
        if (old.judge, old.judge_model) == (card.judge, card.judge_model) and old.version != card.version:
            target = folder / SUPERSEDED_DIR.name / f"{old.key}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            (folder / f"{old.key}.json").replace(target)
            moved.append(target)
    return save_card(card, folder), moved


def cards_in(folder: Path) -> list[ValidityCard]:
    """Every readable card in ``folder`` (none when it does not exist)."""
    return [c for p in sorted(folder.glob("*.json")) if (c := _read(p)) is not None] if folder.is_dir() else []


def shipped_cards() -> list[ValidityCard]:
    return cards_in(SHIPPED_DIR)


def fmt(e: Estimate | None, digits: int = 2) -> str:
    """``0.85 [0.80, 0.89]``, or ``n/a``."""
    if e is None or e.value is None or (isinstance(e.value, float) and math.isnan(e.value)):
        return "n/a"
    if e.ci_low is None or e.ci_high is None:
        return f"{e.value:.{digits}f}"
    return f"{e.value:.{digits}f} [{e.ci_low:.{digits}f}, {e.ci_high:.{digits}f}]"
