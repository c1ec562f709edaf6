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

**The card rule** (issue 37). A card states the claim it validates in the metric's own words (``claim``) and says
what it was measured on: the replies (``replies``: real replies of the kind the metric scores, constructed ones,
or a mix; the models that wrote them, with counts), the languages (``languages``: n and the figure per
language), who labelled them by which written rule (``labelling``), the model-only and combined figures of a judge
that combines a rule and a model (``model_only``, ``combined``), and the adversarial constructs it is known to fail
(``known_failures``, each with a figure on a small labelled set built for it). :func:`assess` makes a number
reportable only when the card's replies are real, written by at least two models, the card covers the language(s)
in question and the figure clears the bar; constructed pairs may add a discrimination check, never make a card
reportable alone. A language the card does not cover shows as ``no card for zh`` (or en). Cards issued before the
rule load as they are and assess as screens (they do not say what they were measured on).
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
from pydantic import BaseModel, Field, ValidationError, model_validator

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


ReplyKind = Literal["real", "constructed", "mixed"]
MIN_MODELS = 2
"""A reportable card's real replies come from at least this many different models."""
MIN_PER_CLASS = 10
"""A binary card's figure clears the bar only on at least this many labelled items of each class (in each language
asked): a balanced accuracy from 2 positives says next to nothing about the judge's sensitivity."""


class Replies(BaseModel):
    """What a card's labelled items are: real replies (written by models, with the count each model wrote; or real
    texts people wrote for another purpose, such as lawyers' answers), constructed ones (written or built for
    knowgap or a benchmark: templates, references, hand-written or edited texts), or a mix of both. Only replies
    written by models are of the kind a metric scores: people's texts never count towards :data:`MIN_MODELS`."""

    kind: ReplyKind
    models: dict[str, int] = Field(default_factory=dict,
                                   description="The models that wrote the real replies, with how many each wrote.")
    people: dict[str, int] = Field(default_factory=dict,
                                   description="Real texts people wrote for another purpose (not for knowgap or a "
                                               "benchmark), by who wrote them, with counts.")
    constructed: int = Field(default=0, ge=0, description="Items written or built for knowgap or a benchmark.")
    how: str = Field(default="", description="Where the items come from, in a line.")

    @model_validator(mode="after")
    def _consistent(self) -> Replies:
        real = self.real_n
        if self.kind == "real" and (not real or self.constructed):
            raise ValueError("kind 'real' needs models (or people) with counts and no constructed items")
        if self.kind == "constructed" and (real or not self.constructed):
            raise ValueError("kind 'constructed' needs a count of constructed items and no models or people")
        if self.kind == "mixed" and (not real or not self.constructed):
            raise ValueError("kind 'mixed' needs both real items (models or people) and constructed items")
        return self

    @property
    def real_n(self) -> int:
        return sum(self.models.values()) + sum(self.people.values())


class LanguageFigure(BaseModel):
    """A card's items in one language: how many (and how many positives), and the figure on them."""

    n: int = Field(ge=0)
    positives: int | None = None
    figure: Estimate | None = Field(default=None, description="Balanced accuracy (or the card's main figure) on the "
                                                              "items in this language; None when not measured apart.")


class Labelling(BaseModel):
    """Who labelled a card's items, by which written rule, and whether the rule came before the judge ran."""

    rule: str = Field(description="Where the written labelling rule is (a path in the repository), or what it is.")
    by: str = Field(description="Who labelled: people or models, which, how many, how independently.")
    before_judge: bool | None = Field(default=None, description="True when the labels were set (by a rule "
                                                                "committed first) before the judge ran on the items.")


class KnownFailure(BaseModel):
    """An adversarial construct the judge is known to fail, with its figure on a small labelled set built for it."""

    name: str = Field(description="The construct, e.g. 'an unfaithful summary made of verbatim sentences of the "
                                  "document'.")
    labelled_set: str = Field(description="The labelled set built for it (a path in the repository).")
    n: int = Field(ge=0)
    figure: Estimate
    measure: str = Field(description="What the figure is, e.g. 'pick accuracy: the faithful summary scored higher'.")
    languages: dict[str, LanguageFigure] = Field(default_factory=dict)
    measured: str = Field(default_factory=lambda: date.today().isoformat())
    notes: str = ""


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
    # the card rule (issue 37): every field None or empty in a card issued before it
    claim: str | None = Field(default=None, description="The claim the card validates, in the words of the metric "
                                                        "it stands beside.")
    replies: Replies | None = Field(default=None, description="What the labelled items are and who wrote them.")
    languages: dict[str, LanguageFigure] | None = Field(
        default=None, description="The items per language (zh, en) with the figure on each; None: not recorded.")
    labelling: Labelling | None = None
    model_only: Estimate | None = Field(default=None, description="A judge combining a rule and a model: the "
                                                                  "model's figure alone.")
    combined: Estimate | None = Field(default=None, description="A judge combining a rule and a model: the figure "
                                                                "of the rule and the model together (what runs).")
    known_failures: list[KnownFailure] = Field(default_factory=list)
    issued: str | None = Field(default=None, description="When this card was issued, if after it was measured "
                                                         "(a re-issue of the same measurement); None: when measured.")

    @property
    def key(self) -> str:
        return card_key(self.judge, self.version, self.judge_model)

    def covers(self, language: str) -> bool:
        """Whether the card holds items in ``language``."""
        found = (self.languages or {}).get(language)
        return found is not None and found.n > 0


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


def language_figures(languages: Sequence[str], verdicts: Sequence[bool | None],
                     labels: Sequence[bool]) -> dict[str, LanguageFigure]:
    """Per language (``languages[i]`` is item i's): n, positives and the balanced accuracy on its items (None
    when its items hold one class only)."""
    if not len(languages) == len(verdicts) == len(labels):
        raise ValueError(f"{len(languages)} languages for {len(verdicts)} verdicts and {len(labels)} labels")
    out: dict[str, LanguageFigure] = {}
    for language in sorted(set(languages)):
        members = [i for i, lang in enumerate(languages) if lang == language]
        c, _ = confusion_of([verdicts[i] for i in members], [labels[i] for i in members])
        out[language] = LanguageFigure(n=c.n, positives=c.tp + c.fn,
                                       figure=binary_measures(c)["balanced_accuracy"])
    return out


def replies_of(writers: Sequence[str | None], how: str = "") -> Replies:
    """The :class:`Replies` of items written by ``writers[i]`` (a model spec) or None (constructed for knowgap)."""
    models: dict[str, int] = {}
    for writer in writers:
        if writer is not None:
            models[writer] = models.get(writer, 0) + 1
    constructed = sum(w is None for w in writers)
    kind: ReplyKind = "mixed" if models and constructed else "real" if models else "constructed"
    return Replies(kind=kind, models=dict(sorted(models.items())), constructed=constructed, how=how)


def binary_card(judge: str, version: str, verdicts: Sequence[bool | None], labels: Sequence[bool], *,
                positive: str, dataset: str, dataset_sha256: str, seconds: float | None = None,
                judge_model: str | None = None, method: str = "", notes: str = "",
                extra: dict[str, Estimate | float | str] | None = None, claim: str | None = None,
                item_languages: Sequence[str] | None = None, writers: Sequence[str | None] | None = None,
                replies_how: str = "", labelling: Labelling | None = None,
                known_failures: Sequence[KnownFailure] = ()) -> ValidityCard:
    """A card from a judge's verdicts (``None`` = could not be parsed) and the reference labels. The card rule's
    fields: ``claim``; ``item_languages[i]`` and ``writers[i]`` (a model spec, or None for an item constructed
    for knowgap) of each item, from which the card's ``languages`` and ``replies`` are counted; ``labelling``;
    ``known_failures``."""
    c, failures = confusion_of(verdicts, labels)
    measures = binary_measures(c)
    if writers is not None and len(writers) != len(labels):
        raise ValueError(f"{len(writers)} writers for {len(labels)} labels")
    return ValidityCard(judge=judge, version=version, judge_model=judge_model, positive=positive, dataset=dataset,
                        dataset_sha256=dataset_sha256, n=c.n, confusion=c, parse_failures=failures,
                        seconds_per_item=None if seconds is None or not c.n else seconds / c.n, method=method,
                        notes=notes, extra=extra or {}, balanced_accuracy=measures["balanced_accuracy"],
                        agreement=measures["agreement"], kappa=measures["kappa"],
                        sensitivity=measures["sensitivity"], specificity=measures["specificity"], claim=claim,
                        languages=None if item_languages is None else language_figures(item_languages, verdicts,
                                                                                       labels),
                        replies=None if writers is None else replies_of(writers, replies_how), labelling=labelling,
                        known_failures=list(known_failures))


def group_measures(groups: Sequence[str], verdicts: Sequence[bool | None],
                   labels: Sequence[bool]) -> dict[str, Estimate | float]:
    """A card's ``extra`` entries per group (``groups[i]`` is item i's: a model, a language, ``MODEL_LANG``...):
    ``n_GROUP``, ``positives_GROUP`` and each of balanced accuracy, sensitivity and specificity its items allow
    (``MEASURE_GROUP``)."""
    if not len(groups) == len(verdicts) == len(labels):
        raise ValueError(f"{len(groups)} groups for {len(verdicts)} verdicts and {len(labels)} labels")
    out: dict[str, Estimate | float] = {}
    for group in sorted(set(groups)):
        members = [i for i, g in enumerate(groups) if g == group]
        c, _ = confusion_of([verdicts[i] for i in members], [labels[i] for i in members])
        out[f"n_{group}"] = float(len(members))
        out[f"positives_{group}"] = float(c.tp + c.fn)
        for measure, value in binary_measures(c).items():
            if measure in ("balanced_accuracy", "sensitivity", "specificity") and value.value is not None:
                out[f"{measure}_{group}"] = value
    return out


def earlier_card_extra(judge: str, version: str, judge_model: str | None, dataset: str, source: str, *,
                       prefix: str) -> dict[str, Estimate | float | str]:
    """The figures of this judge version's latest card measured on ``dataset`` (shipped or superseded) with the same
    judge model, as ``PREFIX_*`` entries of a new card's ``extra`` (``PREFIX_source`` says where they come from):
    a separate source, kept apart and never pooled. None when there is no such card."""
    found = [c for c in (*shipped_cards(), *cards_in(SUPERSEDED_DIR))
             if (c.judge, c.version, c.judge_model, c.dataset) == (judge, version, judge_model, dataset)]
    if not found:
        return {}
    card = max(found, key=lambda c: (c.measured, c.issued or ""))
    out: dict[str, Estimate | float | str] = {
        f"{prefix}_source": f"{source}; measured {card.measured} ({card.method}); its figures are kept apart from "
                            "this card's: another annotator and writer, not pooled",
        f"{prefix}_n": float(card.n)}
    if card.confusion is not None:
        out[f"{prefix}_positives"] = float(card.confusion.tp + card.confusion.fn)
    for measure in ("balanced_accuracy", "sensitivity", "specificity"):
        value = getattr(card, measure)
        if value is not None:
            out[f"{prefix}_{measure}"] = value
    return out


# --- what a card means for a reported number ------------------------------------------------------------------

Status = Literal["reportable", "screen", "computed"]


class Assessment(BaseModel):
    """Whether a metric may be reported, given the card of the judge that produced it."""

    status: Status
    reason: str
    card: ValidityCard | None = None


def _share(value: float) -> str:
    return f"{value:.2f}"


def uncovered(card: ValidityCard, languages: Iterable[str]) -> list[str]:
    """The ``languages`` the card holds no items in (all of them when it does not record its languages)."""
    return [lang for lang in dict.fromkeys(languages) if not card.covers(lang)]


def no_card_text(card: ValidityCard, missing: Sequence[str]) -> str:
    """``no card for zh: ...`` naming the languages the card does hold."""
    held = sorted(lang for lang, f in (card.languages or {}).items() if f.n > 0)
    where = (f"its card ({card.dataset}) holds {'/'.join(held)} items only" if held else
             f"its card ({card.dataset}) does not record the languages it was measured on")
    return f"no card for {'/'.join(missing)}: {where}"


def _figure(card: ValidityCard, languages: Sequence[str]) -> tuple[float | None, str]:
    """The figure that must clear the bar and where it comes from: the lowest per-language figure of
    ``languages`` the card measured apart (``; its zh items, n=45``; None, saying so, for a language whose items
    hold one class only), else the card's balanced accuracy (``""``)."""
    ba = card.balanced_accuracy.value if card.balanced_accuracy else None
    worst: tuple[float, str] | None = None
    for lang in languages:
        found = (card.languages or {}).get(lang)
        if found is None or found.figure is None:  # not measured apart: the card's own figure stands for it
            continue
        if found.figure.value is None:
            return None, f"no balanced accuracy on its {lang} items (they hold one class only)"
        if worst is None or found.figure.value < worst[0]:
            worst = (found.figure.value, f"; its {lang} items, n={found.n}")
    return worst if worst is not None else (ba, "")


def rule_problems(card: ValidityCard) -> list[str]:
    """Why the card's measurement cannot make a number reportable whatever its figure: the replies it was measured
    on are not real ones of at least two models, or it does not say what they were."""
    replies = card.replies
    if replies is None:
        return ["the card does not say which replies it was measured on (issued before the card rule)"]
    if replies.kind == "constructed":
        return [f"measured on constructed items ({replies.constructed}), not on real replies: constructed items "
                "never make a card reportable alone"]
    problems = []
    if replies.kind == "mixed":
        problems.append(f"{replies.constructed} of its {replies.constructed + replies.real_n} items are constructed, "
                        "not real replies")
    if len(replies.models) < MIN_MODELS:
        who = (f"one model ({next(iter(replies.models))})" if replies.models else "no model")
        people = f" and people ({', '.join(replies.people)})" if replies.people else ""
        problems.append(f"its real replies come from {who}{people}; the rule asks for replies of at least "
                        f"{MIN_MODELS} models")
    return problems


def thin_classes(card: ValidityCard, languages: Sequence[str]) -> list[str]:
    """Why a binary card's figure is too thin to clear the bar: fewer than :data:`MIN_PER_CLASS` labelled positives
    or negatives in a language of ``languages`` (the card's per-language counts), or, with no language asked, in the
    whole card (its confusion counts). A card that records no class counts (a pairwise rubric card) is not checked."""
    counts: list[tuple[str, int, int]] = []
    if languages:
        for lang in languages:
            found = (card.languages or {}).get(lang)
            if found is not None and found.positives is not None:
                counts.append((f"its {lang} items", found.positives, found.n - found.positives))
    elif card.confusion is not None and card.confusion.n:
        c = card.confusion
        counts.append(("its items", c.tp + c.fn, c.fp + c.tn))
    return [f"{where} hold {pos} positive(s) and {neg} negative(s): a figure on fewer than {MIN_PER_CLASS} of "
            "either class cannot clear the bar" for where, pos, neg in counts if min(pos, neg) < MIN_PER_CLASS]


def _combined_note(card: ValidityCard) -> str:
    if card.model_only is None or card.model_only.value is None:
        return ""
    combined = card.combined or card.balanced_accuracy
    both = f", combined {_share(combined.value)}" if combined is not None and combined.value is not None else ""
    return f" (model alone {_share(card.model_only.value)}{both})"


def assess(card: ValidityCard | None, *, judged: bool = True, languages: Sequence[str] | None = None) -> Assessment:
    """``computed`` for a metric no judge decided (an exact rule on structured output); ``screen`` when the judge
    has no card, the card does not cover one of ``languages`` (the run's: ``no card for zh``), its replies are not
    real ones of at least two models (or it does not say), its figure is below the bar, or that figure rests on
    fewer than :data:`MIN_PER_CLASS` items of a class (:func:`thin_classes`); else ``reportable``.
    ``languages`` None: no language is checked (the card's own are named in the reason)."""
    if not judged:
        return Assessment(status="computed", reason="computed by an exact rule, no judgement")
    if card is None:
        return Assessment(status="screen", reason="the judge has no validity card: its accuracy is unmeasured")
    wanted = list(dict.fromkeys(languages or ()))
    if missing := uncovered(card, wanted):
        return Assessment(status="screen", card=card, reason=no_card_text(card, missing))
    ba, where = _figure(card, wanted)
    if ba is None:
        return Assessment(status="screen", card=card,
                          reason=f"the judge's card ({card.dataset}) has {where or 'no balanced accuracy'}")
    note = _combined_note(card)
    held = sorted(lang for lang, f in (card.languages or {}).items() if f.n > 0)
    scope = f"n={card.n}" + (where or (f", {'/'.join(held)}" if held and not wanted else ""))
    figure = f"judge balanced accuracy {ba:.2f}"
    problems = rule_problems(card) + thin_classes(card, wanted)
    if ba < REPORTABLE_BALANCED_ACCURACY:
        problems.insert(0, f"{figure} < {REPORTABLE_BALANCED_ACCURACY:.2f} on {card.dataset} ({scope}){note}")
    elif problems:
        problems[0] = f"{problems[0]} ({figure} on {card.dataset}, {scope}){note}"
    if problems:
        return Assessment(status="screen", card=card, reason="; ".join(problems))
    return Assessment(status="reportable", card=card,
                      reason=f"{figure} on {card.dataset} ({scope}), real replies of "
                             f"{len(card.replies.models) if card.replies else 0} models{note}")


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
    """Write ``card`` to ``folder`` (default: KNOWGAP_HOME/judge_cards) under its key; returns the path. A card
    measured here (the default folder) on a shipped card's labelled set (same judge, judge model and sha256) takes
    the set's facts the validator does not know from it (:func:`inherit_rule_fields`)."""
    if folder is None:
        for shipped in (*shipped_cards(), *cards_in(SUPERSEDED_DIR)):
            if (shipped.judge, shipped.judge_model) == (card.judge, card.judge_model):
                card = inherit_rule_fields(card, shipped)
    folder = folder or measured_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{card.key}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(card.model_dump_json(indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def ship_card(card: ValidityCard, folder: Path = SHIPPED_DIR) -> tuple[Path, list[Path]]:
    """Write ``card`` among the shipped cards and move the shipped cards of the same judge (and judge model) at
    other versions to ``folder/superseded``; a card of the same version already shipped is a re-issue of that
    version's card (:func:`reissue_card`): the earlier issue moves to ``folder/superseded`` too, kept under a
    name no look-up finds. What the card rule asks that a validator does not know (the claim, the replies, who
    labelled, the languages' counts) is taken from the card shipped before when it was measured on the same
    labelled set (:func:`inherit_rule_fields`). Returns the card's path and the moved cards' new paths."""
    moved = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        old = None if REISSUED in path.name else _read(path)
        if old is None or (old.judge, old.judge_model) != (card.judge, card.judge_model):
            continue
        card = inherit_rule_fields(card, old)
        if old.version != card.version:
            target = folder / SUPERSEDED_DIR.name / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            path.replace(target)
            moved.append(target)
    path, earlier = reissue_card(card, folder)
    return path, moved + earlier


def reissue_card(card: ValidityCard, folder: Path) -> tuple[Path, list[Path]]:
    """Write ``card`` to ``folder`` under its key; a different card already there under that key (an earlier issue
    of the same version's card) is kept in the superseded folder (``folder/superseded``, or ``folder`` itself when
    it is one) as ``KEY~issued-DATE.json``, a name no look-up finds. Returns the path and the moved issue's."""
    current = folder / f"{card.key}.json"
    moved = []
    if current.is_file() and (old := _read(current)) is not None and old != card:
        keep = folder if folder.name == SUPERSEDED_DIR.name else folder / SUPERSEDED_DIR.name
        keep.mkdir(parents=True, exist_ok=True)
        target = keep / reissued_name(old, keep)
        current.replace(target)
        moved.append(target)
    return save_card(card, folder), moved


REISSUED = "~issued-"
"""In a superseded card's file name: an earlier issue of a card whose version is still current."""


def reissued_name(card: ValidityCard, folder: Path) -> str:
    """``KEY~issued-DATE.json`` (``-2``, ``-3``... when taken) for an earlier issue of ``card``'s version."""
    base = f"{card.key}{REISSUED}{card.issued or card.measured}"
    name, k = f"{base}.json", 2
    while (folder / name).exists():
        name, k = f"{base}-{k}.json", k + 1
    return name


def inherit_rule_fields(card: ValidityCard, previous: ValidityCard) -> ValidityCard:
    """``card`` with the card rule's facts of its labelled set that it lacks taken from ``previous`` (the card of
    the same judge shipped before), when both were measured on the same set (same sha256): the claim, the
    replies, who labelled, the languages' counts (their figures only for the same version and confusion counts),
    and the known failures of the same version. Nothing else is ever taken."""
    if previous.dataset_sha256 != card.dataset_sha256:
        return card
    same = (previous.version, previous.confusion) == (card.version, card.confusion)
    update: dict[str, object] = {}
    if card.claim is None and previous.claim is not None:
        update["claim"] = previous.claim
    if card.replies is None and previous.replies is not None:
        update["replies"] = previous.replies
    if card.labelling is None and previous.labelling is not None:
        update["labelling"] = previous.labelling
    if card.languages is None and previous.languages is not None:
        update["languages"] = previous.languages if same else {
            lang: LanguageFigure(n=f.n, positives=f.positives) for lang, f in previous.languages.items()}
    if not card.known_failures and previous.known_failures and previous.version == card.version:
        update["known_failures"] = previous.known_failures
    return card.model_copy(update=update) if update else card


def cards_in(folder: Path) -> list[ValidityCard]:
    """Every readable card in ``folder`` (none when it does not exist)."""
    return [c for p in sorted(folder.glob("*.json")) if (c := _read(p)) is not None] if folder.is_dir() else []


def shipped_cards() -> list[ValidityCard]:
    return cards_in(SHIPPED_DIR)


def rule_summary(card: ValidityCard) -> list[str]:
    """What the card says it validates and what it was measured on, each a short part: the claim, the replies (real
    or constructed; the models), the languages with their figures, who labelled by which rule, the model-only and
    combined figures, the known failures with their figures."""
    parts = []
    if card.claim:
        parts.append(f"claim: {card.claim}")
    r = card.replies
    if r is None:
        parts.append("replies: not recorded (issued before the card rule)")
    else:
        models = ", ".join(f"{m} {k}" for m, k in r.models.items())
        made = f"{r.constructed} constructed" if r.constructed else ""
        parts.append(f"replies: {r.kind} ({'; '.join(p for p in (models, made) if p)})")
    if card.languages is not None:
        parts.append("languages: " + ", ".join(
            f"{lang} n={f.n}" + (f" {fmt(f.figure)}" if f.figure is not None and f.figure.value is not None else "")
            for lang, f in card.languages.items()))
    if card.labelling is not None:
        parts.append(f"labelled by {card.labelling.by} (rule: {card.labelling.rule})")
    if card.model_only is not None:
        parts.append(f"model alone {fmt(card.model_only)}, combined {fmt(card.combined or card.balanced_accuracy)}")
    for failure in card.known_failures:
        parts.append(f"known failure: {failure.name}: {failure.measure} {fmt(failure.figure)} "
                     f"(n={failure.n}, {failure.labelled_set})")
    return parts


def fmt(e: Estimate | None, digits: int = 2) -> str:
    """``0.85 [0.80, 0.89]``, or ``n/a``."""
    if e is None or e.value is None or (isinstance(e.value, float) and math.isnan(e.value)):
        return "n/a"
    if e.ci_low is None or e.ci_high is None:
        return f"{e.value:.{digits}f}"
    return f"{e.value:.{digits}f} [{e.ci_low:.{digits}f}, {e.ci_high:.{digits}f}]"
