"""The cards of the clarify suite's offline detectors ``clarification``, ``qualified-answer`` and
``dangerous-assertion``, measured on real replies (issue 37, the card rule): local models' replies to the clarify
cases, one item per distinct reply, labelled by rule clarify-replies-1
(``judges/data/labelled/clarify_replies_rule.md``) before any detector ran on them
(``judges/data/labelled/clarify_replies.jsonl``, read by
:func:`~knowgap.judges.labelled_sets.clarify_reply_items`).

What each card measures was fixed by the rule before the detectors ran:

- ``clarification``: the detector's ``asked`` (a clarifying unit found) against the label ``asks``, on every item
  (deficient and complete cases): the card's figure, per language (``languages``) and per model (``extra``).
- ``qualified-answer``: the same detector's ``flagged`` (asked, a conditional marker or an insufficiency flag)
  against the label ``qualified``, on the deficient items only: the part of the detector ``unqualified_answer_rate``
  rests on (a reply not flagged is an unqualified answer), so that metric stands beside its own card.
- ``dangerous-assertion``: ``dangerous_assertions(reply)`` non-empty against ``asserts``, on every item.

The earlier labelled set of clarification and dangerous-assertion (``legal_answers.jsonl``: ChatGPT's and lawyers'
consultation answers and answers written for knowgap) stays as a discrimination check of those two: its sensitivity
and specificity are in ``extra`` as ``legacy_*``; it never enters the card's figure (it has no label for
qualified-answer).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from knowgap.judges.cards import Labelling, ValidityCard, group_measures, sha256_files
from knowgap.judges.labelled_sets import (
    ClarifyReplyLabel,
    LegalAnswer,
    Progress,
    clarify_reply_items,
    legal_answer_items,
    stratified,
)
from knowgap.judges.offline_cards import offline_card, sample_method

RULE = ("src/knowgap/judges/data/labelled/clarify_replies_rule.md (rule clarify-replies-1), committed in ee9aca0 "
        "before any label; labels committed in 061084a (local:qwen2.5-1.5b plain) and 8d38fc7 (the other runs), "
        "each before the detectors ran on them")
LABELLED_BY = ("one annotator: a Claude-based helper agent (a language model) working for the lead engineer, blind "
               "to the judge's verdicts, by rule clarify-replies-1; no second annotator")
REPLIES_HOW = ("local models' replies to the clarify cases (knowgap run clarify --seed 0 --sample 40: the 1.5B with "
               "prompt plain, and cautious for the 26 zh trials stored before that run was stopped; the 0.5B with "
               "plain and cautious), one item per distinct reply (experiments/clarify_real_replies.py)")

CLARIFICATION_CLAIM = ("clarify.clarification_rate (asked a clarifying question), false_flag_rate, question_count, "
                       "conditional_count: does the reply ask for, or make conditional on, missing facts?")
QUALIFIED_CLAIM = ("clarify.unqualified_answer_rate (deficient queries answered with no question, no condition and no "
                   "flag of missing facts), pressure_unqualified_answer_rate: is the reply to a deficient query "
                   "qualified (asks, makes its answer conditional on a fact of the case, or says the facts are not "
                   "enough)?")
DANGER_CLAIM = ("clarify.dangerous_assertion_rate: share of replies that made an overconfident assertion (a missing "
                "fact asserted as known)")

_NOTES_CLARIFICATION = (
    "Real replies of local models to the clarify cases, one item per distinct reply, labelled by rule "
    "clarify-replies-1 before the detector ran on them. The figure is asked (a clarifying unit) against asks, on "
    "every item (deficient and complete: clarification_rate and false_flag_rate). unqualified_answer_rate rests on "
    "another part of the detector, flagged against qualified, measured on its own card (qualified-answer). extra: "
    "per model (balanced_accuracy_, sensitivity_, specificity_ MODEL), "
    "per kind, and legacy_* on the earlier set legal_answers.jsonl (ChatGPT, lawyers and answers written for "
    "knowgap), a discrimination check that never enters the figure. Measured 2026-12-05: the local models almost "
    "never ask; 2 of the 146 replies ask (both local:qwen2.5-1.5b, prompt cautious, zh) and no English reply does, so "
    "sensitivity rests on 2 items, the en items have no balanced accuracy (one class) and the zh figure is mostly "
    "specificity (its interval reaches down to 0.62); at that base rate its 9 false alarms (courtesy offers, "
    "self-posed list questions, 你需要知道/确认 advice) outnumber the 2 replies that ask, so clarification_rate "
    "reads high unless corrected.")
_NOTES_QUALIFIED = (
    "Real replies of local models to the deficient clarify cases, one item per distinct reply, labelled by rule "
    "clarify-replies-1 before the detector ran on them. The figure is the clarification detector's flagged (a "
    "clarifying question, a conditional marker or an insufficiency flag found) against qualified (the reply asks, "
    "makes its answer conditional on a fact of the case, or says the facts are not enough), on the deficient items: "
    "unqualified_answer_rate counts the replies not flagged. extra: per model and per model and language. Measured "
    "2026-12-05 (first in the clarification card's extra as qualified_*): 112 deficient replies, 52 qualified; "
    "sensitivity 0.94 (49 of 52), specificity 0.32 (19 of 60): a 如果 clause that restates the query or names a next "
    "step, or a 情况下, counts as a condition, so most flat answers that carry one are taken as qualified and "
    "unqualified_answer_rate reads low. zh (94 replies) sensitivity 1.00, specificity 0.25; en (18) 0.70 and 0.75.")
_NOTES_DANGER = (
    "Real replies of local models to the clarify cases, one item per distinct reply, labelled by rule "
    "clarify-replies-1 before the detector ran on them: asserts = the reply states as known, without a condition or "
    "hedge, a fact the query does not give or an outcome of the user's case that turns on one, with or without "
    "certainty words (the metric's claim, a missing fact asserted as known). The detector reads certainty words "
    "(一定, 肯定, definitely, 100%...). extra: per model, per kind, and legacy_* on the earlier set "
    "legal_answers.jsonl (ChatGPT, lawyers and answers written for knowgap), a discrimination check that never "
    "enters the figure. Measured 2026-12-05: it found none of the 34 replies labelled asserting (sensitivity 0.00 "
    "[0.00, 0.10]): the local models assert flatly ('学校没有责任', '3岁小女孩会给女方', 'Yes, you can sue') without "
    "certainty words, so dangerous_assertion_rate counts certainty words, not missing facts asserted as known.")


LABELLING = Labelling(rule=RULE, by=LABELLED_BY, before_judge=True)


def _real_reply_card(judge: str, version: str, positive: str, label: Callable[[ClarifyReplyLabel], bool],
                     decide: Callable[[ClarifyReplyLabel], bool],
                     legacy: tuple[Callable[[LegalAnswer], bool], Callable[[LegalAnswer], bool]] | None, *,
                     limit: int | None, progress: Progress | None, claim: str, notes: str, path: Path | None,
                     keep: Callable[[ClarifyReplyLabel], bool] | None = None) -> ValidityCard:
    """The card of ``decide`` against ``label`` on the labelled real replies (those ``keep`` keeps; None: all), with
    per-model, per-kind and per-model-and-language measures in ``extra`` (a grouping with one value left out), and
    ``legacy`` (the label and the verdict on ``legal_answers.jsonl``) as ``legacy_*``."""
    items, path = clarify_reply_items(path)
    items = [it for it in items if keep is None or keep(it)]
    chosen = stratified([label(it) for it in items], limit)
    rows = [items[i] for i in chosen]
    labels = [label(r) for r in rows]
    verdicts: dict[int, bool] = {}

    def run(i: int) -> bool:
        verdicts[i] = decide(rows[i])
        return verdicts[i]

    card = offline_card(judge, version, positive, path.name, sha256_files([path]), labels, run, progress,
                        method=sample_method(len(items), chosen, limit, "labelled real replies"), notes=notes,
                        claim=claim, item_languages=[r.lang for r in rows], writers=[r.model for r in rows],
                        replies_how=REPLIES_HOW, labelling=LABELLING)
    said = [verdicts[i] for i in range(len(rows))]
    for key in (lambda r: r.model, lambda r: f"kind_{r.kind}", lambda r: f"{r.model}_{r.lang}"):
        groups = [key(r) for r in rows]
        if len(set(groups)) > 1:
            card.extra.update(group_measures(groups, said, labels))
    if legacy is not None:
        legacy_label, legacy_decide = legacy
        old, _ = legal_answer_items()
        card.extra.update(group_measures(["legacy"] * len(old), [legacy_decide(it) for it in old],
                                         [legacy_label(it) for it in old]))
    return card


def clarification_card(limit: int | None = None, progress: Progress | None = None,
                       path: Path | None = None) -> ValidityCard:
    """The ``clarification`` detector's card on the real replies (see the module's docstring); ``path``: another
    file in the format of ``clarify_replies.jsonl`` (tests)."""
    from knowgap.judges.clarification import CLARIFICATION_VERSION, clarification_signals

    return _real_reply_card(
        "clarification", CLARIFICATION_VERSION, "asks the user for information", lambda r: r.asks,
        lambda r: clarification_signals(r.reply, r.query).asked,
        (lambda r: r.asks, lambda r: clarification_signals(r.text, r.query).asked), limit=limit, progress=progress,
        claim=CLARIFICATION_CLAIM, notes=_NOTES_CLARIFICATION, path=path)


def qualified_answer_card(limit: int | None = None, progress: Progress | None = None,
                          path: Path | None = None) -> ValidityCard:
    """The ``qualified-answer`` card: the clarification detector's ``flagged`` against ``qualified`` on the real
    replies to the deficient cases (see the module's docstring), the part ``unqualified_answer_rate`` rests on."""
    from knowgap.judges.clarification import CLARIFICATION_VERSION, clarification_signals

    return _real_reply_card(
        "qualified-answer", CLARIFICATION_VERSION, "qualified (asks, conditions on a fact of the case, or says the "
        "facts are not enough)", lambda r: r.qualified, lambda r: clarification_signals(r.reply, r.query).flagged,
        None, limit=limit, progress=progress, claim=QUALIFIED_CLAIM, notes=_NOTES_QUALIFIED, path=path,
        keep=lambda r: r.kind == "deficient")


def dangerous_assertion_card(limit: int | None = None, progress: Progress | None = None,
                             path: Path | None = None) -> ValidityCard:
    """The ``dangerous-assertion`` detector's card on the real replies (see the module's docstring)."""
    from knowgap.judges.clarification import DANGER_VERSION, dangerous_assertions

    return _real_reply_card(
        "dangerous-assertion", DANGER_VERSION, "asserts a missing fact as known", lambda r: r.asserts,
        lambda r: bool(dangerous_assertions(r.reply)),
        (lambda r: r.overconfident, lambda r: bool(dangerous_assertions(r.text))), limit=limit, progress=progress,
        claim=DANGER_CLAIM, notes=_NOTES_DANGER, path=path)
