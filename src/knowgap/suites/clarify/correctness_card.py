"""The clarify suite's final-answer judges as judges of the catalogue, declared here where they live with their
validators: ``clarify-correctness`` (the model judge, ``correctness_prompt``) and ``clarify-correctness-approx``
(its offline approximation: the reference terms present, no further question). The model judge is measured on final
answers built from the clarify cases, labelled by construction (:func:`clarify_answer_items`); the approximation, by
the card rule (issue 37), on real final answers of two local models to the complete controls
(``judges/data/labelled/clarify_final_answers.jsonl``, :mod:`knowgap.suites.clarify.labelled_replies`), with the
constructed answers as a discrimination check."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from knowgap.errors import InputError
from knowgap.judges.cards import (
    Estimate,
    Labelling,
    ValidityCard,
    binary_card,
    binary_measures,
    confusion_of,
    sha256_files,
)
from knowgap.judges.clarification import clarification_signals
from knowgap.judges.judge import Judge, Progress
from knowgap.judges.labelled_sets import DEFAULT_JUDGE_MODEL, DEFAULT_MODEL_LIMIT, stratified
from knowgap.judges.offline_cards import offline_card, sample_method
from knowgap.suites.clarify.dataset import CASES_FILE, ClarifyCase, load_cases
from knowgap.suites.clarify.judging import APPROX_VERSION, approximate_correct, parse_verdict
from knowgap.suites.clarify.labelled_replies import RULE_FILE, final_answers
from knowgap.suites.clarify.prompts import CORRECTNESS_VERSION, correctness_prompt


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


_NOTES = (
    "Constructed, labelled by construction: per clarify case its reference conclusion verbatim (correct), the "
    "conclusion of the next case of the same topic and language (incorrect: another outcome or amount) and its "
    "own expected clarifying questions with no conclusion (incorrect). Positives are verbatim references, so "
    "sensitivity on paraphrased real answers is lower than measured here; negation is not exercised.")

APPROX_CLAIM = ("clarify.control_correctness_approx, final_correctness_approx: is the final answer correct? (offline "
                "approximation)")
CORRECTNESS_CLAIM = ("clarify.control_correctness, final_correctness, final_correctness_deficient: is the final "
                     "answer correct given the clarified facts?")
"""What each card validates, in the metrics' words (the card rule, issue 37)."""
ANSWERS_HOW = ("final answers built from the clarify cases: the reference conclusion verbatim, another case's "
               "conclusion, the case's own clarifying questions without a conclusion")
BY_CONSTRUCTION = Labelling(rule="by construction: the validator builds each item with its label",
                            by="no annotator: labels by construction", before_judge=True)


def _approx_verdict(answer: str, case: ClarifyCase) -> bool:
    """The offline approximation as a run decides it on a final answer (``final_correct_approx``)."""
    asked = clarification_signals(answer, case.query).asked
    return approximate_correct(answer, case.conclusion_terms, asked)[0]


def constructed_approx_check() -> dict[str, Estimate | float | str]:
    """The discrimination check on the constructed answers (:func:`clarify_answer_items`): balanced accuracy,
    sensitivity and specificity of the approximation on all of them, keys ``constructed_*``."""
    items, _ = clarify_answer_items()
    measures = binary_measures(confusion_of([_approx_verdict(it.answer, it.case) for it in items],
                                            [it.correct for it in items])[0])
    out: dict[str, Estimate | float | str] = {"constructed_n": float(len(items))}
    for name in ("balanced_accuracy", "sensitivity", "specificity"):
        out[f"constructed_{name}"] = measures[name]
    return out


def validate_clarify_correctness_approx(data_dir: Path | None, limit: int | None = None,
                                        judge_model: str | None = None,
                                        progress: Progress | None = None, *,
                                        path: Path | None = None) -> ValidityCard:
    """The offline approximation of final correctness (conclusion terms present, no further question) on real
    final answers: the replies of local models to the clarify suite's complete controls
    (``judges/data/labelled/clarify_final_answers.jsonl``, labelled by rule final-correct-1 before it ran).
    ``extra``: sensitivity and specificity per model and language, and the constructed answers' figures
    (:func:`constructed_approx_check`, a discrimination check only). ``path``: another file in the same format."""
    answers, path = final_answers(path)
    cases = {c.id: c for c in load_cases(CASES_FILE)}
    for line, row in enumerate(answers, start=1):
        if row.case_id not in cases or cases[row.case_id].deficient:
            raise InputError(str(path), f"{row.case_id!r} is not a complete clarify case", line=line, field="case_id")
    chosen = stratified([a.correct for a in answers], limit)
    rows = [answers[i] for i in chosen]
    card = offline_card("clarify-correctness-approx", APPROX_VERSION, "correct final answer",
                        f"judges/data/labelled/{path.name}", sha256_files([path, CASES_FILE]),
                        [r.correct for r in rows], lambda i: _approx_verdict(rows[i].reply, cases[rows[i].case_id]),
                        progress, method=sample_method(len(answers), chosen, limit, "real final answers to the "
                                                       "complete controls")
                        + "; the constructed answers are a discrimination check in extra (constructed_*)",
                        notes=_REAL_NOTES, groups=[f"{r.model}" for r in rows], claim=APPROX_CLAIM,
                        item_languages=[r.lang for r in rows], writers=[r.model for r in rows],
                        replies_how=REAL_ANSWERS_HOW, labelling=FINAL_CORRECT_LABELLING)
    for lang in sorted({r.lang for r in rows}):
        members = [i for i, r in enumerate(rows) if r.lang == lang]
        verdicts = [_approx_verdict(rows[i].reply, cases[rows[i].case_id]) for i in members]
        measures = binary_measures(confusion_of(verdicts, [rows[i].correct for i in members])[0])
        for name in ("sensitivity", "specificity"):
            if measures[name].value is not None:
                card.extra[f"{name}_{lang}"] = measures[name]
    card.extra.update(constructed_approx_check())
    return card


REAL_ANSWERS_HOW = ("replies of local models to the clarify suite's complete controls (knowgap run clarify --seed 0 "
                    "--sample 40, prompts plain and cautious, one turn: the first reply is the final answer), one "
                    "per distinct model, case and reply")
FINAL_CORRECT_LABELLING = Labelling(
    rule=f"{RULE_FILE}, rule final-correct-1: committed in 477ce5a before the labels (562c127 and after)",
    by="one annotator: a Claude-based helper agent (a language model) working for the lead engineer, blind to the "
       "judge's verdicts, by rule final-correct-1; no second annotator",
    before_judge=True)
_REAL_NOTES = (
    "Real final answers: the replies of local:qwen2.5-1.5b and local:qwen2.5-0.5b to the clarify complete controls "
    "(every needed fact given), labelled correct or not against the case's reference conclusion by rule "
    "final-correct-1 before the approximation ran on them. The verdict is the run's own: every conclusion term "
    "group found in the reply and no further question (clarification_signals). Deficient cases' final answers "
    "(after a clarification turn, --turns) are not in the set: the runs measured asked once. extra: "
    "sensitivity and specificity per model and language; the constructed answers' figures (constructed_*: the "
    "reference conclusion verbatim, another case's conclusion, the case's own questions), a discrimination check "
    "only.")


def validate_clarify_correctness(data_dir: Path | None, limit: int | None = DEFAULT_MODEL_LIMIT,
                                 judge_model: str | None = None,
                                 progress: Progress | None = None) -> ValidityCard:
    """The clarify final-correctness model judge (``correctness_prompt``) through the model gateway."""
    from knowgap.engine.gateway import ModelGateway
    from knowgap.models.structured import ParseFailure
    from knowgap.models.types import ChatRequest

    spec = judge_model or DEFAULT_JUDGE_MODEL
    items, path = clarify_answer_items()
    chosen = stratified([it.correct for it in items], limit)
    rows = [items[i] for i in chosen]
    verdicts: list[bool | None] = []
    start = time.perf_counter()
    with ModelGateway.open(run_id=f"validate-{CORRECTNESS_VERSION}") as gateway:
        for i, row in enumerate(rows):
            user = "用户" if row.case.lang == "zh" else "User"
            prompt = correctness_prompt(row.case, f"{user}: {row.case.query}", row.answer)
            call = gateway.call_sync(spec, "judge", ChatRequest.simple(prompt, max_tokens=150, seed=0))
            parsed = None if call.response is None else parse_verdict(call.response.text)
            verdicts.append(None if parsed is None or isinstance(parsed, ParseFailure)
                            else parsed.verdict == "correct")
            if progress:
                progress(i + 1, len(rows))
    return binary_card("clarify-correctness", CORRECTNESS_VERSION, verdicts, [r.correct for r in rows],
                       positive="correct final answer", dataset=f"clarify/{path.name} (constructed answers)",
                       dataset_sha256=sha256_files([path]), seconds=time.perf_counter() - start,
                       judge_model=spec, method=sample_method(len(items), chosen, limit, "constructed final answers")
                       + "; the conversation shown to the judge is the user's question alone; "
                         "'partially_correct' counts as not correct; unparsed or failed calls count as wrong",
                       notes=_NOTES, claim=CORRECTNESS_CLAIM, item_languages=[r.case.lang for r in rows],
                       writers=[None] * len(rows), replies_how=ANSWERS_HOW, labelling=BY_CONSTRUCTION)


_ANSWERS = "labelled clarify answers (i15-cards2)"
CLARIFY_CORRECTNESS = Judge(
    name="clarify-correctness", kind="model", decides="is the final answer correct given the clarified facts?",
    current=CORRECTNESS_VERSION, positive="correct", labelled_set=_ANSWERS, validator=validate_clarify_correctness,
    fields=("final_correct",))
CLARIFY_CORRECTNESS_APPROX = Judge(
    name="clarify-correctness-approx", kind="offline", decides="is the final answer correct? (offline approximation)",
    current=APPROX_VERSION, positive="correct",
    labelled_set="judges/data/labelled/clarify_final_answers.jsonl (real replies of two local models to the complete "
                 "controls, labelled by rule final-correct-1; the constructed answers as a check)",
    validator=validate_clarify_correctness_approx,
    fields=("final_correct_approx",))
