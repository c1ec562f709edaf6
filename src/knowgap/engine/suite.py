"""The suite interface: dataset -> trials per configuration -> scores -> metrics with 95% CIs.

The contract between the engine and every suite. A suite is a :class:`Suite` subclass (a folder under
``knowgap/suites/`` for the built-in ones) registered with :func:`knowgap.suites.register`. The engine never
changes for a new suite and imports none: it asks the suite for its cases and configurations, runs
:meth:`Suite.run_trial` for each (case, configuration, repeat), stores what each trial produced, and hands the
stored records back to :meth:`Suite.metrics`.
"""

from __future__ import annotations

import hashlib
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from knowgap.engine.metric_spec import Choice, MetricSpec, computed_names, expanded, metric_names, spec_of
from knowgap.engine.records import CallRecord, MetricValue, ScoreValue, TagValue, TrialRecord, Verdict
from knowgap.engine.suite_data import SuiteData
from knowgap.engine.verdict_calls import VerdictCall, first_target
from knowgap.engine.verdict_tally import Split
from knowgap.engine.verdicts import failed
from knowgap.models.types import ChatRequest, ChatResponse

if TYPE_CHECKING:
    from knowgap.models.base import ChatModel


class ReportSection(BaseModel):
    """Extra content a suite adds to its run's report (see :meth:`Suite.report_sections`).

    ``html`` is inserted as is into the HTML report: escape any text that came from a model or a dataset
    (``html.escape``; :mod:`knowgap.report.svg` has ``esc`` and chart helpers for suites outside knowgap, the
    built-in suites sit below the report layer). ``markdown`` goes into the markdown summary; either may be
    empty.
    """

    title: str
    html: str = ""
    markdown: str = ""


class SuiteOptions(BaseModel):
    """Options every suite takes; a suite subclasses this to add its own (each becomes a CLI flag)."""

    model_config = ConfigDict(extra="forbid")

    sample: int | None = Field(default=None, ge=1,
                               description="Run only N cases, chosen with the run's seed (cases that carry a base_id, "
                                           "extract's adversarial variants of a review, round-robin over their base "
                                           "cases).")


class Case(BaseModel):
    """One test case. Suites subclass it with their own fields."""

    id: str


class Configuration(BaseModel):
    """One point on the axes the suite varies (prompt, retrieval, attack...)."""

    model_config = ConfigDict(frozen=True)

    id: str
    params: dict[str, Any] = Field(default_factory=dict)


class Trial(BaseModel):
    case: Case
    config: Configuration
    repeat: int = 0

    @property
    def trial_id(self) -> str:
        return f"{self.case.id}|{self.config.id}|r{self.repeat}"


class TrialFailed(Exception):
    """Raised inside a trial when a model call failed for good; the trial is recorded with status 'error'."""


class TrialContext(Protocol):
    """What a trial may use: model calls by role (cached, retried, recorded) and its seed."""

    seed: int
    repeat: int
    calls: list[CallRecord]

    async def generate(self, role: str, request: ChatRequest) -> ChatResponse:
        """Call the model of ``role``; raises TrialFailed when the call failed for good."""
        ...

    def supports_tools(self, role: str) -> bool:
        """Whether the model of ``role`` has native tool calling (``ChatRequest.tools``)."""
        ...

    def supports_logprobs(self, role: str) -> bool:
        """Whether the model of ``role`` returns token log-probabilities (``ChatRequest.top_logprobs``)."""
        ...


class TrialResult(BaseModel):
    output: dict[str, Any] = Field(default_factory=dict)
    scores: dict[str, ScoreValue] = Field(default_factory=dict)


class RubricSpec(BaseModel):
    """A rubric a judge scores, which people can also label: each dimension an ordinal 1-5 label
    (``knowgap label``), compared with the judge by weighted kappa and Krippendorff's alpha (ordinal)."""

    name: str
    weights: dict[str, float]
    """Score field of each dimension -> its weight in the rubric's total."""
    scale: tuple[float, float] = (1.0, 5.0)
    """The range the judge's stored scores are on (mapped onto 1-5 to compare with people)."""
class JudgeUse(BaseModel):
    """Which judge decides a metric under a suite's current options (see :meth:`Suite.metric_judges`)."""

    model_config = ConfigDict(frozen=True)

    judge: str = Field(description="The judge's catalogue name (``knowgap judges``), e.g. 'abstention'.")
    version: str = Field(description="The judge's version (its VERSION constant or spec version).")
    role: str | None = Field(default=None, description="The role whose model judges; None for an offline judge.")
    counts: Literal["positive", "negative"] | None = Field(
        default=None, description="A proportion of the judge's positive (or negative) verdicts, so the judge's "
                                  "sensitivity and specificity correct it (Rogan-Gladen); None: a score, a mean, "
                                  "a count.")


class Suite(ABC):
    name: ClassVar[str]
    description: ClassVar[str]
    Options: ClassVar[type[SuiteOptions]] = SuiteOptions
    roles: ClassVar[tuple[str, ...]] = ("target",)
    """Model roles this suite calls; the run must give a spec for each (defaults fill them)."""
    demo_options: ClassVar[dict[str, Any]] = {}
    """Options used by ``knowgap demo`` (a small sample)."""
    default_max_tokens: ClassVar[int] = 512
    metric_specs: ClassVar[tuple[MetricSpec, ...] | None] = None
    """Every metric :meth:`metrics` can produce, under any options, each declared once
    (:class:`~knowgap.engine.metric_spec.MetricSpec`: kind, direction, cluster unit, judge, the options it needs,
    description). :attr:`metric_names`, :attr:`computed_metrics`, :meth:`metric_needs` and :meth:`metric_judges`
    are derived from them. None (an older plugin suite): declare those by hand, or not at all."""
    metric_names: ClassVar[frozenset[str] | None] = None
    """Every metric name :meth:`metrics` can produce, under any options (derived from :attr:`metric_specs`). A
    breakdown ``NAME:KEY=VALUE`` (e.g. ``flip_rate:position=end``) is declared by its ``NAME``. Eval files'
    thresholds are checked against it before any model call; None (not declared, e.g. an older plugin suite):
    checked only after the run."""

    computed_metrics: ClassVar[frozenset[str] | None] = None
    """The names in :attr:`metric_names` no judge decides (an exact rule on structured output: a count, a parsed
    field equal to a label, a length; derived from :attr:`metric_specs`); every other name is decided by a judge of
    :meth:`metric_judges` under some options. None (not declared, e.g. an older plugin suite): reports say how such
    metrics were decided is unknown."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        specs = cls.__dict__.get("metric_specs")
        if specs is None:
            return
        if "metric_names" in cls.__dict__ or "computed_metrics" in cls.__dict__:
            raise TypeError(f"{cls.__name__}: metric_names and computed_metrics are derived from metric_specs; "
                            "declare the specs alone")
        cls.metric_names = metric_names(specs)
        cls.computed_metrics = computed_names(specs)

    @classmethod
    def declares_metric(cls, name: str) -> bool | None:
        """Whether :meth:`metrics` can produce ``name`` (a breakdown by its base name); None: not declared."""
        if cls.metric_specs is not None:
            return spec_of(cls.metric_specs, name) is not None
        if cls.metric_names is None:
            return None
        return name in cls.metric_names or name.split(":", 1)[0] in cls.metric_names

    def metric_needs(self, name: str) -> str | None:
        """What this run's options lack to produce metric ``name`` (a breakdown by its base name), in words that
        name the option (``'--inject (or ...)'``); None when they can produce it, or when the suite does not say.
        By default the spec's :attr:`~knowgap.engine.metric_spec.MetricSpec.needs`. ``knowgap eval`` and its
        ``--check`` refuse, before any model call, a threshold on a metric no suite in its scope can produce with
        its options; ``knowgap gate`` names the option when a run lacks the metric."""
        spec = spec_of(self.metric_specs or (), name)
        if spec is None or spec.needs is None or spec.needs.met(self):
            return None
        return spec.needs.says

    def splits(self) -> Sequence[Split] | None:
        """The groups :meth:`metrics` reports besides each configuration's
        (:class:`~knowgap.engine.verdict_tally.Split`: ``CONFIG · kb=KB``), as
        :func:`~knowgap.engine.verdict_tally.count_metrics` counts them; [] for none. None (the default): not
        declared (an older plugin suite)."""
        return None

    def metric_groups(self) -> list[str]:
        """The groups :meth:`metrics` can produce under this run's options, ``*`` standing for a part the data
        decides (:func:`in_groups` matches a group against them): each configuration id and the groups of
        :meth:`splits`; a suite that declares no splits, each configuration id alone or followed by `` · `` and a
        breakdown (``ID · *``); a suite whose groups are others says so here. A threshold's group
        (``accuracy[prompt=grounded]``) is checked against them before any model call."""
        ids = [c.id for c in self.configurations()]
        splits = self.splits()
        if splits is None:
            return ids + [f"{i} · *" for i in ids]
        return ids + [pattern for split in splits for pattern in split.patterns(ids)]

    data: ClassVar[SuiteData | None] = None
    """The suite's data part (:class:`~knowgap.engine.suite_data.SuiteData`): the model of one line of its case
    file (its ``--data`` option), its check, what ``knowgap data import`` fills and how ``knowgap data inject``
    plants attacks in it. Every ``knowgap data`` command asks it. None: the suite reads no case file of its own."""

    def __init__(self, options: SuiteOptions) -> None:
        self.options = options

    def dataset_files(self) -> Sequence[Path]:
        """Files whose sha256 goes into the manifest (to detect a changed dataset on resume)."""
        return []

    @abstractmethod
    def cases(self) -> list[Case]:
        """Every case of the dataset, in a stable order (sampling is done by the engine)."""

    @abstractmethod
    def configurations(self) -> list[Configuration]:
        """The configurations to run, in a stable order."""

    @abstractmethod
    async def run_trial(self, trial: Trial, ctx: TrialContext) -> TrialResult:
        """Produce the trial's output and scores; model calls go through ``ctx.generate``."""

    @abstractmethod
    def metrics(self, records: Iterable[TrialRecord]) -> list[MetricValue]:
        """Metrics per configuration (group) with 95% CIs, from the stored records: a built-in suite counts its
        trials' verdicts and its specs' reducers (:func:`~knowgap.engine.verdict_tally.count_metrics`, with
        :meth:`trial_verdicts` and :meth:`splits`). After a run, ``records`` is
        the run store's :class:`~knowgap.engine.store.StoredRecords`: a sequence that reads the file again on each
        pass, so two passes need no list (a list of every record grows with the run)."""

    def clusters(self, records: Iterable[TrialRecord]) -> dict[str, str]:
        """The cluster of each case of ``records`` (case id -> key): cases with one key are not independent (built
        on one source) and count as one unit in a comparison's bootstrap, as they do in the suite's own metrics'
        intervals. Default: every case its own cluster."""
        return {r.case_id: r.case_id for r in records}

    def case_tags(self, case: Case) -> dict[str, TagValue]:
        """What this suite's groups and intervals read of ``case`` (the values of its :meth:`splits` that come from
        the dataset, its cluster key...): the runner stores them in each trial's record
        (:attr:`~knowgap.engine.records.TrialRecord.case_tags`), and the metrics read them there, so a stored run
        counts each trial where it ran whatever the dataset says today (a trial stored without them: today's
        dataset, :mod:`knowgap.engine.case_tags`). {} (the default): none."""
        return {}

    def shared_trial(self, case: Case, config: Configuration) -> str | None:
        """A key naming a trial ``case`` shares with other cases under ``config``: of the cases a run plans (after
        ``--sample``), only the first with each key runs it. None (the default): the case has its own trial.
        Partial: the full view is the same for every role of a task, so it runs once per sampled task."""
        return None

    def check_models(self, models: Mapping[str, ChatModel]) -> None:  # noqa: B027 - optional hook
        """Refuse, before any trial runs, models this run's options cannot use (raise KnowgapError)."""

    def metric_judges(self) -> dict[str, JudgeUse]:
        """The judge that decides each judged metric under this run's options, by metric name (a breakdown
        ``NAME:KEY=VALUE`` inherits its ``NAME``'s judge); the others should be in :attr:`computed_metrics`. Stored in
        the manifest with the judge model; reports show each judge's card. By default each spec's judge (a
        :class:`~knowgap.engine.metric_spec.Choice` picked by this run's options)."""
        out = {}
        for name, spec in expanded(self.metric_specs or ()):
            judge = spec.judge.pick(self.options) if isinstance(spec.judge, Choice) else spec.judge
            if judge is not None:
                out[name] = JudgeUse(judge=judge.name, version=judge.version(), counts=spec.counts,
                                     role="judge" if judge.kind == "model" else None)
        return out

    # people in the loop (optional) -----------------------------------------------------------------
    rubrics: ClassVar[tuple[RubricSpec, ...]] = ()
    """Rubrics this suite's judges score (people label their dimensions 1-5)."""

    def label_reference(self, case: Case, config: Mapping[str, Any]) -> dict[str, str]:
        """What this suite's judges compare a response of ``case`` with under ``config`` (the configuration's
        params): the expected answer, the missing information, the fields the role may not see... shown to a
        person labelling the trial, never a verdict. Heading -> text; none by default."""
        return {}
    def judge_versions(self) -> dict[str, str]:
        """The version of every judge this run's options use, by catalogue name (stored in the manifest; a run
        resumes only with the same versions, so one run never mixes two judges): by default those of
        :meth:`metric_judges`."""
        return {use.judge: use.version for use in self.metric_judges().values()}

    # reports (optional) -------------------------------------------------------------------------
    score_tables: ClassVar[list[tuple[str, str]] | None] = None
    """Pairs of categorical scores the HTML report cross-tabulates (e.g. ``[("answerable", "abstained")]``);
    None: the first pairs of scores that are bool or few-valued strings in every trial; []: none."""

    def verdicts(self, record: TrialRecord) -> list[Verdict]:
        """The per-metric verdicts of a finished trial (right / wrong / not scored, and why), from its output and
        scores: one per proportion metric (its base name) the trial feeds, or one per part (``part``) when a trial
        feeds a metric more than once. The runner stores them in the record; ``knowgap show RUN --failed`` derives
        them for runs recorded before. They are the source of the suite's proportions:
        :func:`~knowgap.engine.verdict_tally.count_metrics` counts them into the k of n :meth:`metrics` reports.
        By default none (then :meth:`trial_failed` says None for a finished trial)."""
        return []

    def trial_verdicts(self, record: TrialRecord) -> list[Verdict]:
        """The verdicts stored in ``record``, else (a run recorded before knowgap stored them) derived now."""
        if record.verdicts or record.status != "ok":
            return list(record.verdicts)
        return self.verdicts(record)

    def verdict_call(self, record: TrialRecord, verdict: Verdict) -> VerdictCall | None:
        """The call of ``record`` that ``verdict`` is about, whose input and answer a listing shows beside it
        (``knowgap show RUN --failed``, the report's worst examples): by default the first target call for a
        verdict on the whole trial, and None (show no call) for one on a part: a suite whose verdicts have parts
        says which call each part is, and for an injected or pressured call which clean call it varies."""
        return first_target(record) if verdict.part is None else None

    def trial_failed(self, record: TrialRecord) -> bool | None:
        """Whether a finished trial shows the wrong behaviour (feeds the report's worst examples and the
        flipped cases of ``knowgap compare``): an errored trial, or one with a ``wrong`` verdict (stored, or derived
        for an older run); None when no verdict says."""
        if record.status != "ok":
            return True
        return failed(self.trial_verdicts(record))

    def report_sections(self, records: Sequence[TrialRecord],
                        metrics: Sequence[MetricValue]) -> list[ReportSection]:
        """Extra sections (HTML and markdown) a suite adds to its run's report; none by default. ``records`` is
        re-read from the run store on each pass (:class:`~knowgap.engine.store.StoredRecords`): iterate it, as
        often as needed, and keep counts rather than the records, so the report stays flat as runs grow."""
        return []

    @classmethod
    def render_tables(cls, metrics: list[MetricValue]) -> str | None:
        """The suite's own markdown layout of its metrics (e.g. the paper's tables), printed by the CLI after
        the metrics table and included in ``report.md``; None (the default): none."""
        return None


def in_groups(group: str, patterns: Iterable[str]) -> bool:
    """Whether ``group`` is one of :meth:`Suite.metric_groups`' ``patterns`` (``*`` matches any text)."""
    return any(re.fullmatch(".*".join(re.escape(part) for part in p.split("*")), group, flags=re.DOTALL)
               for p in patterns)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
