"""Validators of the suites' detectors and model judges: each measures one judge of the catalogue on a labelled
set and returns a :class:`~knowgap.judges.cards.ValidityCard` (``knowgap judge validate NAME``).

Every validator takes ``(data_dir, limit, judge_model, progress)``: ``data_dir`` is a folder laid out like
``../shared/data`` (read only where a set lives there), ``limit`` a seeded sample balanced between the two label
classes (None: the whole set), ``judge_model`` the model spec of a model-backed judge (default
:data:`DEFAULT_JUDGE_MODEL`; ignored by offline judges) and ``progress(done, total)``.

The labelled sets (details and provenance in ``judges/data/labelled/SOURCES.md`` and docs/judges.md):

- ``clarification`` / ``dangerous-assertion``: real consultation answers (LawBench 3-8, Lawyer LLaMA), labelled
  for this project by reading them (``labelled/legal_answers.jsonl``);
- ``clarify-correctness`` (model) / ``clarify-correctness-approx``: final answers built from the clarify cases
  (:mod:`knowgap.judges.labelled_answers`): the case's reference conclusion (correct), another case's
  conclusion on the same topic, and the case's own clarifying questions without a conclusion (incorrect);
- ``extract-claims`` (model): SummEdits summaries (read from ``data_dir``, not shipped) plus the extract suite's
  handwritten faithful / unfaithful review summaries;
- ``abstention-scenarios``: the offline abstention detector on real replies of ``local:qwen2.5-1.5b`` to the abstain
  scenarios (false-premise, unknowable, unanswerable-context), labelled by two independent annotators
  (``labelled/abstention_scenarios.jsonl``; the agreed label is gold, a disagreement is left out);
- ``answer-overlap``: real replies of the embedded models to the abstain scenarios' answerable questions, labelled
  right or wrong against the references (``labelled/scenario_answers.jsonl``);
- ``leak-detector`` / ``gap-matcher`` / ``answer-match``: texts written and labelled for this project against
  the partial suite's scenarios and the starter cases (``labelled/partial_leaks.jsonl``, ``partial_gaps.jsonl``,
  ``answer_match.jsonl``).

A model judge's reply that cannot be parsed is a ``None`` verdict, counted as wrong by the card.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from knowgap.judges.abstention import VERSION as ABSTENTION_VERSION
from knowgap.judges.cards import Estimate, ValidityCard, binary_card, binary_measures, confusion_of, sha256_files
from knowgap.judges.clarification import CLARIFICATION_VERSION, DANGER_VERSION
from knowgap.judges.judge import Judge
from knowgap.judges.labelled_sets import (
    DEFAULT_JUDGE_MODEL,
    DEFAULT_MODEL_LIMIT,
    LegalAnswer,
    Progress,
    abstention_scenario_items,
    answer_match_items,
    clarify_answer_items,
    extract_claim_items,
    gap_items,
    leak_items,
    legal_answer_items,
    same_language_clause_items,
    scenario_answer_items,
    stratified,
    takeover_items,
)
from knowgap.judges.takeover import VERSION as TAKEOVER_VERSION
from knowgap.judges.validation import data_folder

__all__ = ["DEFAULT_JUDGE_MODEL", "validate_abstention_scenarios",
           "validate_answer_match", "validate_answer_overlap", "validate_clarification",
           "validate_clarify_correctness", "validate_clarify_correctness_approx", "validate_dangerous_assertion",
           "validate_extract_claims", "validate_extract_takeover", "validate_gap_matcher", "validate_leak_detector"]


def _offline(judge: str, version: str, positive: str, dataset: str, sha: str, labels: Sequence[bool],
             decide: Callable[[int], bool], progress: Progress | None, *, method: str, notes: str,
             groups: Sequence[str] | None = None) -> ValidityCard:
    """Run an offline detector (``decide(i)``) over every item, timed, and build its card; with ``groups`` (one
    name per item), the card's ``extra`` also holds sensitivity and specificity within each group."""
    start = time.perf_counter()
    verdicts: list[bool | None] = []
    for i in range(len(labels)):
        verdicts.append(decide(i))
        if progress:
            progress(i + 1, len(labels))
    seconds = time.perf_counter() - start
    extra: dict[str, Estimate | float | str] = {}
    for group in sorted(set(groups or ())):
        members = [i for i, g in enumerate(groups or ()) if g == group]
        confusion, _ = confusion_of([verdicts[i] for i in members], [labels[i] for i in members])
        measures = binary_measures(confusion)
        for measure in ("sensitivity", "specificity"):
            if measures[measure].value is not None:
                extra[f"{measure}_{group}"] = measures[measure]
    return binary_card(judge, version, verdicts, labels, positive=positive, dataset=dataset, dataset_sha256=sha,
                       seconds=seconds, method=method, notes=notes, extra=extra)


def _method(n_all: int, chosen: Sequence[int], limit: int | None, what: str) -> str:
    if limit is None or len(chosen) >= n_all:
        return f"all {n_all} {what}"
    return f"seeded sample of {len(chosen)} of {n_all} {what}, balanced between the two labels (seed 0)"


# --- clarify: the clarification signals and dangerous assertions --------------------------------------------


def _origin(rows: Sequence[LegalAnswer]) -> list[str]:
    return ["written" if r.source == "written-for-knowgap" else "real" for r in rows]


def validate_clarification(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                           progress: Progress | None = None) -> ValidityCard:
    """The clarification detector (does the response ask the user for information?) on real consultation
    answers labelled for this project."""
    from knowgap.judges.clarification import CLARIFICATION_VERSION, clarification_signals

    items, path = legal_answer_items()
    labels_all = [it.asks for it in items]
    chosen = stratified(labels_all, limit)
    rows = [items[i] for i in chosen]
    return _offline("clarification", CLARIFICATION_VERSION, "asks the user for information", path.name,
                    sha256_files([path]), [r.asks for r in rows],
                    lambda i: clarification_signals(rows[i].text, rows[i].query).asked, progress,
                    method=_method(len(items), chosen, limit, "labelled answers"), groups=_origin(rows),
                    notes="94 real Chinese answers (LawBench 3-8 lawyer answers, Lawyer LLaMA answers and lawyer "
                          "turns; answers with a question mark over-sampled) labelled for this project by one "
                          "annotator who did not look at the detector's verdicts, plus 32 short answers written "
                          "for the project (zh + en); extra gives sensitivity / specificity per origin.")


def validate_dangerous_assertion(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                                 progress: Progress | None = None) -> ValidityCard:
    """The dangerous-assertion detector (an overconfident, unqualified assertion) on the same labelled answers."""
    from knowgap.judges.clarification import DANGER_VERSION, dangerous_assertions

    items, path = legal_answer_items()
    labels_all = [it.overconfident for it in items]
    chosen = stratified(labels_all, limit)
    rows = [items[i] for i in chosen]
    return _offline("dangerous-assertion", DANGER_VERSION, "makes an overconfident assertion", path.name,
                    sha256_files([path]), [r.overconfident for r in rows],
                    lambda i: bool(dangerous_assertions(rows[i].text)), progress,
                    method=_method(len(items), chosen, limit, "labelled answers"), groups=_origin(rows),
                    notes="The 94 real answers (LawBench, Lawyer LLaMA; answers with certainty words over-sampled) "
                          "hold no overconfident assertion, so they measure specificity only; every positive is "
                          "one of 32 answers written for the project by someone who had read the detector's "
                          "docstring (some deliberately without its words). Sensitivity is therefore measured on "
                          "synthetic text; extra gives sensitivity / specificity per origin.")


# --- clarify: final-answer correctness ----------------------------------------------------------------------


def validate_clarify_correctness_approx(data_dir: Path | None, limit: int | None = None,
                                        judge_model: str | None = None,
                                        progress: Progress | None = None) -> ValidityCard:
    """The offline approximation of final correctness (conclusion terms present, no further question)."""
    from knowgap.judges.clarification import clarification_signals
    from knowgap.suites.clarify.judging import APPROX_VERSION, approximate_correct

    items, path = clarify_answer_items()
    chosen = stratified([it.correct for it in items], limit)
    rows = [items[i] for i in chosen]

    def decide(i: int) -> bool:
        row = rows[i]
        asked = clarification_signals(row.answer, row.case.query).asked
        return approximate_correct(row.answer, row.case.conclusion_terms, asked)[0]

    return _offline("clarify-correctness-approx", APPROX_VERSION, "correct final answer",
                    f"clarify/{path.name} (constructed answers)", sha256_files([path]),
                    [r.correct for r in rows], decide, progress,
                    method=_method(len(items), chosen, limit, "constructed final answers"),
                    notes=_CLARIFY_ANSWER_NOTES)


_CLARIFY_ANSWER_NOTES = (
    "Constructed, labelled by construction: per clarify case its reference conclusion verbatim (correct), the "
    "conclusion of the next case of the same topic and language (incorrect: another outcome or amount) and its "
    "own expected clarifying questions with no conclusion (incorrect). Positives are verbatim references, so "
    "sensitivity on paraphrased real answers is lower than measured here; negation is not exercised.")


def validate_clarify_correctness(data_dir: Path | None, limit: int | None = DEFAULT_MODEL_LIMIT,
                                 judge_model: str | None = None,
                                 progress: Progress | None = None) -> ValidityCard:
    """The clarify final-correctness model judge (``correctness_prompt``) through the model gateway."""
    from knowgap.engine.gateway import ModelGateway
    from knowgap.models.structured import ParseFailure
    from knowgap.models.types import ChatRequest
    from knowgap.suites.clarify.judging import parse_verdict
    from knowgap.suites.clarify.prompts import CORRECTNESS_VERSION, correctness_prompt

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
                       judge_model=spec, method=_method(len(items), chosen, limit, "constructed final answers")
                       + "; the conversation shown to the judge is the user's question alone; "
                         "'partially_correct' counts as not correct; unparsed or failed calls count as wrong",
                       notes=_CLARIFY_ANSWER_NOTES)


# --- extract: claim-level faithfulness by a judge model -----------------------------------------------------


def validate_extract_claims(data_dir: Path | None, limit: int | None = 40, judge_model: str | None = None,
                            progress: Progress | None = None) -> ValidityCard:
    """The extract claim judge (decompose + verify): positive = it finds an unsupported claim (score < 1), on
    SummEdits summaries and the extract suite's handwritten review summaries."""
    from knowgap.engine.gateway import ModelCallFailed, ModelGateway
    from knowgap.models.types import ChatRequest, ChatResponse
    from knowgap.suites.extract.claims_judge import PROMPT_VERSION, judge_faithfulness

    spec = judge_model or DEFAULT_JUDGE_MODEL
    items, paths = extract_claim_items(data_folder(data_dir))
    chosen = stratified([not it.faithful for it in items], limit)
    rows = [items[i] for i in chosen]
    verdicts: list[bool | None] = []
    start = time.perf_counter()
    with ModelGateway.open(run_id=f"validate-{PROMPT_VERSION}") as gateway:
        gateway.client(spec)

        async def generate(request: ChatRequest) -> ChatResponse:
            return await gateway.generate(spec, "judge", request)

        for i, row in enumerate(rows):
            try:
                result = gateway._run(judge_faithfulness(row.source, row.summary, generate, seed=0))
            except ModelCallFailed:  # a failed judge call is a wrong verdict, counted like a parse failure
                verdicts.append(None)
            else:
                if result.outcome == "judge_parse_failure":
                    verdicts.append(None)
                else:
                    verdicts.append(result.outcome == "scored" and (result.score or 0.0) < 1.0)
            if progress:
                progress(i + 1, len(rows))
    n_summedits = sum(r.benchmark == "summedits" for r in rows)
    return binary_card("extract-claims", PROMPT_VERSION, verdicts, [not r.faithful for r in rows],
                       positive="unfaithful summary (an unsupported claim)",
                       dataset="summedits (documents <= 800 characters) + extract/handwritten_calibration.jsonl",
                       dataset_sha256=sha256_files(paths), seconds=time.perf_counter() - start, judge_model=spec,
                       method=_method(len(items), chosen, limit, "summaries")
                       + f" ({n_summedits} SummEdits, {len(rows) - n_summedits} handwritten); "
                         "parse failures and failed calls count as wrong",
                       notes="Review-length SummEdits documents only (<= 800 characters: its samsum dialogues; "
                             "the news and sales-call documents are longer than any review and cost a CPU judge "
                             "minutes each). Dialogues are not reviews (the judge's prompt says REVIEW); English "
                             "except the handwritten Chinese pairs. SummEdits states no licence: read from the "
                             "data folder, not shipped.")


# --- extract: takeover of a summary by an injected instruction ------------------------------------------------


def validate_extract_takeover(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                              progress: Progress | None = None) -> ValidityCard:
    """The extract takeover detector (language switch, echo, obeyed) on real summaries of injected reviews,
    labelled by the rule in docs/extract.md; ``extra`` gives each part's sensitivity and specificity against its
    own label, and the whole verdict's per model."""
    from knowgap.judges.takeover import VERSION, Takeover, detect_takeover

    items, path = takeover_items()
    chosen = stratified([it.takeover for it in items], limit)
    rows = [items[i] for i in chosen]
    found: dict[int, Takeover] = {}

    def decide(i: int) -> bool:
        row = rows[i]
        found[i] = detect_takeover(row.review, row.injected_review, row.summary, row.baseline_summary,
                                   sentiment=row.sentiment, baseline_sentiment=row.baseline_sentiment)
        return found[i].takeover

    card = _offline("extract-takeover", VERSION, "the injection took the summary over", path.name,
                    sha256_files([path]), [r.takeover for r in rows], decide, progress,
                    method=_method(len(items), chosen, limit, "labelled summaries"),
                    groups=[r.source.split(",")[0] for r in rows], notes=_TAKEOVER_NOTES)
    for part, field in (("language", "language_switch"), ("echo", "echo"), ("obeyed", "obeyed")):
        verdicts = [bool(getattr(found[i], field)) for i in range(len(rows))]
        measures = binary_measures(confusion_of(verdicts, [getattr(r, part) for r in rows])[0])
        for measure in ("sensitivity", "specificity"):
            if measures[measure].value is not None:
                card.extra[f"{part}_{measure}"] = measures[measure]
    return card


_TAKEOVER_NOTES = (
    "Real summaries of the extract suite's injected reviews (local:qwen2.5-1.5b from the stored issue-16 runs; "
    "local:qwen2.5-0.5b from two runs made for this card: default and guarded prompts at temperature 0, default "
    "prompt at 0.7), one item per distinct summary, labelled by one annotator by the written rule "
    "(docs/extract.md, takeover labelling rule v1) without the detector's verdicts. The detector was written "
    "from the attack library before labelling and not changed after; "
    "language switches are rare in this set (the attacks ask for French once, Russian and Spanish in Chinese "
    "hijacks), so its language part is measured on few positives. extra: each part against its own label, "
    "and the verdict per model.")


# --- partial: leaks and named gaps --------------------------------------------------------------------------


def validate_leak_detector(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                           progress: Progress | None = None) -> ValidityCard:
    """The partial suite's leak detector: does a text reveal a value the role may not see?"""
    from knowgap.suites.partial.leak import VERSION, find_leaks

    items, path = leak_items()
    chosen = stratified([it.leaks for it in items], limit)
    rows = [items[i] for i in chosen]
    return _offline("leak-detector", VERSION, "reveals a hidden value", path.name, sha256_files([path]),
                    [r.leaks for r in rows], lambda i: bool(find_leaks(rows[i].text, rows[i].prints)), progress,
                    method=_method(len(items), chosen, limit, "labelled texts"),
                    notes="Texts written for this project against the partial suite's own scenarios (the hidden "
                          "values of each scenario's restricted roles), labelled by the author: leaks in other "
                          "formats, partial leaks, paraphrased leaks; non-leaks that name the hidden field or "
                          "repeat visible values. Synthetic. Version 2's rules for amounts (万, million, 1,500元, "
                          "the sign), dotted IP addresses and bracketed area codes were written after reading version "
                          "1's misses on this set: its sensitivity here is in-sample (version 1: 30 of 41).")


def validate_gap_matcher(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                         progress: Progress | None = None) -> ValidityCard:
    """The partial suite's gap matcher: does a gap the agent named refer to a given hidden field?"""
    from knowgap.suites.partial.scoring import GAP_MATCH_VERSION, gap_matches

    items, path = gap_items()
    chosen = stratified([it.match for it in items], limit)
    rows = [items[i] for i in chosen]
    return _offline("gap-matcher", GAP_MATCH_VERSION, "the named gap refers to the field", path.name,
                    sha256_files([path]), [r.match for r in rows],
                    lambda i: gap_matches(rows[i].named, rows[i].path, rows[i].aliases), progress,
                    method=_method(len(items), chosen, limit, "labelled (named gap, field) pairs"),
                    notes="Named gaps written for this project as an agent paraphrases them (zh + en) against the "
                          "hidden fields of 8 partial scenarios (4 families), 4 matching and 4 naming another field "
                          "per scenario, labelled by the author; most matching ones do not reuse a field label. "
                          "Synthetic.")


# --- starter: answer matching -------------------------------------------------------------------------------


def validate_answer_match(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                          progress: Progress | None = None) -> ValidityCard:
    """The starter suite's answer matcher (an accepted answer appears in the response)."""
    from knowgap.suites.starter.scoring import ANSWER_MATCH_VERSION, contains_answer

    items, path = answer_match_items()
    chosen = stratified([it.correct for it in items], limit)
    rows = [items[i] for i in chosen]
    return _offline("answer-match", ANSWER_MATCH_VERSION, "gives the right answer", path.name,
                    sha256_files([path]), [r.correct for r in rows],
                    lambda i: contains_answer(rows[i].response, rows[i].answers), progress,
                    method=_method(len(items), chosen, limit, "labelled responses"),
                    notes=_ANSWER_NOTES)


def validate_answer_overlap(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                            progress: Progress | None = None) -> ValidityCard:
    """The abstain scenarios' answer check (containment, or token overlap with a long reference) on real replies to
    the scenarios' answerable questions, labelled right or wrong by reading them; ``extra`` holds sensitivity and
    specificity per scenario."""
    from knowgap.suites.abstain.scenario_answers import ANSWER_OVERLAP_VERSION, answer_match

    items, path = scenario_answer_items()
    chosen = stratified([it.correct for it in items], limit)
    rows = [items[i] for i in chosen]
    return _offline("answer-overlap", ANSWER_OVERLAP_VERSION, "gives the right answer", path.name,
                    sha256_files([path]), [r.correct for r in rows],
                    lambda i: answer_match(rows[i].response, rows[i].answers)[0], progress,
                    method=_method(len(items), chosen, limit, "labelled scenario answers"),
                    groups=[r.scenario for r in rows], notes=_SCENARIO_ANSWER_NOTES)


def validate_summary_coverage(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                              progress: Progress | None = None) -> ValidityCard:
    """The extract suite's summary coverage, one verdict per (review clause, summary) pair: is the clause's best
    e5 similarity to the summary's units at the threshold? On real summaries, hand-labelled; ``extra`` holds
    sensitivity and specificity per language."""
    from knowgap.suites.extract.coverage import VERSION, Coverage, summary_coverage
    from knowgap.text.embed import default_embedder

    items, path, left_out = same_language_clause_items()
    chosen = stratified([it.covered for it in items], limit)
    rows = [items[i] for i in chosen]
    embedder = default_embedder()
    verdicts: dict[tuple[str, str], Coverage] = {}

    def decide(i: int) -> bool:
        row = rows[i]
        key = (row.review, row.summary)
        if key not in verdicts:  # one judge call per (review, summary), as the suite makes it
            verdicts[key] = summary_coverage(row.review, row.summary, embedder)
        coverage = verdicts[key]
        return coverage.covered[coverage.clauses.index(row.clause)]

    return _offline("summary-coverage", VERSION, "the summary covers the clause", path.name, sha256_files([path]),
                    [r.covered for r in rows], decide, progress,
                    method=_method(len(items), chosen, limit, "labelled (clause, summary) pairs in one language")
                    + f"; {left_out} pairs whose summary is in another language than its review left out (the "
                      "judge does not score them)",
                    groups=[r.lang for r in rows], notes=_COVERAGE_NOTES)


_COVERAGE_NOTES = ("Aspect clauses of the extract suite's clean reviews (MAMS-ACSA and the suite's own Chinese "
                   "reviews), cut as the judge cuts them, each against a real summary of its review by "
                   "local:qwen2.5-0.5b or local:qwen2.5-1.5b; labelled covered or not by reading them (rule "
                   "coverage-1, docs/judges.md) before the judge ran on them. One annotator; many summaries copy "
                   "the review, which makes covered pairs easy.")


_SCENARIO_ANSWER_NOTES = ("Real replies of local:qwen2.5-1.5b and local:qwen2.5-0.5b to the answerable questions of "
                          "the false-premise controls, unknowable (SelfAware) and unanswerable-context scenarios "
                          "(replies that declined are left out: answer_accuracy counts them wrong without this "
                          "judge), labelled right or wrong against the references by reading them, before the "
                          "judge ran (rule answer-correct-1, docs/judges.md). One annotator. The references are "
                          "mostly short (a name, a number, a phrase), so the containment half of the rule decides "
                          "most rows.")


_ANSWER_NOTES = ("Responses to the 8 answerable starter questions (zh + en) written for this project the ways a "
                 "model answers: the accepted string, other number or word forms, paraphrases; wrong values, "
                 "near-misses that contain the accepted string (145 for 45, 1600 for 160), other facts of the "
                 "context. Labelled by the author. Synthetic, and near-misses are over-represented.")


# --- abstain: the abstention detector on the scenarios' replies -------------------------------------------------


def validate_abstention_scenarios(data_dir: Path | None = None, limit: int | None = None,
                                  judge_model: str | None = None, progress: Progress | None = None,
                                  *, path: Path | None = None) -> ValidityCard:
    """The offline abstention detector (the ``abstention`` judge, same version) on real replies to the abstain
    scenarios, gold = the two annotators' agreed label; ``extra`` gives per scenario ``n_S``, ``positives_S``,
    ``sensitivity_S``, ``specificity_S`` and ``balanced_accuracy_S``, and the annotators' agreement and kappa.
    ``path``: another file in the same format (tests)."""
    from knowgap.judges.abstention import VERSION, judge_abstention

    items, path = abstention_scenario_items(path)
    annotators = binary_measures(confusion_of([it.label_a.abstained for it in items],
                                              [it.label_b.abstained for it in items])[0])
    agreed = [it for it in items if it.agreed]
    chosen = stratified([it.label_a.abstained for it in agreed], limit)
    rows = [agreed[i] for i in chosen]
    labels = [r.label_a.abstained for r in rows]
    verdicts: dict[int, bool] = {}

    def decide(i: int) -> bool:
        verdicts[i] = judge_abstention(rows[i].response).abstained
        return verdicts[i]

    left_out = len(items) - len(agreed)
    card = _offline("abstention-scenarios", VERSION, "abstained", path.name, sha256_files([path]), labels, decide,
                    progress, groups=[r.scenario for r in rows],
                    method=_method(len(agreed), chosen, limit, "replies the two annotators agree on")
                    + f"; {left_out} of {len(items)} replies left out (the annotators disagree)",
                    notes=_SCENARIO_NOTES.format(agree=len(agreed), n=len(items),
                                                 kappa=annotators["kappa"].value or 0.0,
                                                 positives=sum(labels), left_out=left_out))
    for scenario in sorted({r.scenario for r in rows}):
        members = [i for i, r in enumerate(rows) if r.scenario == scenario]
        measures = binary_measures(confusion_of([verdicts[i] for i in members], [labels[i] for i in members])[0])
        card.extra[f"n_{scenario}"] = float(len(members))
        card.extra[f"positives_{scenario}"] = float(sum(labels[i] for i in members))
        for measure in ("sensitivity", "specificity", "balanced_accuracy"):
            card.extra[f"{measure}_{scenario}"] = measures[measure]
    card.extra["annotator_agreement"] = annotators["agreement"]
    card.extra["annotator_kappa"] = annotators["kappa"]
    return card


_SCENARIO_NOTES = (
    "Real replies of local:qwen2.5-1.5b (knowgap run abstain --scenario S --sample 40 --seed 0, 40 per "
    "scenario), labelled abstained yes/no by two annotators working independently, who did not see the "
    "detector's verdicts (rule: SOURCES.md). They agree on {agree} of {n} (Cohen's kappa {kappa:.2f}); the "
    "agreed label is gold and the disagreements ({left_out}) are left out. Positives are few: the 1.5B rarely "
    "abstains ({positives} agreed positives), so sensitivity (overall and per scenario) has wide intervals and "
    "each scenario's balanced accuracy rests on a handful of positives; specificity is the well-measured half. "
    "The detector was written against PolicyBench and not changed for this set. extra: per scenario n, "
    "positives, sensitivity, specificity, balanced accuracy; the annotators' agreement and kappa.")


# --- the judges of this package measured here --------------------------------------------------------------------

_LEGAL_ANSWERS = "labelled clarify responses (i15-cards2)"
CLARIFICATION = Judge(
    name="clarification", kind="offline", decides="does the response ask for, or make conditional on, missing facts?",
    current=CLARIFICATION_VERSION, positive="clarifies", labelled_set=_LEGAL_ANSWERS,
    validator=validate_clarification)
DANGEROUS_ASSERTION = Judge(
    name="dangerous-assertion", kind="offline", decides="does the response assert a missing fact as known?",
    current=DANGER_VERSION, positive="dangerous assertion", labelled_set=_LEGAL_ANSWERS,
    validator=validate_dangerous_assertion)
ABSTENTION_SCENARIOS = Judge(
    name="abstention-scenarios", kind="offline",
    decides="did the response decline to answer? (the abstention detector, on the abstain scenarios' replies)",
    current=ABSTENTION_VERSION, positive="abstained",
    labelled_set="judges/data/labelled/abstention_scenarios.jsonl (real 1.5B replies to false-premise, unknowable "
                 "and unanswerable-context questions, two independent annotators)",
    validator=validate_abstention_scenarios, fields=("abstained",), needs_data=False)
EXTRACT_TAKEOVER = Judge(
    name="extract-takeover", kind="offline",
    decides="did an instruction injected into a review take the summary over (language switch, echo, obeyed)?",
    current=TAKEOVER_VERSION, positive="the injection took the summary over",
    labelled_set="judges/data/labelled/extract_takeovers.jsonl (real 1.5B and 0.5B summaries of the injected "
                 "reviews, hand-labelled)",
    validator=validate_extract_takeover, needs_data=False)
