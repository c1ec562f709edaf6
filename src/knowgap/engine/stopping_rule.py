"""The records of a run that stops when its gate is decided (``knowgap run --until decided``): the rule, stored in
the run's configuration (so ``knowgap resume`` keeps it), and what happened, stored in the manifest (each gated
metric's confidence sequence over the cases, where the run stopped and why). The logic is
:mod:`knowgap.engine.stopping`; the statistics :mod:`knowgap.stats.sequential`."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

UNTIL = re.compile(r"^(decided|all|width=(0?\.\d+|1(\.0*)?))$")
StopReason = Literal["decided", "narrow", "every case ran", "max calls", "max cost"]
Decision = Literal["pass", "fail", "undecided"]


class JudgeCorrection(BaseModel):
    """The judge's validity card a threshold on the judge-corrected rate (``use: corrected``) is decided with: found
    when the run starts (the card the reports would show beside the metric) and kept, with the run's rule, on
    resume."""

    model_config = ConfigDict(extra="forbid")

    card: str
    """The card's key: ``judge@version[@judge model]``."""
    dataset: str
    n: int
    measured: str
    counts: Literal["positive", "negative"]
    """The metric is a rate of the judge's positive (or negative) verdicts."""
    tp: int
    fn: int
    fp: int
    tn: int

    def says(self) -> str:
        return f"{self.card} ({self.dataset}, n={self.n}, measured {self.measured})"


class GatedMetric(BaseModel):
    """One threshold the rule decides: ``METRIC[GROUP] OP VALUE`` on the metric's value (every group without one),
    or on its judge-corrected rate (``use: corrected``, with the judge's card)."""

    model_config = ConfigDict(extra="forbid")

    metric: str
    group: str | None = None
    op: Literal[">=", "<=", ">", "<", "==", "!="]
    value: float
    text: str = ""
    """The threshold as written (the gate's description)."""
    use: Literal["value", "corrected"] = Field(default="value", exclude_if=lambda v: v == "value")
    """What it decides: the metric's value, or its Rogan-Gladen rate corrected by the judge's card."""
    correction: JudgeCorrection | None = Field(default=None, exclude_if=lambda v: v is None)
    """``use: corrected``: the card, found when the run starts."""

    @property
    def label(self) -> str:
        group = f"[{self.group}]" if self.group else ""
        corrected = " (corrected)" if self.use == "corrected" else ""
        return self.text or f"{self.metric}{group}{corrected} {self.op} {self.value:g}"


class ComparedMetric(BaseModel):
    """A metric compared with a baseline run (``--against RUN --compare METRIC[GROUP]``): the sign of the paired
    difference (this run minus the baseline, unit by unit) decides it, or its being within the rule's margin."""

    model_config = ConfigDict(extra="forbid")

    metric: str
    group: str | None = None
    lower_is_better: bool = False
    """Which sign is worse: a lower value (False) or a higher one (a rate of bad behaviour)."""

    @property
    def label(self) -> str:
        return f"{self.metric}[{self.group}]" if self.group else self.metric


class StoppingRule(BaseModel):
    """When a run may stop before every case has run, and how its cases are ordered."""

    model_config = ConfigDict(extra="forbid")

    until: str = Field(default="decided",
                       description="decided: stop when every gated metric's confidence sequence decides its "
                                   "threshold; width=W: when every sequence is at most W wide; all: run every case "
                                   "(in the same seeded order).")
    thresholds: list[GatedMetric] = Field(default_factory=list)
    alpha: float = Field(default=0.05, gt=0, lt=1,
                         description="The level: a threshold's or a comparison's decision is wrong with "
                                     "probability at most alpha (each end of its sequence one-sided at 1 - alpha); "
                                     "under width=W each sequence holds the full run's value at every stop with "
                                     "probability 1 - alpha.")
    order_seed: int = Field(default=0, description="Seed of the random order the cases run in.")
    max_calls: int | None = Field(default=None, ge=1,
                                  description="Stop once this many model calls (not served from the cache) were "
                                              "made, over every resume.")
    max_cost: float | None = Field(default=None, gt=0,
                                   description="Stop once the calls cost this many USD (the run's prices).")
    against: str | None = Field(default=None, description="A finished run of the same plan (its folder) to compare "
                                                          "with, unit by unit.")
    compare: list[ComparedMetric] = Field(default_factory=list)
    margin: float = Field(default=0.0, ge=0, lt=1,
                          description="A difference decided to lie within [-margin, margin] decides a comparison "
                                      "too (0: only its sign does).")

    @field_validator("until")
    @classmethod
    def _until(cls, v: str) -> str:
        v = v.strip()
        if not UNTIL.match(v):
            raise ValueError(f"{v!r}: expected decided, all, or width=W with W in (0, 1], e.g. width=0.05")
        return v

    @property
    def width(self) -> float | None:
        return float(self.until.split("=", 1)[1]) if self.until.startswith("width=") else None

    def describe(self) -> str:
        budget = "".join([f", at most {self.max_calls} calls" if self.max_calls else "",
                          f", at most ${self.max_cost:g}" if self.max_cost else ""])
        return f"until {self.until} at alpha {self.alpha:g}, cases in random order (seed {self.order_seed}){budget}"


class SequencePoint(BaseModel):
    """A sequence after a batch: the units (cases) run so far, its interval and the running value."""

    units: int
    low: float
    high: float
    estimate: float | None = None


class CorrectedBy(BaseModel):
    """How a corrected sequence was made: the observed rate's sequence at ``alpha_observed`` and the card's box
    (Wilson intervals of its sensitivity and specificity, each at ``1 - alpha_card / 2``), ``alpha_observed +
    alpha_card`` being the rule's alpha; the corrected range is the Rogan-Gladen transform's over that box."""

    card: JudgeCorrection
    alpha_observed: float
    alpha_card: float
    sensitivity: tuple[float, float]
    specificity: tuple[float, float]
    observed_low: float | None = None
    observed_high: float | None = None
    observed: float | None = None
    """The observed (judged) rate so far."""

    def says(self) -> str:
        return (f"corrected by the judge's card {self.card.says()}: sensitivity [{self.sensitivity[0]:.3f}, "
                f"{self.sensitivity[1]:.3f}], specificity [{self.specificity[0]:.3f}, {self.specificity[1]:.3f}] "
                f"(Wilson, each at {1 - self.alpha_card / 2:g}), the observed rate's sequence at alpha "
                f"{self.alpha_observed:g}")


class MetricSequence(BaseModel):
    """One gated (or reported) metric of one group: its sequence over the run's units and its decision."""

    metric: str
    group: str
    kind: str = "proportion"
    threshold: str | None = None
    """The threshold it decides (its text); None under ``until width=W`` alone."""
    decision: Decision = "undecided"
    sequential: bool = True
    """False when it cannot be decided before every case ran (a statistic that is no pooled mean of its trials, a
    mean outside [0, 1]); ``why`` says which."""
    why: str = ""
    comparison: Literal["higher", "lower", "within margin"] | None = None
    """For a difference from the baseline (kind ``difference``): what its sequence decided, when it did."""
    low: float | None = None
    high: float | None = None
    estimate: float | None = None
    path: list[SequencePoint] = Field(default_factory=list)
    corrected: CorrectedBy | None = Field(default=None, exclude_if=lambda v: v is None)
    """A sequence of the judge-corrected rate (``use: corrected``): the card and the confidence statements it
    combines; ``low``, ``high`` and ``estimate`` are then corrected values."""


class StopRecord(BaseModel):
    """What the rule did, in the manifest: the rule, the level, the order's seed, where the run stopped and why."""

    rule: StoppingRule
    bets: Literal["predmix", "agrapa"] = "predmix"
    """The bets the sequences used (knowgap.stats.sequential): agrapa (aimed at the running mean) for decisions,
    predmix under ``--until width=W`` (a record without the field: predmix, as every run before it)."""
    sides: Literal["two", "each"] = "two"
    """each: each end of every sequence is a one-sided bound at 1 - alpha (a threshold's or a comparison's decision
    is wrong with probability at most alpha); two: the interval holds the value with probability 1 - alpha."""
    unit: str = "case (cases built on one base case, such as extract's variants of a review, run together)"
    units_total: int = 0
    units_run: int = 0
    trials_run: int = 0
    reason: StopReason | None = None
    calls: int = 0
    """Model calls made (not served from the cache), over every resume."""
    cost_usd: float | None = None
    sequences: list[MetricSequence] = Field(default_factory=list)

    @property
    def stopped_early(self) -> bool:
        return self.units_run < self.units_total

    def says(self) -> str:
        """One line: where it stopped and why."""
        why = {"decided": "every gated metric decided", "narrow": f"every sequence at most {self.rule.width} wide",
               "every case ran": "every case ran", "max calls": f"--max-calls {self.rule.max_calls} reached",
               "max cost": f"--max-cost {self.rule.max_cost} reached"}.get(self.reason or "", "not stopped yet")
        return (f"stopped after {self.units_run} of {self.units_total} cases ({self.trials_run} trials, "
                f"{self.calls} model calls): {why}; {self.rule.describe()}; {self.level()}")

    def level(self) -> str:
        """What the sequences' intervals hold, in words."""
        alpha = self.rule.alpha
        if self.sides == "each":
            return (f"each end of a sequence one-sided at {1 - alpha:g} ({self.bets} bets): a decision is wrong "
                    f"with probability at most {alpha:g}")
        return f"each sequence a two-sided {1 - alpha:g} interval ({self.bets} bets)"
