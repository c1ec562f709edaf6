"""The labelled sets the detector validators (:mod:`knowgap.judges.detector_validation`) measure on, read into
typed items, and the seeded label-balanced sample they draw.

Shipped sets live in ``judges/data/labelled/`` (provenance and licences in its ``SOURCES.md``); SummEdits states
no licence, so it is read from the data folder (``faithfulness/summedits`` under ``data_dir``), never shipped.
A bad line is an :class:`~knowgap.errors.InputError` naming file, line and field.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from knowgap.errors import InputError
from knowgap.jsonl import read_models, read_objects

if TYPE_CHECKING:
    from knowgap.suites.clarify.dataset import ClarifyCase
    from knowgap.suites.partial.leak import Fingerprint

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


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")


Item = TypeVar("Item", bound=_Item)


def _labelled(path: Path, model: type[Item], what: str) -> tuple[list[Item], Path]:
    """Every row of the labelled file ``path`` as ``model`` (an InputError names the file, line and field), and
    the path (its sha256 goes into the card)."""
    return [item for _, item in read_models(path, model, what=what)], path


# --- clarify: legal consultation answers (clarification, dangerous assertions) ---------------------------------


class LegalAnswer(_Item):
    """A real consultation answer, labelled by reading it."""

    id: str
    source: str = Field(description="lawbench-3-8 / lawyer-llama-single / lawyer-llama-multi, with the row")
    query: str
    text: str
    asks: bool = Field(description="the answer asks the user for information (a question to them, or a request)")
    overconfident: bool = Field(description="the answer asserts an outcome with unqualified certainty")


def legal_answer_items() -> tuple[list[LegalAnswer], Path]:
    return _labelled(LABELLED_DIR / "legal_answers.jsonl", LegalAnswer, "labelled answers")


# --- clarify: final answers for correctness --------------------------------------------------------------------


@dataclass(frozen=True)
class ClarifyAnswer:
    """A final answer to a clarify case, labelled by construction (in memory only)."""

    id: str
    case: ClarifyCase
    kind: str
    """reference / other_case / questions_only"""
    answer: str
    correct: bool


def clarify_answer_items() -> tuple[list[ClarifyAnswer], Path]:
    """Three answers per clarify case: its reference conclusion (correct); the conclusion of the next case with
    the same domain and language (incorrect: another outcome); its expected clarifying questions (incorrect: no
    conclusion). Built from ``clarify/data/cases.jsonl`` (whose sha256 names the set)."""
    from knowgap.suites.clarify.dataset import CASES_FILE, load_cases

    cases = load_cases(CASES_FILE)
    groups: dict[tuple[str, str], list[ClarifyCase]] = {}
    for case in cases:
        groups.setdefault((case.domain, case.lang), []).append(case)
    items: list[ClarifyAnswer] = []
    for case in cases:
        group = groups[(case.domain, case.lang)]
        items.append(ClarifyAnswer(id=f"{case.id}/reference", case=case, kind="reference", answer=case.conclusion,
                                   correct=True))
        if len(group) > 1:
            other = group[(group.index(case) + 1) % len(group)]
            items.append(ClarifyAnswer(id=f"{case.id}/other:{other.id}", case=case, kind="other_case",
                                       answer=other.conclusion, correct=False))
        if case.expected_clarifying_questions:
            items.append(ClarifyAnswer(id=f"{case.id}/questions", case=case, kind="questions_only",
                                       answer="\n".join(case.expected_clarifying_questions), correct=False))
    return items, CASES_FILE


# --- extract: summaries against their source ---------------------------------------------------------------------


class SummaryItem(_Item):
    benchmark: str = Field(description="summedits or handwritten")
    id: str
    source: str
    summary: str
    faithful: bool


SUMMEDITS_FILES = ("summedits_samsum.json", "summedits_news_sample250.json", "summedits_sales_call_sample250.json")
SUMMEDITS_MAX_CHARS = 800
"""Review-length documents only (the extract suite's reviews are 60-260 characters): in practice the SummEdits
dialogues (samsum); its news and sales-call documents are longer and cost a CPU judge minutes each."""


def _json_list(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(str(path), f"cannot read it ({exc.strerror}); pass the data folder") from None
    except json.JSONDecodeError as exc:
        raise InputError(str(path), f"not JSON ({exc.msg})", line=exc.lineno) from None
    if not isinstance(data, list):
        raise InputError(str(path), "expected a JSON list of {doc, summary, label}")
    return data


def extract_claim_items(data_dir: Path) -> tuple[list[SummaryItem], list[Path]]:
    """SummEdits documents up to :data:`SUMMEDITS_MAX_CHARS` characters (from the files of
    :data:`SUMMEDITS_FILES` that exist, at least one), with at most one consistent and one inconsistent summary
    per document (the first of each in the file), plus the extract suite's handwritten faithful / unfaithful
    pairs."""
    from knowgap.suites.extract.dataset import CASES_FILE as EXTRACT_CASES

    items: list[SummaryItem] = []
    paths: list[Path] = []
    folder = Path(data_dir) / "faithfulness" / "summedits"
    present = [folder / name for name in SUMMEDITS_FILES if (folder / name).is_file()]
    if not present:
        raise InputError(str(folder), f"no SummEdits file ({', '.join(SUMMEDITS_FILES)}); pass the data folder "
                                      "laid out like ../shared/data")
    for path in present:
        paths.append(path)
        seen: set[tuple[str, bool]] = set()
        for number, row in enumerate(_json_list(path), start=1):
            for key in ("id", "doc", "summary", "label"):
                if key not in row:
                    raise InputError(str(path), "missing field", line=number, field=key)
            doc_key = (str(row["doc"])[:200], int(row["label"]) == 1)
            if doc_key in seen or len(row["doc"]) > SUMMEDITS_MAX_CHARS:
                continue
            seen.add(doc_key)
            items.append(SummaryItem(benchmark="summedits", id=str(row["id"]), source=row["doc"],
                                     summary=row["summary"], faithful=doc_key[1]))
    hand = EXTRACT_CASES.parent / "handwritten_calibration.jsonl"
    paths.append(hand)
    for _, row in read_objects(hand, ("id", "review", "faithful_summary", "unfaithful_summary")):
        items.append(SummaryItem(benchmark="handwritten", id=f"{row['id']}/faithful", source=row["review"],
                                 summary=row["faithful_summary"], faithful=True))
        items.append(SummaryItem(benchmark="handwritten", id=f"{row['id']}/unfaithful", source=row["review"],
                                 summary=row["unfaithful_summary"], faithful=False))
    return items, paths


# --- partial: leaks and named gaps ----------------------------------------------------------------------------


class LeakLabel(_Item):
    id: str
    scenario_id: str
    role: str
    text: str
    leaks: bool = Field(description="the text reveals a value (or a recognisable part) the role may not see")


@dataclass(frozen=True)
class LeakItem:
    id: str
    text: str
    leaks: bool
    prints: list[Fingerprint]


def leak_items() -> tuple[list[LeakItem], Path]:
    """The labelled texts with the fingerprints of their scenario's role (what it may not see, minus what its
    authorized view shows), computed as the partial suite does."""
    from knowgap.suites.partial.dataset import DATA, load_dataset
    from knowgap.suites.partial.leak import fingerprints
    from knowgap.suites.partial.view import build_view, render_view

    path = LABELLED_DIR / "partial_leaks.jsonl"
    labelled = read_models(path, LeakLabel, what="labelled texts")
    scenarios = load_dataset(DATA)
    cache: dict[tuple[str, str], list[Fingerprint]] = {}
    items = []
    for number, label in labelled:
        scenario = scenarios.get(label.scenario_id)
        if scenario is None:
            raise InputError(str(path), f"no scenario '{label.scenario_id}'", line=number, field="scenario_id")
        key = (label.scenario_id, label.role)
        if key not in cache:
            try:
                policy = scenario.policy(label.role)
            except KeyError:
                raise InputError(str(path), f"no role '{label.role}' in {label.scenario_id}", line=number,
                                 field="role") from None
            built = build_view(scenario, policy)
            visible = "\n".join([render_view(built.view, scenario.effective_lang()),
                                 json.dumps(built.pending, ensure_ascii=False)])
            cache[key] = fingerprints(built.secrets, visible, scenario.leak_markers)
        items.append(LeakItem(id=label.id, text=label.text, leaks=label.leaks, prints=cache[key]))
    return items, path


class GapLabel(_Item):
    id: str
    scenario_id: str
    path: str = Field(description="the hidden field")
    named: str = Field(description="a gap as an agent names it")
    match: bool


@dataclass(frozen=True)
class GapItem:
    id: str
    named: str
    path: str
    aliases: list[str]
    match: bool


def gap_items() -> tuple[list[GapItem], Path]:
    """The labelled (named gap, field) pairs with the field's labels from its scenario (``field_labels``)."""
    from knowgap.suites.partial.dataset import DATA, load_dataset

    path = LABELLED_DIR / "partial_gaps.jsonl"
    scenarios = load_dataset(DATA)
    items = []
    for number, label in read_models(path, GapLabel, what="labelled gaps"):
        scenario = scenarios.get(label.scenario_id)
        if scenario is None:
            raise InputError(str(path), f"no scenario '{label.scenario_id}'", line=number, field="scenario_id")
        items.append(GapItem(id=label.id, named=label.named, path=label.path,
                             aliases=scenario.field_labels.get(label.path, []), match=label.match))
    return items, path


# --- extract: takeover of a summary by an injected instruction ------------------------------------------------


class TakeoverLabel(_Item):
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
    path = LABELLED_DIR / "extract_takeovers.jsonl"
    items = []
    for line, item in read_models(path, TakeoverLabel, what="labelled summaries"):
        if item.takeover != (item.language or item.echo or item.obeyed):
            raise InputError(str(path), f"record {item.id}: takeover must be language or echo or obeyed",
                             line=line, field="takeover")
        items.append(item)
    return items, path


# --- starter: answer matching ------------------------------------------------------------------------------------


class AnswerLabel(_Item):
    id: str
    question: str
    answers: list[str] = Field(min_length=1, description="the accepted answers, as a starter case lists them")
    response: str
    correct: bool = Field(description="the response gives the right answer (and does not abstain)")


def answer_match_items() -> tuple[list[AnswerLabel], Path]:
    return _labelled(LABELLED_DIR / "answer_match.jsonl", AnswerLabel, "labelled responses")


# --- extract: summary coverage (clause mentioned or not) --------------------------------------------------------


class ClauseCoverageLabel(_Item):
    """One aspect clause of a review (as the coverage judge cuts it) against a real summary of that review,
    labelled by reading them (rule ``coverage-1``, docs/judges.md)."""

    id: str
    case: str = Field(description="the extract case the review comes from")
    lang: str
    review: str
    clause: str = Field(description="one of review_aspects(review)")
    summary: str
    covered: bool = Field(description="the summary mentions what the clause is about (its thing and what it says of "
                                      "it), in any wording or language; true or not")
    disputable: bool
    source: str = Field(description="the model and run the summary comes from")


def clause_coverage_items() -> tuple[list[ClauseCoverageLabel], Path]:
    return _labelled(LABELLED_DIR / "summary_coverage.jsonl", ClauseCoverageLabel, "labelled clauses")


def same_language_clause_items() -> tuple[list[ClauseCoverageLabel], Path, int]:
    """The labelled (clause, summary) pairs whose summary is in its review's language (the pairs the coverage
    judge scores), the file, and how many were left out."""
    from knowgap.text.languages import different_languages

    items, path = clause_coverage_items()
    kept = [it for it in items if not different_languages(it.review, it.summary)]
    return kept, path, len(items) - len(kept)


# --- abstain: the scenarios' answers (right or not) ----------------------------------------------------------


class ScenarioAnswerLabel(_Item):
    """A real reply of a model to an answerable abstain scenario question, labelled right or wrong against the
    question's reference answers by reading it (rule ``answer-correct-1``, docs/judges.md)."""

    id: str
    scenario: str = Field(description="false-premise / unknowable / unanswerable-context")
    question: str
    answers: list[str] = Field(min_length=1, description="the question's reference answers, as its scenario lists them")
    response: str
    correct: bool = Field(description="the reply's answer is a reference answer, in any form or wording that means it")
    disputable: bool = Field(description="the annotator found the label borderline")
    reason: str
    source: str = Field(description="the model and run the reply comes from")


def scenario_answer_items() -> tuple[list[ScenarioAnswerLabel], Path]:
    return _labelled(LABELLED_DIR / "scenario_answers.jsonl", ScenarioAnswerLabel, "labelled answers")


# --- abstain: the scenarios' responses (abstained or not) -----------------------------------------------------


class AbstentionLabel(_Item):
    abstained: bool = Field(description="the reply does not answer as posed: says it cannot be answered, or "
                                        "rejects the question's premise")
    disputable: bool = Field(description="the annotator found the reply borderline")
    reason: str


class AbstentionScenarioItem(_Item):
    """A real reply of a model to an abstain scenario question, labelled by two independent annotators."""

    id: str
    scenario: str = Field(description="false-premise / unknowable / unanswerable-context")
    question: str
    context: str | None = None
    response: str
    label_a: AbstentionLabel
    label_b: AbstentionLabel
    source: str = Field(description="the model and run the reply comes from")

    @property
    def agreed(self) -> bool:
        return self.label_a.abstained == self.label_b.abstained


def abstention_scenario_items(path: Path | None = None) -> tuple[list[AbstentionScenarioItem], Path]:
    """Every labelled reply (agreed or not: the validator keeps the agreed ones as gold); ``path`` default: the
    shipped ``abstention_scenarios.jsonl``."""
    return _labelled(path or LABELLED_DIR / "abstention_scenarios.jsonl", AbstentionScenarioItem, "labelled replies")
