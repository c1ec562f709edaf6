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

``tests/judges/test_known_failures.py`` re-measures each one and holds it to the shipped card.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from knowgap.judges.cards import Estimate, KnownFailure, LanguageFigure, ValidityCard
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


def _share(k: int, n: int) -> LanguageFigure:
    if not n:
        return LanguageFigure(n=0)
    low, high = wilson(k, n)
    return LanguageFigure(n=n, positives=0, figure=Estimate(value=k / n, ci_low=low, ci_high=high))


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
