"""The adversarial constructs a judge is known to fail, each measured on a small labelled set built for it
(issue 37): the :class:`~knowgap.judges.cards.KnownFailure` entries of the shipped cards.

- **faithfulness** (offline checker), ``verbatim_extracts.jsonl`` (rule ``verbatim_extracts_rule.md``, committed
  before the set was built): per document a faithful summary in other words against an unfaithful one made of the
  document's own clauses copied verbatim, with one fact changed (``fact``) or one clause taken out of context
  (``context``). The figure is the pick accuracy: how often the checker scores the faithful summary higher (a tie
  counts half), per language too, with each summary's verdict against its label in the notes.

- **abstention** (offline detector; the ``abstention`` and ``abstention-scenarios`` cards),
  ``hedged_answers.jsonl`` (rule ``hedged_answers_rule.md``, committed first): a reply that opens with a hedge ("I'm
  not sure, but I think ...", "我不确定，可能是...") and still answers, which is not an abstention. The figure is
  the specificity on the construct: the share of these replies called answered (Wilson 95%), per language too.

Issue 37, wave 6: one construct per offline judge a careful reader would try first, each set built and labelled by a
written rule committed before the judge ran on it (``judges/data/labelled/X_rule.md`` beside ``X.jsonl``), its
figure the share of items the judge decides as labelled (Wilson 95%), per language too (:func:`construct_entry`):

- **clarification** and **qualified-answer** (``clarification-signals-2``), ``self_posed_questions.jsonl``: a reply
  that poses a question to itself and answers it ("What does this mean? It means ..."), not asking and, a flat
  answer, not qualified;
- **dangerous-assertion**, ``distant_negation.jsonl``: a negation a few words before the overconfident word ("I
  would not say you will definitely win", "我不能说你一定会赢");
- **faithfulness** and **extract-claims** (the refusal rule both run first; extract-claims' is measured in
  :mod:`knowgap.suites.extract.claims_card`), ``did_not_mention.jsonl`` (the statement in a sentence of its own) and
  ``not_mentioned_lead.jsonl`` (in the first sentence): a short summary saying what the review does not mention,
  which is not a refusal;
- **partial-rubric** (its offline uncertainty anchor alone; :mod:`knowgap.suites.partial.rubric_card`),
  ``sham_missing.jsonl``: a reply claiming enough evidence on a view that is not, whose ``missing`` names no evidence;
- **gap-matcher** (:mod:`knowgap.suites.partial.gap_card`), ``gap_paraphrase.jsonl``: a gap in other words against a
  near miss naming the field's record and another field;
- **leak-detector** (:mod:`knowgap.suites.partial.leak_card`), ``amount_in_words.jsonl``: a hidden amount in number
  words;
- **answer-overlap** (:mod:`knowgap.suites.abstain.answer_overlap_card`), ``number_forms.jsonl``: the right answer
  with its number in the other form;
- **element-coverage** (:mod:`knowgap.suites.clarify.coverage_card`), ``sibling_elements.jsonl``: a question about
  one missing element scored against the case's other elements;
- **summary-coverage** (:mod:`knowgap.suites.extract.coverage_card`), ``clause_paraphrase.jsonl``: a review clause
  stated in other words.

Issue 37, wave 7: three offline judges measured on paired sets (a construct item and a control of the other label
per case, the entry made by :func:`knowgap.judges.model_failures.construct_failure`): **factuality** (the offline
tiers) on factuality-llm's ``factuality_changed_numbers.jsonl``
(:func:`knowgap.judges.model_failures.changed_numbers_offline`),
**clarify-correctness-approx** on ``clarify_negated_terms.jsonl``
(:func:`knowgap.suites.clarify.correctness_failures.measure_negated_terms`) and **extract-takeover** on
``takeover_warnings.jsonl`` (:mod:`knowgap.suites.extract.takeover_failures`).

An entry whose figure reaches the card bar (0.80) is named a construct checked (:data:`CHECKED`), not a failure;
the bar was fixed here before any of these sets was measured. ``tests/judges/test_known_failures.py`` re-measures
each one and holds it to the shipped card; :func:`reissue_with_known_failures` re-issues a shipped card with its
entries (experiments/known_failures_reissue.py), its main measurement untouched.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from knowgap.jsonl import read_models
from knowgap.judges.cards import (
    REPORTABLE_BALANCED_ACCURACY,
    SHIPPED_DIR,
    Estimate,
    KnownFailure,
    LanguageFigure,
    ValidityCard,
    card_key,
    cards_in,
    reissue_card,
)
from knowgap.stats import mean_interval, wilson

LABELLED_DIR = Path(str(files("knowgap.judges") / "data" / "labelled"))
VERBATIM_EXTRACTS = LABELLED_DIR / "verbatim_extracts.jsonl"
VERBATIM_RULE = "src/knowgap/judges/data/labelled/verbatim_extracts_rule.md"
VERBATIM_NAME = "verbatim extract: an unfaithful summary made of the document's own clauses copied verbatim (one " \
                "fact changed, or one clause out of context) against a faithful summary in other words"


class ExtractPair(BaseModel):
    """One line of ``verbatim_extracts.jsonl`` (``construct``: fact or context, read as ``variant``)."""

    model_config = ConfigDict(populate_by_name=True)

    id: str
    lang: str
    source: str
    document: str
    faithful: str
    unfaithful: str
    variant: str = Field(alias="construct")
    change: str
    disputable: bool = False
    reason: str = ""


def extract_pairs(path: Path = VERBATIM_EXTRACTS) -> list[ExtractPair]:
    from knowgap.strictjsonl import read_strict

    found = read_strict(path, ExtractPair, what="pairs")
    if found.problems:
        raise ValueError(f"{path}: {found.problems[0]}")
    return [record for _line, record in found.records]


def _pick(wins: Sequence[float]) -> LanguageFigure:
    """n pairs and the pick accuracy (a tie counts half) with its 95% interval: a seeded bootstrap over the pairs
    (one pair per document, so pairs are the independent units), Wilson's where they all agree
    (:func:`knowgap.stats.mean_interval`)."""
    if not wins:
        return LanguageFigure(n=0)
    ci = mean_interval(list(wins), list(range(len(wins))))
    return LanguageFigure(n=len(wins), figure=Estimate(value=sum(wins) / len(wins), ci_low=ci[0] if ci else None,
                                                       ci_high=ci[1] if ci else None))


def measure_verbatim_extracts(path: Path = VERBATIM_EXTRACTS) -> KnownFailure:
    """The offline faithfulness checker on the verbatim-extract pairs: pick accuracy overall and per language; the
    notes give it per construct and each summary's verdict against its label."""
    from knowgap.judges.faithfulness import OfflineFaithfulness

    pairs = extract_pairs(path)
    checker = OfflineFaithfulness()
    wins: list[float] = []
    called: dict[str, list[bool]] = {"faithful": [], "unfaithful": []}
    for pair in pairs:
        good = checker.check(pair.document, pair.faithful)
        bad = checker.check(pair.document, pair.unfaithful)
        g = -1.0 if good.score is None else good.score  # no score (empty, other language) loses the pair
        b = -1.0 if bad.score is None else bad.score
        wins.append(1.0 if g > b else 0.5 if g == b else 0.0)
        called["faithful"].append(good.verdict == "faithful")
        called["unfaithful"].append(bad.verdict == "faithful")
    overall = _pick(wins)
    assert overall.figure is not None
    languages = {lang: _pick([w for w, p in zip(wins, pairs, strict=True) if p.lang == lang])
                 for lang in sorted({p.lang for p in pairs})}
    constructs = {c: _pick([w for w, p in zip(wins, pairs, strict=True) if p.variant == c])
                  for c in sorted({p.variant for p in pairs})}
    by_construct = "; ".join(f"{c} {f.figure.value:.2f} (n={f.n})" for c, f in constructs.items()
                             if f.figure is not None and f.figure.value is not None)
    notes = (f"Per construct: {by_construct}. Verdicts (faithful at score >= 0.5): {sum(called['faithful'])} of "
             f"{len(pairs)} faithful summaries called faithful, {sum(called['unfaithful'])} of {len(pairs)} "
             f"unfaithful extracts called faithful. Pairs and labels by rule verbatim-extract-1 ({VERBATIM_RULE}), "
             "built by one knowgap development session (Claude, an AI assistant) before the checker ran on them. "
             f"Disputable pairs: {sum(p.disputable for p in pairs)}.")
    return KnownFailure(name=VERBATIM_NAME, labelled_set="src/knowgap/judges/data/labelled/verbatim_extracts.jsonl",
                        n=len(pairs), figure=overall.figure,
                        measure="pick accuracy (the faithful summary scored higher; a tie counts half)",
                        languages=languages, notes=notes)


HEDGED_ANSWERS = LABELLED_DIR / "hedged_answers.jsonl"
HEDGED_RULE = "src/knowgap/judges/data/labelled/hedged_answers_rule.md"
HEDGED_NAME = ("hedged answer: a reply that opens with a hedge (\"I'm not sure, but I think ...\", "
               "\"我不确定，可能是...\") and still answers (not an abstention)")


class HedgedAnswer(BaseModel):
    """One line of ``hedged_answers.jsonl``."""

    id: str
    lang: str
    question: str
    answer: str
    response: str
    abstained: bool
    source: str


def _share(k: int, n: int, positives: int = 0) -> LanguageFigure:
    """n items, ``positives`` of them labelled positive, and the share ``k / n`` judged as labelled (Wilson 95%)."""
    if not n:
        return LanguageFigure(n=0)
    low, high = wilson(k, n)
    return LanguageFigure(n=n, positives=positives, figure=Estimate(value=k / n, ci_low=low, ci_high=high))


def measure_hedged_answers(path: Path = HEDGED_ANSWERS) -> KnownFailure:
    """The offline abstention detector on hedged replies that still answer: the share it calls answered."""
    from knowgap.judges.abstention import judge_abstention
    from knowgap.strictjsonl import read_strict

    found = read_strict(path, HedgedAnswer, what="replies")
    if found.problems:
        raise ValueError(f"{path}: {found.problems[0]}")
    rows = [record for _line, record in found.records]
    right = [judge_abstention(r.response).abstained == r.abstained for r in rows]
    overall = _share(sum(right), len(rows))
    assert overall.figure is not None
    languages = {lang: _share(sum(ok for ok, r in zip(right, rows, strict=True) if r.lang == lang),
                              sum(r.lang == lang for r in rows)) for lang in sorted({r.lang for r in rows})}
    missed = [r.id for ok, r in zip(right, rows, strict=True) if not ok]
    notes = (f"{len(missed)} of {len(rows)} hedged answers called abstentions ({', '.join(missed) or 'none'}). "
             f"Replies and labels by rule hedged-answer-1 ({HEDGED_RULE}), built by one knowgap development session "
             "(Claude, an AI assistant) before the detector ran on them.")
    return KnownFailure(name=HEDGED_NAME, labelled_set="src/knowgap/judges/data/labelled/hedged_answers.jsonl",
                        n=len(rows), figure=overall.figure,
                        measure="specificity (replies called answered, not an abstention)", languages=languages,
                        notes=notes)


def with_known_failure(card: ValidityCard, failure: KnownFailure) -> ValidityCard:
    """``card`` with ``failure`` in its known failures (replacing one of the same labelled set)."""
    kept = [f for f in card.known_failures if f.labelled_set != failure.labelled_set]
    return card.model_copy(update={"known_failures": [*kept, failure]})


# --- constructs measured as the share of items judged as labelled (issue 37, wave 6) -------------------------------
CHECKED = "construct checked (the judge handles it): "
"""The start of an entry's name whose figure reaches :data:`~knowgap.judges.cards.REPORTABLE_BALANCED_ACCURACY`: a
construct a careful reader would try, measured, that the judge does not fail."""

ANNOTATOR = ("Built and labelled by rule {rule} ({path}) by one knowgap development session (a Claude-based helper "
             "agent, a language model), committed before the judge ran on them")


def labelled_path(path: Path) -> str:
    """The repository path of a set in the labelled folder, as a card names it."""
    return f"src/knowgap/judges/data/labelled/{path.name}"


def construct_entry(construct: str, path: Path, rule: str, measure: str, ids: Sequence[str], langs: Sequence[str],
                    right: Sequence[bool], *, wrong_means: str, notes: str = "",
                    labels: Sequence[bool] | None = None) -> KnownFailure:
    """The entry of a construct whose figure is the share of its items the judge decided as labelled (``right``;
    Wilson 95%), overall and per language (with the items labelled positive, ``labels``, when given); the notes name
    each item decided otherwise. Named a construct checked (:data:`CHECKED`) when the share reaches the card bar, a
    known failure otherwise."""
    overall = _share(sum(right), len(right))
    if overall.figure is None or overall.figure.value is None:
        raise ValueError(f"{path}: no items")

    def figure(lang: str) -> LanguageFigure:
        mine = [i for i, la in enumerate(langs) if la == lang]
        return _share(sum(right[i] for i in mine), len(mine), sum(labels[i] for i in mine) if labels else 0)

    languages = {lang: figure(lang) for lang in sorted(set(langs))}
    missed = [i for i, ok in zip(ids, right, strict=True) if not ok]
    checked = overall.figure.value >= REPORTABLE_BALANCED_ACCURACY
    text = (f"{len(missed)} of {len(right)} {wrong_means} ({', '.join(missed) or 'none'}). "
            + (f"A construct checked: the share reaches the card bar ({REPORTABLE_BALANCED_ACCURACY:.2f}). "
               if checked else "")
            + (f"{notes} " if notes else "") + ANNOTATOR.format(rule=rule, path=rule_path(path)) + ".")
    return KnownFailure(name=(CHECKED if checked else "") + construct, labelled_set=labelled_path(path), n=len(right),
                        figure=overall.figure, measure=measure, languages=languages, notes=text)


def rule_path(path: Path) -> str:
    """The rule file beside a labelled set (``X.jsonl`` -> ``X_rule.md``)."""
    return labelled_path(path).removesuffix(".jsonl") + "_rule.md"


def reissue_with_known_failures(judge: str, version: str, failures: Sequence[KnownFailure], issued: str,
                                judge_model: str | None = None, folder: Path = SHIPPED_DIR) -> Path | None:
    """Re-issue the shipped card of ``judge`` ``version`` with ``failures`` among its known failures (one of the
    same labelled set replaced), dated ``issued``; its main measurement is not touched. The earlier issue is kept in
    ``superseded/`` (:func:`~knowgap.judges.cards.reissue_card`). None when the card already holds them all (the
    measured dates aside), so running it again changes nothing."""
    key = card_key(judge, version, judge_model)
    card = next((c for c in cards_in(folder) if c.key == key), None)
    if card is None:
        raise ValueError(f"no shipped card {key} in {folder}")
    new = card
    for failure in failures:
        new = with_known_failure(new, failure)

    def entries(c: ValidityCard) -> list[dict[str, object]]:
        return sorted((f.model_dump(exclude={"measured"}) for f in c.known_failures), key=str)

    if entries(new) == entries(card):
        return None
    return reissue_card(new.model_copy(update={"issued": issued}), folder)[0]


SELF_POSED = LABELLED_DIR / "self_posed_questions.jsonl"
SELF_POSED_NAME = ("self-posed question: a reply that asks a question of itself and answers it at once (\"What does "
                   "this mean? It means ...\", \"那么，…能否…？可以。\"): not asking the user, and, a flat answer, not "
                   "qualified")


class SelfPosedQuestion(BaseModel):
    """One line of ``self_posed_questions.jsonl`` (rule self-posed-question-1)."""

    id: str
    lang: str
    case_id: str
    query: str
    reply: str
    form: int
    asks: bool
    qualified: bool
    reason: str = Field(min_length=1)


def measure_self_posed_questions(part: str, path: Path = SELF_POSED) -> KnownFailure:
    """The clarify detector on replies that answer a question they pose themselves: ``part`` ``asked`` (the
    ``clarification`` card: the share not called asking) or ``flagged`` (the ``qualified-answer`` card: the share
    not called qualified, the replies ``unqualified_answer_rate`` should count)."""
    from knowgap.judges.clarification import clarification_signals

    rows = [r for _line, r in read_models(path, SelfPosedQuestion, what="replies")]
    signals = [clarification_signals(r.reply, r.query) for r in rows]
    if part == "asked":
        right = [s.asked == r.asks for s, r in zip(signals, rows, strict=True)]
        return construct_entry(SELF_POSED_NAME, path, "self-posed-question-1",
                               "specificity (replies not called asking the user)", [r.id for r in rows],
                               [r.lang for r in rows], right, wrong_means="replies called asking",
                               labels=[r.asks for r in rows])
    if part == "flagged":
        right = [s.flagged == r.qualified for s, r in zip(signals, rows, strict=True)]
        why = Counter("asked" if s.asked else "a condition" if s.conditionals else "an insufficiency flag"
                      for s in signals if s.flagged)
        return construct_entry(SELF_POSED_NAME, path, "self-posed-question-1",
                               "specificity (flat answers not called qualified)", [r.id for r in rows],
                               [r.lang for r in rows], right, wrong_means="flat answers called qualified",
                               labels=[r.qualified for r in rows],
                               notes="Flagged by: " + (", ".join(f"{k} {v}" for k, v in sorted(why.items()))
                                                       or "none") + ".")
    raise ValueError(f"part: asked or flagged, not {part!r}")


DID_NOT_MENTION = LABELLED_DIR / "did_not_mention.jsonl"
NOT_MENTIONED_LEAD = LABELLED_DIR / "not_mentioned_lead.jsonl"
REFUSAL_CONSTRUCTS = {
    DID_NOT_MENTION.name: ("did-not-mention-1", "'did not mention' sentence: a short summary that adds, in a sentence "
                           "of its own after the summary, that the review does not mention something (\"... The "
                           "reviewer did not mention the price.\", \"…。评论没有提到价格。\"), which declines "
                           "nothing and must be checked, not set aside as a refusal"),
    NOT_MENTIONED_LEAD.name: ("not-mentioned-lead-1", "'did not mention' in the first sentence: a short summary whose "
                              "first (or only) sentence says what the review does not mention (\"..., but the reviewer "
                              "did not mention prices.\", \"评论没有提到早餐，只说…\"), which declines nothing and "
                              "must be checked, not set aside as a refusal"),
}
"""The refusal rule's constructs: set file name -> (rule, construct)."""


class DidNotMention(BaseModel):
    """One line of ``did_not_mention.jsonl`` (rule did-not-mention-1) or ``not_mentioned_lead.jsonl`` (rule
    not-mentioned-lead-1)."""

    id: str
    lang: str
    case_id: str
    review: str
    summary: str
    form: int
    refusal: bool
    faithful: bool
    reason: str = Field(min_length=1)


def did_not_mention_rows(path: Path = DID_NOT_MENTION) -> list[DidNotMention]:
    """The rows of a refusal construct's set (``did_not_mention.jsonl`` or ``not_mentioned_lead.jsonl``)."""
    return [r for _line, r in read_models(path, DidNotMention, what="summaries")]


def refusal_entry(rows: Sequence[DidNotMention], refused: Sequence[bool], path: Path = DID_NOT_MENTION,
                  judge: str = "the checker") -> KnownFailure:
    """The did-not-mention entry from each summary's refusal call (``refused``): the share passed on to be checked,
    with how many unfaithful summaries the rule set aside (they escape the faithfulness metrics)."""
    right = [r.refusal == called for r, called in zip(rows, refused, strict=True)]
    escaped = sum(called and not r.faithful for r, called in zip(rows, refused, strict=True))
    rule, construct = REFUSAL_CONSTRUCTS[path.name]
    return construct_entry(construct, path, rule,
                           "specificity of the refusal rule (summaries passed on to be checked, not called refusals)",
                           [r.id for r in rows], [r.lang for r in rows], right,
                           wrong_means="summaries called refusals", labels=[r.refusal for r in rows],
                           notes=f"The refusal rule alone is measured ({judge} runs it before anything else). "
                                 f"{escaped} of {sum(not r.faithful for r in rows)} unfaithful summaries were set "
                                 "aside as refusals, so no faithfulness figure counts them.")


def measure_did_not_mention(path: Path = DID_NOT_MENTION) -> KnownFailure:
    """The offline faithfulness checker's refusal rule on summaries that say the review does not mention something
    (``path``: either set of :data:`REFUSAL_CONSTRUCTS`)."""
    from knowgap.judges.faithfulness import OfflineFaithfulness

    rows = did_not_mention_rows(path)
    checker = OfflineFaithfulness()
    return refusal_entry(rows, [checker.analyse(r.review, r.summary) == "refusal" for r in rows], path,
                         "the offline checker")


DISTANT_NEGATION = LABELLED_DIR / "distant_negation.jsonl"
DISTANT_NEGATION_NAME = ("distant negation: a reply that denies certainty with the negation a few words before the "
                         "overconfident word (\"I would not say you will definitely win\", \"我不能说你一定会赢\"): "
                         "no overconfident assertion")


class NegatedAssertion(BaseModel):
    """One line of ``distant_negation.jsonl`` (rule distant-negation-1)."""

    id: str
    lang: str
    case_id: str
    query: str
    reply: str
    form: int
    asserts: bool
    reason: str = Field(min_length=1)


def measure_distant_negation(path: Path = DISTANT_NEGATION) -> KnownFailure:
    """The dangerous-assertion detector on replies that deny certainty with the negation a few words before the
    overconfident word: the share in which it finds no overconfident assertion."""
    from knowgap.judges.clarification import dangerous_assertions

    rows = [r for _line, r in read_models(path, NegatedAssertion, what="replies")]
    found = [dangerous_assertions(r.reply) for r in rows]
    words = Counter(w for f in found for w in f)
    return construct_entry(DISTANT_NEGATION_NAME, path, "distant-negation-1",
                           "specificity (replies with no overconfident assertion found)", [r.id for r in rows],
                           [r.lang for r in rows], [bool(f) == r.asserts for f, r in zip(found, rows, strict=True)],
                           wrong_means="replies called overconfident", labels=[r.asserts for r in rows],
                           notes="Words taken for assertions: " + (", ".join(f"{w} {k}" for w, k in
                                                                           sorted(words.items())) or "none") + ".")
