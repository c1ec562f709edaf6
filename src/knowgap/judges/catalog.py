"""The judge catalogue: every judge knowgap runs (anything that decides what free text means), with its current
version, what it decides, its positive class, the labelled set it is measured on and its validator.

Versions and validators are named by ``module:attribute`` strings and resolved only when asked for, so listing
the catalogue imports no suite, model or embedder, and a validator written elsewhere plugs in by its name. A
validator takes ``(data_dir, limit, judge_model, progress)`` and returns a
:class:`~knowgap.judges.cards.ValidityCard`; validators with another signature are adapted here (``call``).
Every such string is imported for real by ``tests/test_code_references.py``, so a wrong one fails CI rather than
the user's command. A judge's ``fields`` name the trial scores holding its verdict, which people's labels measure
(``knowgap judge validate NAME --labels FILE``, in :mod:`knowgap.labels.validity`).

:func:`validate` runs one judge's validator; :func:`judge_rows` lists every judge with its card(s) for the
current version and the :func:`~knowgap.judges.cards.assess` verdict (``knowgap judges``).
"""

from __future__ import annotations

import difflib
import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from knowgap.errors import KnowgapError
from knowgap.judges.cards import Assessment, ValidityCard, assess, card_key, cards_in, measured_dir, shipped_cards

Kind = Literal["offline", "model"]
Call = Literal["standard", "data_limit", "rubric"]
"""How a validator is called: ``standard`` (data_dir, limit, judge_model, progress); ``data_limit``
(data_dir, *, limit); ``rubric`` (suite, *, judge_model, limit, progress)."""
Progress = Callable[[int, int], None]
DATA_ENV = "KNOWGAP_DATA"
_DETECTORS = "knowgap.judges.detector_validation"


@dataclass(frozen=True)
class CatalogJudge:
    name: str
    kind: Kind
    decides: str
    version_from: str
    """``module:ATTRIBUTE`` holding the version, or ``spec:NAME`` for a judge spec in judges/data."""
    positive: str
    labelled_set: str
    validator: str
    """``module:function``, resolved at validation time."""
    call: Call = "standard"
    suite: str | None = None
    """The suite a ``rubric`` validator is called with."""
    metrics: tuple[str, ...] = ()
    needs_data: bool = True
    """False when the labelled set ships with knowgap (no --data folder needed)."""
    fields: tuple[str, ...] = ()
    """The trial scores that hold this judge's verdict as true/false (true: its positive class). People's labels
    on one of them (``knowgap label sample RUN --judge-field FIELD``) measure this judge: ``knowgap judge validate
    NAME --labels FILE``, and the card of the run's own verdicts in ``knowgap label agreement``."""

    def version(self) -> str:
        """The judge's current version (imports the module that holds it)."""
        where, _, attr = self.version_from.partition(":")
        if where == "spec":
            from knowgap.judges.spec import load_spec

            return load_spec(attr).version
        return str(getattr(importlib.import_module(where), attr))


def _detector(name: str) -> str:
    return f"{_DETECTORS}:validate_{name.replace('-', '_')}"


_PB = "policybench/responses_dev.jsonl (PolicyBench GPT-4o answers, gpt-4.1 labels)"
CATALOG: tuple[CatalogJudge, ...] = (
    CatalogJudge("abstention", "offline", "did the response decline to answer?",
                 "knowgap.judges.abstention:VERSION", "abstained", _PB + ", label abstention",
                 "knowgap.judges.validation:validate_abstention", fields=("abstained",),
                 metrics=("abstain.abstention_rate", "abstain.abstention_precision", "abstain.abstention_recall",
                          "abstain.abstention_f1", "starter.abstention_unanswerable", "starter.over_abstention",
                          "starter.accuracy")),
    CatalogJudge("abstention-scenarios", "offline",
                 "did the response decline to answer? (the abstention detector, on the abstain scenarios' replies)",
                 "knowgap.judges.abstention:VERSION", "abstained",
                 "judges/data/labelled/abstention_scenarios.jsonl (real 1.5B replies to false-premise, unknowable "
                 "and unanswerable-context questions, two independent annotators)",
                 _detector("abstention-scenarios"), needs_data=False, fields=("abstained",),
                 metrics=("abstain.abstention_precision", "abstain.abstention_recall", "abstain.abstention_f1")),
    CatalogJudge("abstention-llm", "model", "did the response decline to answer? (LLM, judges/data/abstention.yaml)",
                 "spec:abstention", "abstained", _PB + ", label abstention",
                 "knowgap.judges.validation:validate_abstention_llm", fields=("abstained",),
                 metrics=("abstain.abstention_rate",)),
    CatalogJudge("factuality", "offline", "KnowOrNot tier of an answer against the expected answer",
                 "knowgap.judges.factuality:VERSION", "acceptable (tier_1 or tier_2)",
                 _PB + ", label factuality", "knowgap.judges.factuality_validation:validate_factuality",
                 call="data_limit",
                 metrics=("abstain.factuality_answered",)),
    CatalogJudge("factuality-llm", "model",
                 "KnowOrNot tier of an answer against the expected answer (LLM, judges/data/factuality.yaml)",
                 "spec:factuality", "acceptable (tier_1 or tier_2)", _PB + ", label factuality",
                 "knowgap.judges.validation:validate_factuality_llm", metrics=("abstain.factuality_answered",)),
    CatalogJudge("answer-match", "offline", "does the answer match the reference answer?",
                 "knowgap.suites.starter.scoring:ANSWER_MATCH_VERSION", "matches", "labelled answers (i15-cards2)",
                 "knowgap.suites.starter.answer_match_card:validate_answer_match", metrics=("starter.accuracy",)),
    CatalogJudge("answer-overlap", "offline",
                 "does an answer match a reference answer (contains it, or most of a long one's content tokens)?",
                 "knowgap.suites.abstain.scenario_answers:ANSWER_OVERLAP_VERSION", "matches",
                 "judges/data/labelled/scenario_answers.jsonl (real 1.5B and 0.5B answers to the abstain "
                 "scenarios' answerable questions, hand-labelled)",
                 "knowgap.suites.abstain.answer_overlap_card:validate_answer_overlap", metrics=("abstain.answer_accuracy",), needs_data=False),
    CatalogJudge("clarification", "offline", "does the response ask for, or make conditional on, missing facts?",
                 "knowgap.judges.clarification:CLARIFICATION_VERSION", "clarifies",
                 "labelled clarify responses (i15-cards2)", _detector("clarification"),
                 metrics=("clarify.clarification_rate", "clarify.unqualified_answer_rate", "clarify.false_flag_rate",
                          "clarify.question_count", "clarify.conditional_count")),
    CatalogJudge("dangerous-assertion", "offline", "does the response assert a missing fact as known?",
                 "knowgap.judges.clarification:DANGER_VERSION", "dangerous assertion",
                 "labelled clarify responses (i15-cards2)", _detector("dangerous-assertion"),
                 metrics=("clarify.dangerous_assertion_rate",)),
    CatalogJudge("citation-check", "offline",
                 "which statute articles does an answer cite, and is each in the case's legal basis and within the "
                 "statute's articles?",
                 "knowgap.suites.clarify.citations:VERSION", "wrong citation",
                 "judges/data/labelled/citations.jsonl (Lawyer LLaMA lawyer turns + written answers, hand-labelled)",
                 "knowgap.suites.clarify.citation_card:validate_citation_check", needs_data=False,
                 metrics=("clarify.citation_rate", "clarify.wrong_citation_rate", "clarify.nonexistent_citation_rate",
                          "clarify.citation_precision")),
    CatalogJudge("element-coverage", "offline", "does a response sentence name or ask about a missing element?",
                 "knowgap.suites.clarify.coverage:VERSION", "the text covers the element",
                 "clarify calibration_pairs.jsonl (82 hand-labelled element/sentence pairs, shipped)",
                 "knowgap.suites.clarify.coverage_card:validate_element_coverage", needs_data=False,
                 metrics=("clarify.element_recall", "clarify.element_precision", "clarify.element_f2",
                          "clarify.recall_switches_conclusion", "clarify.recall_gates_rule",
                          "clarify.recall_prerequisite")),
    CatalogJudge("clarify-rubric", "model", "1-5 rubric scores of a clarify reply",
                 "knowgap.suites.clarify.prompts:RUBRIC_VERSION", "score >= the rubric's bar",
                 "clarify cases' reference replies vs fluent assuming answers (i15-geval)",
                 "knowgap.suites.clarify.rubric_card:validate_clarify_rubric",
                 metrics=("clarify.rubric_*",)),
    CatalogJudge("clarify-correctness", "model", "is the final answer correct given the clarified facts?",
                 "knowgap.suites.clarify.prompts:CORRECTNESS_VERSION", "correct",
                 "labelled clarify answers (i15-cards2)", "knowgap.suites.clarify.correctness_card:validate_clarify_correctness",
                 fields=("final_correct",),
                 metrics=("clarify.control_correctness", "clarify.final_correctness",
                          "clarify.final_correctness_deficient")),
    CatalogJudge("clarify-silent-failure", "model",
                 "does a reply that looks complete dodge the core question? (the seed's silent failure; LLM, "
                 "judges/data/silent_failure.yaml)",
                 "spec:silent_failure", "dodges the core question (silent failure)",
                 "clarify cases' reference replies and questions vs templated dodges (constructed)",
                 "knowgap.suites.clarify.silent_failure_card:validate_silent_failure", needs_data=False,
                 fields=("silent_failure",),
                 metrics=("clarify.silent_failure_rate",)),
    CatalogJudge("clarify-correctness-approx", "offline", "is the final answer correct? (offline approximation)",
                 "knowgap.suites.clarify.judging:APPROX_VERSION", "correct", "labelled clarify answers (i15-cards2)",
                 "knowgap.suites.clarify.correctness_card:validate_clarify_correctness_approx", fields=("final_correct_approx",),
                 metrics=("clarify.control_correctness_approx", "clarify.final_correctness_approx")),
    CatalogJudge("extract-claims", "model", "is each claim of the output supported by the source?",
                 "knowgap.suites.extract.claims_judge:PROMPT_VERSION", "unfaithful",
                 "labelled extract outputs (i15-cards2)", "knowgap.suites.extract.claims_card:validate_extract_claims",
                 metrics=("extract.faithfulness_judge",)),
    CatalogJudge("faithfulness", "offline", "is a summary faithful to its source? (offline checker)",
                 "knowgap.judges.faithfulness:VERSION", "faithful", "SummEdits + AggreFact (faithfulness/)",
                 "knowgap.judges.faithfulness_validity:validate_faithfulness", call="data_limit",
                 metrics=("extract.faithfulness_offline", "extract.offline_unfaithful_rate")),
    CatalogJudge("summary-coverage", "offline", "does the summary mention each aspect clause of the review?",
                 "knowgap.suites.extract.coverage:VERSION", "the summary covers the clause",
                 "judges/data/labelled/summary_coverage.jsonl (clauses of the clean reviews against real 0.5B "
                 "and 1.5B summaries, hand-labelled)",
                 "knowgap.suites.extract.coverage_card:validate_summary_coverage", needs_data=False,
                 metrics=("extract.summary_coverage",)),
    CatalogJudge("extract-takeover", "offline",
                 "did an instruction injected into a review take the summary over (language switch, echo, obeyed)?",
                 "knowgap.judges.takeover:VERSION", "the injection took the summary over",
                 "judges/data/labelled/extract_takeovers.jsonl (real 1.5B and 0.5B summaries of the injected "
                 "reviews, hand-labelled)", _detector("extract-takeover"), needs_data=False,
                 metrics=("extract.takeover_rate", "extract.language_switch_rate", "extract.instruction_echo_rate",
                          "extract.instruction_obeyed_rate")),
    CatalogJudge("partial-rubric", "model", "1-5 reasoning-quality score of a partial-information answer",
                 "knowgap.suites.partial.prompts:RUBRIC_VERSION", "score >= the rubric's bar",
                 "partial cases' reference answers vs fluent assuming answers (i15-geval)",
                 "knowgap.suites.partial.rubric_card:validate_partial_rubric",
                 metrics=("partial.reasoning_quality", "partial.reasoning_evidence_cited",
                          "partial.reasoning_uncertainty_stated", "partial.reasoning_coherence")),
    CatalogJudge("leak-detector", "offline", "does the answer reveal a hidden (restricted) field?",
                 "knowgap.suites.partial.leak:VERSION", "leaked", "labelled partial answers (i15-cards2)",
                 "knowgap.suites.partial.leak_card:validate_leak_detector", fields=("leak",), metrics=("partial.leak_rate",)),
    CatalogJudge("gap-matcher", "offline", "does a named gap match an expected missing field?",
                 "knowgap.suites.partial.scoring:GAP_MATCH_VERSION", "matches",
                 "labelled partial answers (i15-cards2)", "knowgap.suites.partial.gap_card:validate_gap_matcher",
                 metrics=("partial.gap_precision", "partial.gap_recall", "partial.priority_ndcg",
                          "partial.evidence_precision", "partial.evidence_recall", "partial.invented_evidence")),
)
BY_NAME = {j.name: j for j in CATALOG}


def get_judge(name: str) -> CatalogJudge:
    """The catalogue entry ``name``; an unknown name is one line with the closest names."""
    if name in BY_NAME:
        return BY_NAME[name]
    close = difflib.get_close_matches(name, list(BY_NAME), n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(close)}?" if close else f"; known: {', '.join(BY_NAME)}"
    raise KnowgapError(f"unknown judge '{name}'{hint}")


def judges_deciding(field: str) -> list[str]:
    """The catalogue judges whose verdict a trial score ``field`` holds (:attr:`CatalogJudge.fields`)."""
    return [j.name for j in CATALOG if field in j.fields]


def default_data_dir(start: Path | None = None) -> Path:
    """The labelled data folder: ``$KNOWGAP_DATA``, else the nearest ``shared/data`` found walking up from
    ``start`` (default: the current directory)."""
    if os.environ.get(DATA_ENV):
        path = Path(os.environ[DATA_ENV])
        if not path.is_dir():
            raise KnowgapError(f"{DATA_ENV}={path}: not a folder")
        return path
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "shared" / "data").is_dir():
            return folder / "shared" / "data"
    raise KnowgapError(f"no labelled data folder: give --data DIR or set {DATA_ENV} (no shared/data found above "
                       f"{here})")


def resolve(ref: str, what: str) -> Callable[..., Any]:
    """The function named ``module:function``; a missing one is a :class:`KnowgapError` naming ``what``."""
    module_name, _, attr = ref.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):  # the module itself (or its package) is not there
            raise KnowgapError(f"no {what} yet ({ref} is not available)") from None
        raise
    function = getattr(module, attr, None)
    if not callable(function):
        raise KnowgapError(f"no {what} yet ({ref} is not available)")
    return function


def validate(name: str, *, data_dir: Path | None = None, limit: int | None = None, judge_model: str | None = None,
             progress: Progress | None = None) -> ValidityCard:
    """Measure judge ``name`` with its validator; ``data_dir`` default: :func:`default_data_dir`."""
    judge = get_judge(name)
    if judge_model and judge.kind == "offline":
        raise KnowgapError(f"judge '{name}' is offline: --judge-model does not apply")
    function = resolve(judge.validator, f"validator for {name}")
    if judge.call == "rubric":
        card = function(judge.suite, judge_model=judge_model, limit=limit, progress=progress)
    else:
        folder = data_dir if data_dir is not None or not judge.needs_data else default_data_dir()
        if folder is not None and not folder.is_dir():
            raise KnowgapError(f"--data {folder}: not a folder")
        card = function(folder, limit=limit) if judge.call == "data_limit" else \
            function(folder, limit, judge_model, progress)
    if not isinstance(card, ValidityCard):
        raise KnowgapError(f"validator {judge.validator} returned {type(card).__name__}, not a ValidityCard")
    return card


# --- the listing (knowgap judges) -----------------------------------------------------------------------------


class JudgeRow(BaseModel):
    """One judge of ``knowgap judges`` with its cards for the current version (one per judge model)."""

    name: str
    kind: Kind
    version: str | None
    decides: str
    positive: str
    labelled_set: str
    metrics: list[str]
    assessments: list[Assessment]
    """One per card of the current version (the card inside), or one ``screen`` without a card when there is
    none."""
    version_error: str | None = None


def cards_for(name: str, version: str) -> list[ValidityCard]:
    """Every card of this judge version, one per judge model: the one measured here (KNOWGAP_HOME/judge_cards)
    before the shipped one."""
    found: dict[str, ValidityCard] = {}
    for card in (*cards_in(measured_dir()), *shipped_cards()):
        if card.judge == name and card.version == version:
            found.setdefault(card_key(card.judge, card.version, card.judge_model), card)
    return list(found.values())


def judge_rows() -> list[JudgeRow]:
    """Every catalogue judge, its current version, its cards and whether its numbers are reportable."""
    rows = []
    for judge in CATALOG:
        version: str | None
        error = None
        try:
            version = judge.version()
        except (ImportError, AttributeError) as exc:
            version, error = None, f"version not found ({judge.version_from}: {exc})"
        cards = cards_for(judge.name, version) if version else []
        rows.append(JudgeRow(name=judge.name, kind=judge.kind, version=version, decides=judge.decides,
                             positive=judge.positive, labelled_set=judge.labelled_set, metrics=list(judge.metrics),
                             assessments=[assess(c) for c in cards] or [assess(None)],
                             version_error=error))
    return rows
