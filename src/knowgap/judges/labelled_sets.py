"""The labelled sets of the judges package's own detectors, read into typed items, and what every validator shares:
the folder of shipped labelled sets, a typed reader, and the seeded label-balanced sample they draw. A suite's own
judges read their labelled sets in the suite's package (``suites/partial/leak_card.py``...), with these helpers.

Shipped sets live in ``judges/data/labelled/`` (provenance and licences in its ``SOURCES.md``). A bad line is an
:class:`~knowgap.errors.InputError` naming file, line and field.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from knowgap.errors import InputError
from knowgap.jsonl import read_models

Progress = Callable[[int, int], None]
"""``progress(done, total)``."""
LABELLED_DIR = Path(str(files("knowgap.judges") / "data" / "labelled"))
DEFAULT_JUDGE_MODEL = "local:qwen2.5-1.5b"
DEFAULT_MODEL_LIMIT = 60
"""Items a model-backed judge is measured on unless a limit says otherwise (a 1.5B judge takes seconds each)."""
SAMPLE_SEED = 0


def stratified(labels: Sequence[bool], limit: int | None, *, seed: int = SAMPLE_SEED) -> list[int]:
    """Indices of a seeded sample of ``limit`` items, alternating the two labels while both last (so half of
    each as far as the smaller class allows), in the order drawn; every index, in order, when ``limit`` is None
    or not smaller than the set. The sample of a smaller limit is the start of a larger one, so a model run cut
    short after k items is completed from the response cache by a run with limit k."""
    if limit is None or limit >= len(labels):
        return list(range(len(labels)))
    rng = random.Random(seed)
    pos = [i for i, label in enumerate(labels) if label]
    neg = [i for i, label in enumerate(labels) if not label]
    rng.shuffle(pos)
    rng.shuffle(neg)
    order = [i for pair in zip(pos, neg, strict=False) for i in pair]
    shorter = min(len(pos), len(neg))
    order += pos[shorter:] + neg[shorter:]
    return order[:max(limit, 0)]


class LabelledItem(BaseModel):
    """One row of a labelled set (no field beyond those declared)."""

    model_config = ConfigDict(extra="forbid")


Item = TypeVar("Item", bound=LabelledItem)


def labelled_file(name: str) -> Path:
    """The shipped labelled set ``name`` (``judges/data/labelled/NAME``)."""
    return LABELLED_DIR / name


def labelled_items(path: Path, model: type[Item], what: str) -> tuple[list[Item], Path]:
    """Every row of the labelled file ``path`` as ``model`` (an InputError names the file, line and field), and
    the path (its sha256 goes into the card)."""
    return [item for _, item in read_models(path, model, what=what)], path


# --- clarify: legal consultation answers (clarification, dangerous assertions) ---------------------------------


class LegalAnswer(LabelledItem):
    """A real consultation answer, labelled by reading it."""

    id: str
    source: str = Field(description="lawbench-3-8 / lawyer-llama-single / lawyer-llama-multi, with the row")
    query: str
    text: str
    asks: bool = Field(description="the answer asks the user for information (a question to them, or a request)")
    overconfident: bool = Field(description="the answer asserts an outcome with unqualified certainty")


def legal_answer_items() -> tuple[list[LegalAnswer], Path]:
    return labelled_items(labelled_file("legal_answers.jsonl"), LegalAnswer, "labelled answers")


class ClarifyReplyLabel(LabelledItem):
    """A real reply of a model to a clarify case, labelled by rule clarify-replies-1 (``clarify_replies_rule.md``):
    does it ask the user for facts, does it qualify its answer (asks, conditions on a fact of the case, or says the
    facts are not enough), does it assert a missing fact as known."""

    id: str = Field(description="MODEL/CASE/sha256(reply)[:8] (experiments/clarify_real_replies.py)")
    model: str = Field(description="the model that wrote the reply (the run's target)")
    source: str = Field(description="the runs and trials the reply comes from, 'RUN#TRIAL; ...'")
    case_id: str
    lang: Literal["zh", "en"] = Field(description="the case's language")
    kind: Literal["deficient", "complete"]
    query: str
    missing_information: list[str]
    reply: str
    finish_reason: str | None = None
    asks: bool = Field(description="asks the user for information about their situation (a question or a request)")
    asks_reason: str = Field(min_length=1)
    qualified: bool = Field(description="asks, makes its answer conditional on a fact of the case, or says the facts "
                                        "are not enough")
    qualified_reason: str = Field(min_length=1)
    asserts: bool = Field(description="states as known a fact the query does not give, or an outcome that depends "
                                      "on one")
    asserts_reason: str = Field(min_length=1)
    disputable: list[Literal["asks", "qualified", "asserts"]] = Field(
        default_factory=list, description="the labels the labeller found borderline")


def clarify_reply_items(path: Path | None = None) -> tuple[list[ClarifyReplyLabel], Path]:
    """Every labelled reply of ``clarify_replies.jsonl`` (or ``path``); a reply labelled asking but not qualified
    breaks the rule (asking qualifies) and is an InputError naming the record."""
    path = path or labelled_file("clarify_replies.jsonl")
    items = []
    for line, item in read_models(path, ClarifyReplyLabel, what="labelled replies"):
        if item.asks and not item.qualified:
            raise InputError(str(path), f"record {item.id}: a reply that asks is qualified (rule clarify-replies-1)",
                             line=line, field="qualified")
        items.append(item)
    return items, path


# --- extract: takeover of a summary by an injected instruction ------------------------------------------------


class TakeoverLabel(LabelledItem):
    """A real model summary of an injected review, labelled by the takeover rule (docs/extract.md)."""

    id: str
    source: str = Field(description="the run (and model, prompt) the summary comes from")
    case_id: str
    attack_type: str
    review: str
    injected_review: str
    baseline_summary: str
    baseline_sentiment: str
    summary: str
    sentiment: str
    language: bool = Field(description="written in a language neither the review's nor the baseline's")
    echo: bool = Field(description="copies or restates the injected text, the baseline does not")
    obeyed: bool = Field(description="does what the injection demands")
    takeover: bool = Field(description="language or echo or obeyed")
    note: str = ""


def takeover_items() -> tuple[list[TakeoverLabel], Path]:
    path = labelled_file("extract_takeovers.jsonl")
    items = []
    for line, item in read_models(path, TakeoverLabel, what="labelled summaries"):
        if item.takeover != (item.language or item.echo or item.obeyed):
            raise InputError(str(path), f"record {item.id}: takeover must be language or echo or obeyed",
                             line=line, field="takeover")
        items.append(item)
    return items, path


# --- abstain: the scenarios' responses (abstained or not) -----------------------------------------------------


class AbstentionLabel(LabelledItem):
    abstained: bool = Field(description="the reply does not answer as posed: says it cannot be answered, or "
                                        "rejects the question's premise")
    disputable: bool = Field(description="the annotator found the reply borderline")
    reason: str


class AbstentionScenarioItem(LabelledItem):
    """A real reply of a model to an abstain scenario question, labelled by two independent annotators (``label_a``
    and ``label_b``: the 1.5B's replies) or by one (``label_a`` only, ``label_b`` null: the 0.5B's replies; a second
    label is never a copy of the first)."""

    id: str
    scenario: str = Field(description="false-premise / unknowable / unanswerable-context")
    question: str
    context: str | None = None
    response: str
    label_a: AbstentionLabel
    label_b: AbstentionLabel | None = Field(default=None, description="the second annotator's label; null when one "
                                                                      "annotator labelled the reply")
    source: str = Field(description="the model and run the reply comes from: 'MODEL, COMMAND (run RUN, DATE)'")

    @property
    def model(self) -> str:
        """The model that wrote the reply (``source`` up to its first comma)."""
        return self.source.split(",", 1)[0].strip()

    @property
    def gold(self) -> bool | None:
        """The label the card measures against: the one annotator's, or the two annotators' when they agree; None
        when they disagree (the reply is left out)."""
        if self.label_b is not None and self.label_b.abstained != self.label_a.abstained:
            return None
        return self.label_a.abstained


def abstention_scenario_items(path: Path | None = None) -> tuple[list[AbstentionScenarioItem], Path]:
    """Every labelled reply (with a gold label or not: the validator keeps those with one); ``path`` default: the
    shipped ``abstention_scenarios.jsonl``. A ``source`` that does not start with the model's spec, or an id given
    twice, is an InputError naming file, line and field."""
    path = path or labelled_file("abstention_scenarios.jsonl")
    items: list[AbstentionScenarioItem] = []
    seen: set[str] = set()
    for line, item in read_models(path, AbstentionScenarioItem, what="labelled replies"):
        if ":" not in item.model or " " in item.model:
            raise InputError(str(path), f"record {item.id}: source must start with the model's spec ('local:"
                                        "qwen2.5-1.5b, knowgap run ...')", line=line, field="source")
        if item.id in seen:
            raise InputError(str(path), f"record {item.id}: the id is given twice", line=line, field="id")
        seen.add(item.id)
        items.append(item)
    return items, path
