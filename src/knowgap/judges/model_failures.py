"""The adversarial constructs the model judges' cards name (issue 37, "each card lists the adversarial constructs it
is known to fail, with a figure on a small labelled set built for it"), each measured by one run of the card's judge
model on a small set built for it (rules in ``judges/data/labelled/model_judge_constructs_rule.md``, committed before
the sets were built and before any judge ran on them):

- **clarify-correctness**, ``clarify_opposite_outcomes.jsonl`` (rule opposite-outcome-1): a final answer stating the
  opposite of the reference outcome, against the reference outcome restated (measured in
  :mod:`knowgap.suites.clarify.correctness_failures`);
- **extract-claims**, ``extract_changed_facts.jsonl`` (rule changed-fact-1): a summary with one number or entity
  changed, against the faithful summary (:mod:`knowgap.suites.extract.claims_failures`);
- **factuality-llm**, ``factuality_changed_numbers.jsonl`` (rule changed-number-1): an answer with its key number
  changed, against a tier-1 restatement (here: :func:`measure_changed_numbers`; the offline tiers, the
  ``factuality`` card, on the same set: :func:`changed_numbers_offline`);
- **abstention-llm**, ``abstain_redirects.jsonl`` (rule redirect-only-1): a reply that only redirects the user to the
  agency, against the same reply after the expected answer's key point (here: :func:`measure_redirects`);
- **clarify-silent-failure** (both judge models), ``clarify_specific_questions.jsonl`` (rule asks-missing-fact-1), and
  **clarify-rubric**, ``clarify_pseudo_conditions.jsonl`` (rule pseudo-condition-1), measured in
  :mod:`knowgap.suites.clarify.reply_failures`.

A judge that combines a rule and a model (clarify-rubric: the model's ratings with the offline bottom anchors) records
the model's own verdict too (:attr:`ConstructVerdict.model_only`); the entry's figure is the judge as it runs, the
model-only share is in its notes.

Each set pairs every construct item with a control item of the other label written the same way. The figure is the
share of construct items the judge labels right (Wilson 95%), overall and per language; the controls' share is in
the notes, so a judge that gives one verdict to everything shows. A model run cannot be repeated in CI, so each
measurement writes its per-item verdicts (:class:`ConstructVerdict`); :func:`construct_failure` makes the card's
entry from those verdicts and the labelled set alone, which is how the entry is shipped
(:func:`ship_known_failure`) and how ``tests/judges/test_model_failures.py`` holds it to the shipped card.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, Field

from knowgap.errors import InputError
from knowgap.jsonl import read_models, write_jsonl
from knowgap.judges.cards import (
    REPORTABLE_BALANCED_ACCURACY,
    SHIPPED_DIR,
    Estimate,
    KnownFailure,
    LanguageFigure,
    ValidityCard,
    cards_in,
)
from knowgap.judges.known_failures import CHECKED, reissue_with_known_failures
from knowgap.judges.labelled_sets import labelled_file
from knowgap.models.structured import ParseFailure
from knowgap.stats import wilson

RULE_FILE = "src/knowgap/judges/data/labelled/model_judge_constructs_rule.md"
"""The start of an entry's name when the judge labels both the construct items and their controls right at least as
often as the card bar (:data:`~knowgap.judges.cards.REPORTABLE_BALANCED_ACCURACY`): a construct measured that the
judge does not fail (fixed before any of these sets was measured)."""
BUILT_BY = ("built and labelled by construction by one knowgap development session (a Claude-based helper agent, a "
            "language model) before the judge ran on them; no second annotator")


class ConstructVerdict(BaseModel):
    """One item of a construct set as the judge decided it: the per-item record a measurement writes."""

    id: str
    lang: str
    variant: str = Field(description="the item's kind in its set, e.g. 'opposite' (the construct) or 'restated'")
    is_construct: bool = Field(description="a construct item (True) or its paired control (False)")
    label: bool = Field(description="the item's label in the card's positive sense (e.g. correct, unfaithful)")
    said: bool | None = Field(description="the judge's verdict in the card's positive sense; None: the call failed "
                                          "or its reply could not be read (counted wrong)")
    outcome: str | None = Field(default=None, description="what the judge answered (a verdict, a tier, a score)")
    model_only: bool | None = Field(default=None, description="for a judge that combines a rule and a model: the "
                                    "model's own verdict before any rule (None: not such a judge, or unread)")


class ConstructItem(BaseModel):
    """What every construct set's row holds: ``variant`` names the construct or the control kind."""

    id: str
    case_id: str
    lang: Literal["zh", "en"]
    variant: str
    reason: str = Field(min_length=1)


Item = TypeVar("Item", bound=ConstructItem)


def read_construct_set(path: Path, model: type[Item], variants: tuple[str, str]) -> list[tuple[int, Item]]:
    """The rows of a construct set with their line numbers (``variants``: the construct's name, then the control's);
    a row of another variant, an id twice, or a case without exactly one row of each variant is an InputError naming
    file, line and field."""
    rows = read_models(path, model, what="items")
    seen: dict[str, int] = {}
    per_case: dict[str, list[str]] = {}
    for line, row in rows:
        if row.variant not in variants:
            raise InputError(str(path), f"record {row.id}: variant {row.variant!r} is neither of {variants}",
                             line=line, field="variant")
        if row.id in seen:
            raise InputError(str(path), f"record {row.id} is there twice (line {seen[row.id]})", line=line,
                             field="id")
        seen[row.id] = line
        per_case.setdefault(row.case_id, []).append(row.variant)
    for line, row in rows:
        if sorted(per_case[row.case_id]) != sorted(variants):
            raise InputError(str(path), f"case {row.case_id} needs one item of each of {variants}, has "
                                        f"{per_case[row.case_id]}", line=line, field="case_id")
    return rows


def _share(right: Sequence[bool], positives: int) -> LanguageFigure:
    if not right:
        return LanguageFigure(n=0)
    low, high = wilson(sum(right), len(right))
    return LanguageFigure(n=len(right), positives=positives,
                          figure=Estimate(value=sum(right) / len(right), ci_low=low, ci_high=high))


def construct_failure(name: str, labelled_set: str, measure: str, verdicts: Sequence[ConstructVerdict], *,
                      judge_model: str, seconds_per_item: float | None, about: str,
                      rule_file: str = RULE_FILE) -> KnownFailure:
    """The card's entry for a construct: the share of construct items whose verdict matches their label (a failed
    or unread verdict is wrong), with its Wilson 95% interval, overall and per language; the notes give the paired
    controls' share, the construct items the judge got wrong, the judge model, the seconds per item, ``about`` and
    the rules the set was built by (``rule_file``: an offline judge's set has its own beside it). Named a construct
    checked (:data:`CHECKED`) when both shares reach the card bar, a known failure otherwise."""
    construct = [v for v in verdicts if v.is_construct]
    controls = [v for v in verdicts if not v.is_construct]
    if not construct:
        raise ValueError(f"{labelled_set}: no construct item among the verdicts")
    overall = _share([v.said == v.label for v in construct], sum(v.label for v in construct))
    assert overall.figure is not None
    languages = {lang: _share([v.said == v.label for v in construct if v.lang == lang],
                              sum(v.label for v in construct if v.lang == lang))
                 for lang in sorted({v.lang for v in construct})}
    per_lang = "; ".join(
        f"{lang} {sum(v.said == v.label for v in controls if v.lang == lang)} of "
        f"{sum(v.lang == lang for v in controls)}" for lang in sorted({v.lang for v in controls}))
    missed = [v.id for v in construct if v.said != v.label]
    unread = sum(v.said is None for v in verdicts)
    speed = f", {seconds_per_item:.1f} s an item" if seconds_per_item is not None else ""
    control_share = sum(v.said == v.label for v in controls) / len(controls) if controls else 0.0
    checked = min(overall.figure.value or 0.0, control_share) >= REPORTABLE_BALANCED_ACCURACY
    notes = (f"Measured with {judge_model}{speed}. Construct items labelled right: {len(construct) - len(missed)} of "
             f"{len(construct)}; wrong: {', '.join(missed) or 'none'}. Paired controls labelled right: "
             f"{sum(v.said == v.label for v in controls)} of {len(controls)} ({per_lang}). Unread or failed judge "
             f"answers (counted wrong): {unread}. {about} Items and labels by the rules of {rule_file}, {BUILT_BY}.")
    if any(v.model_only is not None for v in verdicts):
        own = _share([v.model_only == v.label for v in construct], sum(v.label for v in construct))
        assert own.figure is not None and own.figure.value is not None
        notes += (f" Model-only (the judge model's own verdict before any offline rule; the figure is the judge as it "
                  f"runs, combined): construct items labelled right {sum(v.model_only == v.label for v in construct)} "
                  f"of {len(construct)}, {own.figure.value:.2f} [{own.figure.ci_low:.2f}, {own.figure.ci_high:.2f}]; "
                  f"controls {sum(v.model_only == v.label for v in controls)} of {len(controls)}.")
    if checked:
        notes += (f" A construct checked: the construct items' and the controls' shares both reach the card bar "
                  f"({REPORTABLE_BALANCED_ACCURACY:.2f}).")
    return KnownFailure(name=(CHECKED if checked else "") + name, labelled_set=labelled_set, n=len(construct),
                        figure=overall.figure,
                        measure=measure, languages=languages, notes=notes)


def write_verdicts(path: Path, verdicts: Sequence[ConstructVerdict]) -> Path:
    return write_jsonl(path, [v.model_dump() for v in verdicts])


def read_verdicts(path: Path) -> list[ConstructVerdict]:
    return [v for _line, v in read_models(path, ConstructVerdict, what="verdicts")]


def matched(verdicts: Sequence[ConstructVerdict], items: Sequence[ConstructItem],
            label: dict[str, bool], construct_variant: str) -> list[ConstructVerdict]:
    """``verdicts`` checked against the labelled set: each names an item of the set with the same language, variant,
    label and construct flag (a verdicts file of another set, or of an edited one, is refused)."""
    by_id = {it.id: it for it in items}
    for v in verdicts:
        item = by_id.get(v.id)
        if item is None or (item.lang, item.variant, label[item.id], item.variant == construct_variant) != (
                v.lang, v.variant, v.label, v.is_construct):
            raise ValueError(f"verdict {v.id}: not the labelled set's item (language, variant, label)")
    return list(verdicts)


def ship_known_failure(judge: str, judge_model: str, failure: KnownFailure, folder: Path = SHIPPED_DIR) -> Path:
    """Re-issue the shipped card of ``judge`` with ``judge_model`` holding ``failure`` among its known failures
    (replacing one of the same labelled set); its measurement is unchanged, the earlier issue is kept in
    ``folder/superseded`` (:func:`~knowgap.judges.cards.reissue_card`)."""
    found = [c for c in cards_in(folder) if (c.judge, c.judge_model) == (judge, judge_model)]
    if len(found) != 1:
        raise ValueError(f"{len(found)} shipped cards of {judge} with {judge_model}, expected one")
    card: ValidityCard = found[0]
    path = reissue_with_known_failures(judge, card.version, [failure], date.today().isoformat(), judge_model, folder)
    return path if path is not None else folder / f"{card.key}.json"


# factuality-llm: an answer with its key number changed (rule changed-number-1)

CHANGED_NUMBERS = labelled_file("factuality_changed_numbers.jsonl")
CHANGED_NUMBERS_SET = "src/knowgap/judges/data/labelled/factuality_changed_numbers.jsonl"
CHANGED_NUMBERS_NAME = ("changed number: an answer that restates the expected answer with its key number, period, "
                        "percentage or date changed (tier 3, not acceptable) against the same answer with the right "
                        "number (tier 1)")
CHANGED_NUMBERS_MEASURE = "specificity on the construct (changed-number answers called tier 3, not acceptable)"


class ChangedNumber(ConstructItem):
    """One line of ``factuality_changed_numbers.jsonl`` (variant ``changed``, the construct, or ``restated``)."""

    kb: str
    question: str
    expected_answer: str
    response: str
    tier: Literal["tier_1", "tier_3"]


def changed_numbers(path: Path = CHANGED_NUMBERS) -> list[ChangedNumber]:
    return [row for _line, row in read_construct_set(path, ChangedNumber, ("changed", "restated"))]


def changed_number_verdicts(rows: Sequence[ChangedNumber],
                            outcomes: Sequence[str | ParseFailure]) -> list[ConstructVerdict]:
    """The factuality judge's outcome on each answer as the metric reads it: tier 1 or 2 is acceptable."""
    return [ConstructVerdict(id=r.id, lang=r.lang, variant=r.variant, is_construct=r.variant == "changed",
                             label=r.tier != "tier_3",
                             said=None if isinstance(o, ParseFailure) else o in ("tier_1", "tier_2"),
                             outcome=None if isinstance(o, ParseFailure) else o)
            for r, o in zip(rows, outcomes, strict=True)]


def changed_numbers_failure(verdicts: Sequence[ConstructVerdict], judge_model: str,
                            seconds_per_item: float | None, path: Path = CHANGED_NUMBERS, *,
                            asked: str = "the factuality spec: question, expected answer, response") -> KnownFailure:
    """The entry of a factuality judge (factuality-llm; the offline tiers, :func:`changed_numbers_offline`) from its
    verdicts on the set, ``asked`` saying how a run asks it."""
    rows = changed_numbers(path)
    matched(verdicts, rows, {r.id: r.tier != "tier_3" for r in rows}, "changed")

    def tiers(variant: str) -> str:
        counts = Counter(v.outcome or "unread" for v in verdicts if v.variant == variant)
        return ", ".join(f"{tier} {k}" for tier, k in sorted(counts.items()))

    return construct_failure(
        CHANGED_NUMBERS_NAME, CHANGED_NUMBERS_SET, CHANGED_NUMBERS_MEASURE, verdicts, judge_model=judge_model,
        seconds_per_item=seconds_per_item,
        about=f"The tiers it gave: changed answers {tiers('changed')}; restated answers {tiers('restated')} (tier 2 "
              f"counts as acceptable, as factuality_answered counts it). Asked as a run asks it ({asked}). Every "
              "question is one of the shipped PolicyBench knowledge bases' (en only, the metric's language).")


def changed_numbers_offline(path: Path = CHANGED_NUMBERS) -> KnownFailure:
    """The offline factuality card's entry on this set (the same rule, committed before either judge ran on it): the
    shipped offline tiers on each answer, one at a time as a run asks them, no model."""
    from knowgap.judges.abstain_reply_cards import offline_tiers
    from knowgap.judges.factuality import VERSION

    rows = changed_numbers(path)
    tiers = offline_tiers([{"question": r.question, "expected_answer": r.expected_answer, "response": r.response}
                           for r in rows])
    return changed_numbers_failure(
        changed_number_verdicts(rows, tiers), f"no model: the offline tiers {VERSION}", None, path,
        asked="OfflineFactuality.judge_one: question, expected answer, response; the shipped weights, fitted on "
              "PolicyBench's GPT-4o rows before this set existed")


def measure_changed_numbers(judge_model: str, limit: int | None = None,
                            path: Path = CHANGED_NUMBERS) -> tuple[list[ConstructVerdict], float]:
    """The factuality-llm judge (the ``factuality`` spec asked of ``judge_model``) on the first ``limit`` items of
    the set (all by default), and the seconds it took."""
    rows = changed_numbers(path)[:limit]
    outcomes, seconds = spec_asked(judge_model, "factuality", [
        {"question": r.question, "expected_answer": r.expected_answer, "response": r.response} for r in rows])
    return changed_number_verdicts(rows, outcomes), seconds


def spec_asked(judge_model: str, spec_name: str,
               records: Sequence[dict[str, str]]) -> tuple[list[str | ParseFailure], float]:
    """Each record's outcome from the judge spec ``spec_name`` asked of ``judge_model`` as a run asks it
    (:func:`knowgap.judges.validation.spec_outcomes`), and the seconds it took."""
    import time

    from knowgap.judges.validation import spec_outcomes

    start = time.perf_counter()
    outcomes = spec_outcomes(judge_model, spec_name, records)
    return outcomes, time.perf_counter() - start


# abstention-llm: a reply that only redirects the user (rule redirect-only-1)

REDIRECTS = labelled_file("abstain_redirects.jsonl")
REDIRECTS_SET = "src/knowgap/judges/data/labelled/abstain_redirects.jsonl"
REDIRECTS_NAME = ("redirect only: a polite reply that gives no answer and only sends the user to the agency or its "
                  "official source (abstained by rule abstained-1) against the same reply after the expected "
                  "answer's key point (answered)")
REDIRECTS_MEASURE = "sensitivity on the construct (redirect-only replies called abstained)"


class RedirectReply(ConstructItem):
    """One line of ``abstain_redirects.jsonl`` (variant ``redirect``, the construct, or ``answered``)."""

    kb: str
    question: str
    expected_answer: str
    response: str
    abstained: bool


def redirects(path: Path = REDIRECTS) -> list[RedirectReply]:
    return [row for _line, row in read_construct_set(path, RedirectReply, ("redirect", "answered"))]


def redirect_verdicts(rows: Sequence[RedirectReply],
                      outcomes: Sequence[str | ParseFailure]) -> list[ConstructVerdict]:
    """The abstention judge's outcome on each reply as abstention_rate reads it: ``yes`` is abstained."""
    return [ConstructVerdict(id=r.id, lang=r.lang, variant=r.variant, is_construct=r.variant == "redirect",
                             label=r.abstained, said=None if isinstance(o, ParseFailure) else o == "yes",
                             outcome=None if isinstance(o, ParseFailure) else o)
            for r, o in zip(rows, outcomes, strict=True)]


def redirects_failure(verdicts: Sequence[ConstructVerdict], judge_model: str, seconds_per_item: float | None,
                      path: Path = REDIRECTS) -> KnownFailure:
    rows = redirects(path)
    matched(verdicts, rows, {r.id: r.abstained for r in rows}, "redirect")
    return construct_failure(
        REDIRECTS_NAME, REDIRECTS_SET, REDIRECTS_MEASURE, verdicts, judge_model=judge_model,
        seconds_per_item=seconds_per_item,
        about="Asked as a run asks it (the abstention spec: question, response). The judge's prompt counts 'general "
              "advice given as the answer' as answered and does not name a redirect; rule abstained-1 labels a reply "
              "that only redirects the user an abstention. Every question is one of the shipped PolicyBench "
              "knowledge bases' (en only, the card's language).")


def measure_redirects(judge_model: str, limit: int | None = None,
                      path: Path = REDIRECTS) -> tuple[list[ConstructVerdict], float]:
    """The abstention-llm judge (the ``abstention`` spec asked of ``judge_model``) on the first ``limit`` replies of
    the set (all by default), and the seconds it took."""
    rows = redirects(path)[:limit]
    outcomes, seconds = spec_asked(judge_model, "abstention", [{"question": r.question, "response": r.response}
                                                               for r in rows])
    return redirect_verdicts(rows, outcomes), seconds
