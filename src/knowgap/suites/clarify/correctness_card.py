"""The clarify suite's final-answer judges as judges of the catalogue, declared here where they live with their
validators: ``clarify-correctness`` (the model judge, ``correctness_prompt``) and ``clarify-correctness-approx``
(its offline approximation: the reference terms present, no further question). Both are measured by the card rule
(issue 37) on the same labelled set: real final answers of two local models to the complete controls
(``judges/data/labelled/clarify_final_answers.jsonl``, :mod:`knowgap.suites.clarify.labelled_replies`, rule
final-correct-1), with the final answers built from the clarify cases, labelled by construction
(:func:`clarify_answer_items`), as a discrimination check only (in the approximation's ``extra``; the model judge's
by :func:`validate_clarify_correctness_constructed`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from knowgap.errors import InputError
from knowgap.jsonl import write_jsonl
from knowgap.judges.cards import (
    Estimate,
    Labelling,
    ValidityCard,
    binary_card,
    binary_measures,
    confusion_of,
    group_measures,
    measured_dir,
    sha256_files,
)
from knowgap.judges.clarification import clarification_signals
from knowgap.judges.judge import Judge, Progress
from knowgap.judges.labelled_sets import DEFAULT_JUDGE_MODEL, DEFAULT_MODEL_LIMIT, stratified
from knowgap.judges.offline_cards import offline_card, sample_method
from knowgap.judges.validation import stratified_sample
from knowgap.suites.clarify.dataset import CASES_FILE, ClarifyCase, load_cases
from knowgap.suites.clarify.judging import APPROX_VERSION, approximate_correct, parse_verdict
from knowgap.suites.clarify.labelled_replies import RULE_FILE, FinalAnswer, final_answers
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


def approx_verdict(answer: str, case: ClarifyCase) -> bool:
    """The offline approximation as a run decides it on a final answer (``final_correct_approx``)."""
    asked = clarification_signals(answer, case.query).asked
    return approximate_correct(answer, case.conclusion_terms, asked)[0]


def constructed_approx_check() -> dict[str, Estimate | float | str]:
    """The discrimination check on the constructed answers (:func:`clarify_answer_items`): balanced accuracy,
    sensitivity and specificity of the approximation on all of them, keys ``constructed_*``."""
    items, _ = clarify_answer_items()
    measures = binary_measures(confusion_of([approx_verdict(it.answer, it.case) for it in items],
                                            [it.correct for it in items])[0])
    out: dict[str, Estimate | float | str] = {"constructed_n": float(len(items))}
    for name in ("balanced_accuracy", "sensitivity", "specificity"):
        out[f"constructed_{name}"] = measures[name]
    return out


def _labelled_answers(path: Path | None) -> tuple[list[FinalAnswer], Path, dict[str, ClarifyCase]]:
    """The labelled real final answers (``path``: another file in the same format), the file read and the clarify
    cases by id; an answer to no complete case is an InputError naming the file, line and field."""
    answers, path = final_answers(path)
    cases = {c.id: c for c in load_cases(CASES_FILE)}
    for line, row in enumerate(answers, start=1):
        if row.case_id not in cases or cases[row.case_id].deficient:
            raise InputError(str(path), f"{row.case_id!r} is not a complete clarify case", line=line, field="case_id")
    return answers, path, cases


def validate_clarify_correctness_approx(data_dir: Path | None, limit: int | None = None,
                                        judge_model: str | None = None,
                                        progress: Progress | None = None, *,
                                        path: Path | None = None) -> ValidityCard:
    """The offline approximation of final correctness (conclusion terms present, no further question) on real
    final answers: the replies of local models to the clarify suite's complete controls
    (``judges/data/labelled/clarify_final_answers.jsonl``, labelled by rule final-correct-1 before it ran).
    ``extra``: sensitivity and specificity per model and language, and the constructed answers' figures
    (:func:`constructed_approx_check`, a discrimination check only). ``path``: another file in the same format."""
    answers, path, cases = _labelled_answers(path)
    chosen = stratified([a.correct for a in answers], limit)
    rows = [answers[i] for i in chosen]
    card = offline_card("clarify-correctness-approx", APPROX_VERSION, "correct final answer",
                        f"judges/data/labelled/{path.name}", sha256_files([path, CASES_FILE]),
                        [r.correct for r in rows], lambda i: approx_verdict(rows[i].reply, cases[rows[i].case_id]),
                        progress, method=sample_method(len(answers), chosen, limit, "real final answers to the "
                                                       "complete controls")
                        + "; the constructed answers are a discrimination check in extra (constructed_*)",
                        notes=_REAL_NOTES, groups=[f"{r.model}" for r in rows], claim=APPROX_CLAIM,
                        item_languages=[r.lang for r in rows], writers=[r.model for r in rows],
                        replies_how=REAL_ANSWERS_HOW, labelling=FINAL_CORRECT_LABELLING)
    for lang in sorted({r.lang for r in rows}):
        members = [i for i, r in enumerate(rows) if r.lang == lang]
        verdicts = [approx_verdict(rows[i].reply, cases[rows[i].case_id]) for i in members]
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


def judge_final_answers(spec: str, items: Sequence[tuple[ClarifyCase, str]], progress: Progress | None = None,
                        ) -> tuple[list[str | None], float]:
    """The model judge's verdict (``correct`` / ``partially_correct`` / ``incorrect``; None: the call failed or its
    reply could not be parsed) on each (case, final answer) of a one-turn trial, prompted as a run prompts it (the
    conversation before the answer is the user's question), one call at a time through the model gateway, and the
    seconds it took."""
    from knowgap.engine.gateway import ModelGateway
    from knowgap.models.structured import ParseFailure
    from knowgap.models.types import ChatRequest

    verdicts: list[str | None] = []
    start = time.perf_counter()
    with ModelGateway.open(run_id=f"validate-{CORRECTNESS_VERSION}") as gateway:
        for done, (case, answer) in enumerate(items, start=1):
            user = "用户" if case.lang == "zh" else "User"
            prompt = correctness_prompt(case, f"{user}: {case.query}", answer)
            call = gateway.call_sync(spec, "judge", ChatRequest.simple(prompt, max_tokens=150, seed=0))
            parsed = None if call.response is None else parse_verdict(call.response.text)
            verdicts.append(None if parsed is None or isinstance(parsed, ParseFailure) else parsed.verdict)
            if progress:
                progress(done, len(items))
    return verdicts, time.perf_counter() - start


def _said_correct(verdicts: Sequence[str | None]) -> list[bool | None]:
    """The metric's reading of each verdict: ``correct`` counts, ``partially_correct`` does not, None stays None."""
    return [None if v is None else v == "correct" for v in verdicts]


def validate_clarify_correctness_constructed(data_dir: Path | None, limit: int | None = DEFAULT_MODEL_LIMIT,
                                             judge_model: str | None = None,
                                             progress: Progress | None = None) -> ValidityCard:
    """The discrimination check of the model judge on the constructed answers (:func:`clarify_answer_items`), never
    its card's figure; ``data_dir`` is not read."""
    spec = judge_model or DEFAULT_JUDGE_MODEL
    items, path = clarify_answer_items()
    chosen = stratified([it.correct for it in items], limit)
    rows = [items[i] for i in chosen]
    verdicts, seconds = judge_final_answers(spec, [(r.case, r.answer) for r in rows], progress)
    return binary_card("clarify-correctness", CORRECTNESS_VERSION, _said_correct(verdicts), [r.correct for r in rows],
                       positive="correct final answer", dataset=f"clarify/{path.name} (constructed answers)",
                       dataset_sha256=sha256_files([path]), seconds=seconds,
                       judge_model=spec, method=sample_method(len(items), chosen, limit, "constructed final answers")
                       + "; the conversation shown to the judge is the user's question alone; "
                         "'partially_correct' counts as not correct; unparsed or failed calls count as wrong",
                       notes=_NOTES, claim=CORRECTNESS_CLAIM, item_languages=[r.case.lang for r in rows],
                       writers=[None] * len(rows), replies_how=ANSWERS_HOW, labelling=BY_CONSTRUCTION)


class FinalAnswerVerdict(BaseModel):
    """One judged real final answer (the per-item record written beside the card)."""

    id: str
    case_id: str
    model: str
    lang: str
    correct: bool
    """The annotator's label (rule final-correct-1)."""
    verdict: str | None
    """The judge's verdict (correct / partially_correct / incorrect); None: the call failed or was not parsed."""


_MODEL_NOTES = (
    "The model judge on the labelled set of the approximation's card (clarify-correctness-approx): real final answers "
    "of local:qwen2.5-1.5b and local:qwen2.5-0.5b to the clarify complete controls (one turn: the first reply is the "
    "final answer), labelled correct or not against the case's reference conclusion by rule final-correct-1, the "
    "same rule and labels (same commit), committed before any judge ran on them; no new labels. The judge is "
    "prompted as a run prompts it (question, facts, reference conclusion, the user's question as the conversation, "
    "the answer); 'partially_correct' counts as not correct, as final_correct does. Deficient cases' final answers "
    "(after a clarification turn, --turns) are not in the set. extra: per model, per language and per model and "
    "language (n_, positives_, balanced_accuracy_, sensitivity_, specificity_), and the verdicts' counts "
    "(verdict_*). Measured 2026-12-06 with local:qwen2.5-1.5b (all 34 answers, 11.1 s each, no parse failure): "
    "balanced accuracy 0.61 [0.44, 0.75], sensitivity 8/12, specificity 12/22; en 0.62 (4 correct answers: it "
    "called 3 of them incorrect, all 5 wrong ones incorrect), zh 0.64 (8 correct: 7 called correct; 17 wrong: 10 "
    "called correct). In zh it accepts answers with the opposite outcome ('the tenant must move' where a sale does "
    "not break the lease, 'the flat is the husband's' where it is joint property, a customised cup returnable "
    "within seven days) and wrong figures (100,000 where the principal is 90,000; an invented date), so "
    "final_correctness reads high on zh; neither language has 10 answers of each class, so no figure could clear "
    "the bar. The constructed answers it was measured on before (28: 1.00; superseded/, issued 2026-12-05) stay a "
    "discrimination check (validate_clarify_correctness_constructed), never this card's figure: there the wrong "
    "answers are another case's conclusion or questions only, never the same question's opposite outcome.")


def measure_clarify_correctness(limit: int | None, judge_model: str, progress: Progress | None = None, *,
                                path: Path | None = None) -> tuple[ValidityCard, list[FinalAnswerVerdict]]:
    """The card of the model judge (``judge_model``) on the labelled real final answers (all, or ``limit`` of them
    by a seeded sample stratified by language and label) and each judged answer's verdict; ``path``: another file in
    the format of ``clarify_final_answers.jsonl``."""
    answers, path, cases = _labelled_answers(path)
    chosen = stratified_sample(answers, [(a.lang, a.correct) for a in answers], limit)
    rows = [answers[i] for i in chosen]
    verdicts, seconds = judge_final_answers(judge_model, [(cases[r.case_id], r.reply) for r in rows], progress)
    said = _said_correct(verdicts)
    labels = [r.correct for r in rows]
    extra: dict[str, Estimate | float | str] = {}
    for key in (lambda r: r.model, lambda r: r.lang, lambda r: f"{r.model}_{r.lang}"):
        extra.update(group_measures([key(r) for r in rows], said, labels))
    for name in ("correct", "partially_correct", "incorrect", None):
        extra[f"verdict_{name or 'unparsed'}"] = float(sum(v == name for v in verdicts))
    by_lang = ", ".join(f"{lang} {sum(r.lang == lang for r in rows)}" for lang in sorted({r.lang for r in rows}))
    sample = (f"all {len(answers)} labelled real final answers" if len(rows) == len(answers) else
              f"a seeded sample (seed 0) of {len(rows)} of {len(answers)} labelled real final answers, stratified by "
              "language and label (stratifying on the label leaves balanced accuracy unbiased)")
    card = binary_card("clarify-correctness", CORRECTNESS_VERSION, said, labels, positive="correct final answer",
                       dataset=f"judges/data/labelled/{path.name}", dataset_sha256=sha256_files([path, CASES_FILE]),
                       seconds=seconds, judge_model=judge_model,
                       method=f"{sample} ({by_lang}), the set labelled for clarify-correctness-approx; the "
                              "conversation shown to the judge is the user's question (one turn, as in a run); "
                              "'partially_correct' counts as not correct; unparsed or failed calls count as wrong",
                       notes=_MODEL_NOTES, extra=extra, claim=CORRECTNESS_CLAIM,
                       item_languages=[r.lang for r in rows], writers=[r.model for r in rows],
                       replies_how=REAL_ANSWERS_HOW, labelling=FINAL_CORRECT_LABELLING)
    return card, [FinalAnswerVerdict(id=r.id, case_id=r.case_id, model=r.model, lang=r.lang, correct=r.correct,
                                     verdict=v) for r, v in zip(rows, verdicts, strict=True)]


def write_verdicts(card: ValidityCard, verdicts: Sequence[FinalAnswerVerdict], folder: Path | None = None) -> Path:
    """Each judged answer's verdict beside the cards measured here (``KNOWGAP_HOME/judge_cards/KEY.items.jsonl``,
    or ``folder``)."""
    return write_jsonl((folder or measured_dir()) / f"{card.key}.items.jsonl", [v.model_dump() for v in verdicts])


def validate_clarify_correctness(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                                 progress: Progress | None = None) -> ValidityCard:
    """The catalogue's validator: the model judge on the labelled real final answers (all 34 unless ``limit``), the
    per-answer verdicts written beside the cards measured here; ``data_dir`` is not read."""
    card, verdicts = measure_clarify_correctness(limit, judge_model or DEFAULT_JUDGE_MODEL, progress)
    write_verdicts(card, verdicts)
    return card


CLARIFY_CORRECTNESS = Judge(
    name="clarify-correctness", kind="model", decides="is the final answer correct given the clarified facts?",
    current=CORRECTNESS_VERSION, positive="correct",
    labelled_set="judges/data/labelled/clarify_final_answers.jsonl (real replies of two local models to the complete "
                 "controls, labelled by rule final-correct-1 for clarify-correctness-approx; the constructed answers "
                 "as a check)",
    validator=validate_clarify_correctness, fields=("final_correct",), needs_data=False)
CLARIFY_CORRECTNESS_APPROX = Judge(
    name="clarify-correctness-approx", kind="offline", decides="is the final answer correct? (offline approximation)",
    current=APPROX_VERSION, positive="correct",
    labelled_set="judges/data/labelled/clarify_final_answers.jsonl (real replies of two local models to the complete "
                 "controls, labelled by rule final-correct-1; the constructed answers as a check)",
    validator=validate_clarify_correctness_approx,
    fields=("final_correct_approx",))
