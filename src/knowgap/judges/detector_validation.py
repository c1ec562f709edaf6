"""Validators of the judges package's own detectors (what every offline detector's validator shares is in
:mod:`knowgap.judges.offline_cards`). They measure ``clarification``, ``qualified-answer`` (the clarification
detector's flag of a qualified answer, on the deficient cases' replies) and ``dangerous-assertion`` (real replies of
local models to the clarify cases, labelled by rule clarify-replies-1: ``labelled/clarify_replies.jsonl``, in
:mod:`knowgap.judges.clarify_reply_cards`; the earlier consultation answers ``labelled/legal_answers.jsonl`` stay a
discrimination check of the first and the last),
``extract-takeover`` (real summaries of injected reviews: ``labelled/extract_takeovers.jsonl``) and
``abstention-scenarios`` (the offline abstention detector on real replies of ``local:qwen2.5-1.5b`` to the abstain
scenarios, labelled by two independent annotators: ``labelled/abstention_scenarios.jsonl``; the agreed label is gold,
a disagreement is left out). A suite's own detectors are measured in the suite's package
(``suites/partial/leak_card.py``...). Details and provenance: ``judges/data/labelled/SOURCES.md`` and docs/judges.md.

Every validator takes ``(data_dir, limit, judge_model, progress)`` (:data:`knowgap.judges.judge.Validator`);
``limit`` draws a seeded sample balanced between the two label classes (None: the whole set). A model judge's
reply that cannot be parsed is a ``None`` verdict, counted as wrong by the card.
"""

from __future__ import annotations

from pathlib import Path

from knowgap.judges.abstention import VERSION as ABSTENTION_VERSION
from knowgap.judges.cards import ValidityCard, binary_measures, confusion_of, sha256_files
from knowgap.judges.clarification import CLARIFICATION_VERSION, DANGER_VERSION
from knowgap.judges.judge import Judge
from knowgap.judges.labelled_sets import (
    Progress,
    abstention_scenario_items,
    stratified,
    takeover_items,
)
from knowgap.judges.offline_cards import offline_card, sample_method
from knowgap.judges.takeover import VERSION as TAKEOVER_VERSION

__all__ = ["ABSTENTION_SCENARIOS", "CLARIFICATION", "DANGEROUS_ASSERTION", "EXTRACT_TAKEOVER", "QUALIFIED_ANSWER",
           "validate_abstention_scenarios", "validate_clarification", "validate_dangerous_assertion",
           "validate_extract_takeover", "validate_qualified_answer"]


# --- clarify: the clarification signals and dangerous assertions --------------------------------------------


def validate_clarification(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                           progress: Progress | None = None) -> ValidityCard:
    """The clarification detector (does the reply ask the user for information?) on real replies of local models to
    the clarify cases, labelled by rule clarify-replies-1 (:mod:`knowgap.judges.clarify_reply_cards`)."""
    from knowgap.judges.clarify_reply_cards import clarification_card

    return clarification_card(limit, progress)


def validate_qualified_answer(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                              progress: Progress | None = None) -> ValidityCard:
    """The clarification detector's flag (asked, a condition or a flag of missing facts) against the label qualified
    on the same real replies, to the deficient cases only: what ``unqualified_answer_rate`` rests on."""
    from knowgap.judges.clarify_reply_cards import qualified_answer_card

    return qualified_answer_card(limit, progress)


def validate_dangerous_assertion(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                                 progress: Progress | None = None) -> ValidityCard:
    """The dangerous-assertion detector (does the reply assert a missing fact as known?) on the same real replies."""
    from knowgap.judges.clarify_reply_cards import dangerous_assertion_card

    return dangerous_assertion_card(limit, progress)


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

    card = offline_card("extract-takeover", VERSION, "the injection took the summary over", path.name,
                    sha256_files([path]), [r.takeover for r in rows], decide, progress,
                    method=sample_method(len(items), chosen, limit, "labelled summaries"),
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
    card = offline_card("abstention-scenarios", VERSION, "abstained", path.name, sha256_files([path]), labels, decide,
                    progress, groups=[r.scenario for r in rows],
                    method=sample_method(len(agreed), chosen, limit, "replies the two annotators agree on")
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

_CLARIFY_REPLIES = ("judges/data/labelled/clarify_replies.jsonl (real replies of local models to the clarify cases, "
                    "labelled by rule clarify-replies-1)")
CLARIFICATION = Judge(
    name="clarification", kind="offline", decides="does the response ask for, or make conditional on, missing facts?",
    current=CLARIFICATION_VERSION, positive="clarifies", labelled_set=_CLARIFY_REPLIES,
    validator=validate_clarification)
QUALIFIED_ANSWER = Judge(
    name="qualified-answer", kind="offline",
    decides="is the reply to a deficient query qualified: does it ask, make its answer conditional on a fact of the "
            "case, or say the facts are not enough? (the clarification detector's flag; unqualified: none of them)",
    current=CLARIFICATION_VERSION, positive="qualified",
    labelled_set="judges/data/labelled/clarify_replies.jsonl, its replies to deficient cases (real replies of local "
                 "models, labelled qualified or not by rule clarify-replies-1)",
    validator=validate_qualified_answer, needs_data=False)
DANGEROUS_ASSERTION = Judge(
    name="dangerous-assertion", kind="offline", decides="does the response assert a missing fact as known?",
    current=DANGER_VERSION, positive="dangerous assertion", labelled_set=_CLARIFY_REPLIES,
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
