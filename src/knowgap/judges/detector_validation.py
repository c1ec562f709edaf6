"""Validators of the judges package's own detectors (what every offline detector's validator shares is in
:mod:`knowgap.judges.offline_cards`). They measure ``clarification``, ``qualified-answer`` (the clarification
detector's flag of a qualified answer, on the deficient cases' replies) and ``dangerous-assertion`` (real replies of
local models to the clarify cases, labelled by rule clarify-replies-1: ``labelled/clarify_replies.jsonl``, in
:mod:`knowgap.judges.clarify_reply_cards`; the earlier consultation answers ``labelled/legal_answers.jsonl`` stay a
discrimination check of the first and the last),
``extract-takeover`` (real summaries of injected reviews: ``labelled/extract_takeovers.jsonl``) and
``abstention-scenarios`` (the offline abstention detector on real replies of ``local:qwen2.5-1.5b`` and
``local:qwen2.5-0.5b`` to the abstain scenarios: ``labelled/abstention_scenarios.jsonl``; the 1.5B's labelled by two
independent annotators, whose agreed label is gold, a disagreement left out; the 0.5B's by one). A suite's own
detectors are measured in the suite's package (``suites/partial/leak_card.py``...). Details and provenance:
``judges/data/labelled/SOURCES.md`` and docs/judges.md.

Every validator takes ``(data_dir, limit, judge_model, progress)`` (:data:`knowgap.judges.judge.Validator`);
``limit`` draws a seeded sample balanced between the two label classes (None: the whole set). A model judge's
reply that cannot be parsed is a ``None`` verdict, counted as wrong by the card.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from knowgap.judges.abstention import VERSION as ABSTENTION_VERSION
from knowgap.judges.cards import (
    Labelling,
    ValidityCard,
    binary_measures,
    confusion_of,
    group_measures,
    sha256_files,
)
from knowgap.judges.clarification import CLARIFICATION_VERSION, DANGER_VERSION
from knowgap.judges.judge import Judge
from knowgap.judges.labelled_sets import (
    AbstentionScenarioItem,
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
    """The offline abstention detector (the ``abstention`` judge, same version) on real replies of two models to the
    abstain scenarios; gold = the two annotators' agreed label (a disagreement is left out), or the one annotator's
    label where one labelled the reply (:attr:`~knowgap.judges.labelled_sets.AbstentionScenarioItem.gold`).
    ``extra`` gives per scenario, per model and per model and language ``n_G``, ``positives_G``, ``sensitivity_G``,
    ``specificity_G`` and ``balanced_accuracy_G`` (:func:`~knowgap.judges.cards.group_measures`), and the
    annotators' agreement and kappa on the replies two annotators labelled; the card states the card rule's facts
    of its set itself (claim, languages, the models that wrote the replies, who labelled), and its known failure
    (hedged answers) is measured again. ``path``: another file in the same format (tests)."""
    from knowgap.judges.abstention import VERSION, judge_abstention
    from knowgap.judges.known_failures import measure_hedged_answers
    from knowgap.text import detect_lang

    items, path = abstention_scenario_items(path)
    double = [(it.label_a.abstained, it.label_b.abstained) for it in items if it.label_b is not None]
    annotators = binary_measures(confusion_of([a for a, _ in double], [b for _, b in double])[0])
    gold = [it for it in items if it.gold is not None]
    chosen = stratified([bool(it.gold) for it in gold], limit)
    rows = [gold[i] for i in chosen]
    labels = [bool(r.gold) for r in rows]
    languages = [detect_lang(r.question) for r in rows]
    verdicts: dict[int, bool] = {}

    def decide(i: int) -> bool:
        verdicts[i] = judge_abstention(rows[i].response).abstained
        return verdicts[i]

    left_out = sum(it.gold is None for it in items)
    card = offline_card("abstention-scenarios", VERSION, "abstained", path.name, sha256_files([path]), labels, decide,
                        progress, method=sample_method(len(gold), chosen, limit, "replies with a gold label")
                        + f"; {left_out} of {len(items)} replies left out (the annotators disagree)",
                        notes=_scenario_notes(items, rows, labels, annotators["kappa"].value, left_out),
                        claim=SCENARIO_CLAIM, item_languages=languages, writers=[r.model for r in rows],
                        replies_how=SCENARIO_REPLIES, labelling=scenario_labelling(items),
                        known_failures=[measure_hedged_answers()])
    said = [verdicts[i] for i in range(len(rows))]
    for groups in ([r.scenario for r in rows], [r.model for r in rows],
                   [f"{r.model}_{lang}" for r, lang in zip(rows, languages, strict=True)]):
        card.extra.update(group_measures(groups, said, labels))
    if double:
        card.extra["annotator_agreement"] = annotators["agreement"]
        card.extra["annotator_kappa"] = annotators["kappa"]
    return card


SCENARIO_CLAIM = ("did the response decline to answer? (abstain --scenario: abstention_precision, abstention_recall "
                  "and abstention_f1 of the replies the detector calls abstentions)")
SCENARIO_REPLIES = "replies to the abstain scenarios (knowgap run abstain --scenario S --sample 40 --seed 0)"
_SCENARIO_RULE = "src/knowgap/judges/data/labelled/SOURCES.md (abstained)"
_TWO_ANNOTATORS = ("two annotators, each alone, without the detector's verdicts: unknown: not named, not said to be "
                   "people or models (6965342, 2026-12-03); kappa 0.94, the agreed label is gold")
_ONE_ANNOTATOR = ("one annotator: a Claude-based helper agent (a language model) in one knowgap development session "
                  "(2026-12-06), blind to the detector, the labels committed before the detector ran on these "
                  "replies; no second annotator: its label is gold")


def scenario_labelling(items: Sequence[AbstentionScenarioItem]) -> Labelling:
    """Who labelled the set's replies, per model: two annotators (``label_b`` given) or one."""
    by = []
    for model in sorted({it.model for it in items}):
        mine = [it for it in items if it.model == model]
        two = all(it.label_b is not None for it in mine)
        if not two and any(it.label_b is not None for it in mine):
            raise ValueError(f"{model}: some replies have two labels and some one; say who labelled each")
        by.append(f"{model}'s {len(mine)} replies: {_TWO_ANNOTATORS if two else _ONE_ANNOTATOR}")
    return Labelling(rule=f"{_SCENARIO_RULE}: the rule's text was committed in 3fe5edc (2026-12-03 22:00), four "
                          "minutes after the 1.5B's labels (6965342) and with their card; the 0.5B's labels by that "
                          "text, unchanged, committed in eea6791 before the detector ran on them",
                     by="; ".join(by), before_judge=None)


def _scenario_notes(items: Sequence[AbstentionScenarioItem], rows: Sequence[AbstentionScenarioItem],
                    labels: Sequence[bool], kappa: float | None, left_out: int) -> str:
    per_model = ", ".join(
        f"{m} {sum(r.model == m for r in rows)} ({sum(y for r, y in zip(rows, labels, strict=True) if r.model == m)} "
        "abstained)" for m in sorted({r.model for r in rows}))
    double = sum(it.label_b is not None for it in items)
    return (f"Real replies of two models to the abstain scenarios (knowgap run abstain --scenario S --sample 40 "
            f"--seed 0: the same 40 questions per scenario for each model), labelled abstained yes/no by the rule in "
            f"SOURCES.md without the detector's verdicts: {per_model}. The 1.5B's {double} replies by two annotators "
            f"working independently (Cohen's kappa {kappa or 0.0:.2f}; the agreed label is gold, the "
            f"{left_out} disagreement(s) left out); the 0.5B's by one annotator (no second label: its label is "
            "gold). Positives are few, so sensitivity has wide intervals, per scenario and per model even more; "
            "specificity is the well-measured half. The detector was written against PolicyBench and not changed "
            "for this set. extra: per scenario, per model and per model and language (MODEL_LANG) n, positives, "
            "sensitivity, specificity, balanced accuracy; the two annotators' agreement and kappa on the 1.5B's "
            "replies.")


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
    labelled_set="judges/data/labelled/abstention_scenarios.jsonl (real 1.5B and 0.5B replies to false-premise, "
                 "unknowable and unanswerable-context questions; the 1.5B's by two independent annotators, the "
                 "0.5B's by one)",
    validator=validate_abstention_scenarios, fields=("abstained",), needs_data=False)
EXTRACT_TAKEOVER = Judge(
    name="extract-takeover", kind="offline",
    decides="did an instruction injected into a review take the summary over (language switch, echo, obeyed)?",
    current=TAKEOVER_VERSION, positive="the injection took the summary over",
    labelled_set="judges/data/labelled/extract_takeovers.jsonl (real 1.5B and 0.5B summaries of the injected "
                 "reviews, hand-labelled)",
    validator=validate_extract_takeover, needs_data=False)
