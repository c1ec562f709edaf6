"""Which judge decided each metric of a run, that judge's validity card, and what the card means for the number.

The run's manifest names each judged metric's judge (catalogue name, version, judge model; a breakdown
``NAME:KEY=VALUE`` inherits ``NAME``'s judge) and the computed ones. For every metric this module finds the
card (:func:`knowgap.judges.cards.find_card`) and assesses it: **reportable** (a card at or above the bar),
**screen** (no card, or below balanced accuracy 0.80: for screening, not for reporting), **computed** (no
judge), or **unknown** (a run recorded before knowgap named judges, or a suite that does not say). For a
proportion of the judge's positive (or negative) verdicts whose card has confusion counts, the Rogan-Gladen
corrected rate with an interval that carries the card's own uncertainty stands next to the raw rate.

Reports build their judgements with :meth:`Judgements.for_run`, which checks each metric's languages (the run's,
or the one a ``lang=`` breakdown names: :mod:`knowgap.report.run_languages`) against the card's: a metric on a
language its card holds no items in is a SCREEN, ``no card for zh``, with no corrected rate (the card's
sensitivity and specificity were measured on another language). ``Judgements(manifest)`` alone checks no language.

Every report (the CLI table, report.md, report.html, the web app) shows these judgements; none computes its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from knowgap.engine.records import Manifest, MetricJudge, MetricValue
from knowgap.judges.cards import (
    Assessment,
    Estimate,
    ValidityCard,
    assess,
    corrected,
    find_card,
    fmt,
    rule_summary,
    uncovered,
)
from knowgap.report.run_languages import Languages, metric_languages, run_languages

Status = Literal["reportable", "screen", "computed", "unknown"]
BADGES: dict[Status, str] = {"reportable": "reportable", "screen": "SCREEN", "computed": "computed",
                             "unknown": "judge unknown"}
OLD_RUN = "this run was recorded before knowgap named each metric's judge"
UNDECLARED = "the suite does not say whether a judge decides this metric"


class MetricJudgement(BaseModel):
    """One metric's judge, card and status, as every report shows them."""

    metric: str
    status: Status
    reason: str
    judge: MetricJudge | None = None
    card: ValidityCard | None = None
    corrected: Estimate | None = None
    """The Rogan-Gladen corrected rate (proportion metrics counting the judge's verdicts, card with counts)."""
    languages: Languages | None = None
    """The languages the metric is on, as checked against the card (None: not checked)."""

    @property
    def badge(self) -> str:
        return BADGES[self.status]

    @property
    def judge_label(self) -> str:
        """``name version`` (and ``on MODEL`` for a model-backed judge); empty when no judge decided it."""
        if self.judge is None:
            return ""
        model = f" on {self.judge.judge_model}" if self.judge.judge_model else ""
        return f"{self.judge.judge} {self.judge.version}{model}"

    @property
    def accuracy(self) -> str:
        """``BA 0.91 [0.88, 0.94]`` from the card, or empty."""
        if self.card is None or self.card.balanced_accuracy is None:
            return ""
        return f"BA {fmt(self.card.balanced_accuracy)}"

    def cell(self, *, reason: bool = True) -> str:
        """One line for a table: the judge, its accuracy, and SCREEN (with the reason) where it is one."""
        if self.status == "computed":
            return "computed"
        if self.status == "unknown":
            return f"judge unknown: {self.reason}" if reason else "judge unknown"
        head = " · ".join(p for p in (self.judge_label, self.accuracy) if p)
        if self.status == "screen":
            return f"SCREEN: {head} ({self.reason})" if reason else f"SCREEN: {head}"
        return head

    def corrected_text(self) -> str:
        """``12.3% [4.0%, 21.5%]`` or empty."""
        e = self.corrected
        if e is None or e.value is None:
            return ""
        if e.ci_low is None or e.ci_high is None:
            return f"{e.value:.1%}"
        return f"{e.value:.1%} [{e.ci_low:.1%}, {e.ci_high:.1%}]"


def judge_of(manifest: Manifest, name: str) -> MetricJudge | None:
    """The judge the run recorded for metric ``name`` (a breakdown by its base name); None: none recorded."""
    judges = manifest.metric_judges or {}
    return judges.get(name) or judges.get(name.split(":", 1)[0])


def _corrected(metric: MetricValue, judge: MetricJudge, card: ValidityCard | None) -> Estimate | None:
    if card is None or judge.counts is None or metric.kind != "proportion" or metric.value is None or not metric.n:
        return None
    n: float = metric.n if metric.n_eff is None else metric.n_eff  # a clustered rate counts its effective n
    k = metric.value * n if metric.n_eff is not None else round(metric.value * n)
    if judge.counts == "positive":
        return corrected(k, n, card)
    flipped = corrected(n - k, n, card)  # a rate of the judge's negative verdicts: 1 - the positive rate
    if flipped is None or flipped.value is None:
        return None
    return Estimate(value=1 - flipped.value, ci_low=None if flipped.ci_high is None else 1 - flipped.ci_high,
                    ci_high=None if flipped.ci_low is None else 1 - flipped.ci_low)


class Judgements:
    """The judgements of one run's metrics, each judge's card looked up once. ``languages``: the run's (each
    metric's own when a ``lang=`` breakdown names it), checked against every card; None checks none."""

    def __init__(self, manifest: Manifest, languages: Languages | None = None) -> None:
        self.manifest = manifest
        self.languages = languages
        self._cards: dict[tuple[str, str, str | None], ValidityCard | None] = {}

    @classmethod
    def for_run(cls, manifest: Manifest) -> Judgements:
        """The judgements every report shows: the run's languages (its planned cases') checked against the cards."""
        return cls(manifest, run_languages(manifest))

    def assessment(self, judge: MetricJudge, languages: Languages | None = None) -> Assessment:
        """What ``judge``'s card means for a number on ``languages`` (default: the run's)."""
        return assess(self.card(judge), languages=self.languages if languages is None else languages)

    def card(self, judge: MetricJudge) -> ValidityCard | None:
        key = (judge.judge, judge.version, judge.judge_model)
        if key not in self._cards:
            self._cards[key] = find_card(*key)
        return self._cards[key]

    def of(self, metric: MetricValue) -> MetricJudgement:
        m = self.manifest
        judge = judge_of(m, metric.name)
        if judge is not None:
            card = self.card(judge)
            langs = metric_languages(metric, self.languages)
            a = assess(card, languages=langs)
            foreign = card is not None and langs is not None and bool(uncovered(card, langs))
            return MetricJudgement(metric=metric.name, status=a.status, reason=a.reason, judge=judge, card=card,
                                   corrected=None if foreign else _corrected(metric, judge, card), languages=langs)
        if m.metric_judges is None:
            return MetricJudgement(metric=metric.name, status="unknown", reason=OLD_RUN)
        if m.computed_metrics is not None and metric.name.split(":", 1)[0] in m.computed_metrics:
            return MetricJudgement(metric=metric.name, status="computed", reason=assess(None, judged=False).reason)
        return MetricJudgement(metric=metric.name, status="unknown", reason=UNDECLARED)

    def all(self, metrics: Sequence[MetricValue]) -> list[MetricJudgement]:
        return [self.of(m) for m in metrics]

    def judges(self) -> list[tuple[MetricJudge, ValidityCard | None, list[str]]]:
        """Each distinct judge of the run with its card and the metrics it decides, in the manifest's order."""
        seen: dict[tuple[str, str, str | None], tuple[MetricJudge, list[str]]] = {}
        for name, judge in (self.manifest.metric_judges or {}).items():
            key = (judge.judge, judge.version, judge.judge_model)
            seen.setdefault(key, (judge, []))[1].append(name)
        return [(judge, self.card(judge), names) for judge, names in seen.values()]


def judgements(manifest: Manifest, metrics: Sequence[MetricValue]) -> list[MetricJudgement]:
    """Every metric's judgement, in the order of ``metrics``, with the run's languages checked
    (:meth:`Judgements.for_run`)."""
    return Judgements.for_run(manifest).all(metrics)


def screen_reasons(found: Sequence[MetricJudgement]) -> dict[str, str]:
    """Why each SCREEN (or judge-unknown) metric is one, by metric name, in first-seen order."""
    return {j.metric: j.reason for j in found if j.status in ("screen", "unknown")}


def card_summary(card: ValidityCard) -> str:
    """One line: the labelled set, n, balanced accuracy, kappa, sensitivity, specificity (95% CIs), the date, and
    what the card rule asks a card to say (:func:`rule_summary`)."""
    parts = [f"{card.dataset} (n={card.n})", f"BA {fmt(card.balanced_accuracy)}", f"kappa {fmt(card.kappa)}",
             f"sensitivity {fmt(card.sensitivity)}", f"specificity {fmt(card.specificity)}"]
    if card.parse_failures:
        parts.append(f"{card.parse_failures} parse failures counted wrong")
    parts.append(f"positive: {card.positive}")
    parts += rule_summary(card)
    parts.append(f"measured {card.measured}")
    return " · ".join(parts)
