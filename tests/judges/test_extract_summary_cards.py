"""The offline faithfulness checker's card on the real extract summaries (issue 37, the card rule): the shipped checker
on every labelled summary of judges/data/labelled/extract_summaries.jsonl, each checked as an extract run checks it;
the figure on the summaries a run scores (the population of faithfulness_offline and offline_unfaithful_rate), the
unscored ones counted apart; a checker that calls everything faithful gets 0.5; the catalogue measures this set
without --data; the shipped card reproduces from its recorded per-summary verdicts, and the checker still gives
them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from knowgap.engine.records import TrialRecord
from knowgap.errors import KnowgapError
from knowgap.judges.cards import assess, shipped_cards
from knowgap.judges.catalog import validate
from knowgap.judges.extract_summary_cards import (
    Check,
    Checks,
    SummaryCheck,
    checker_results,
    faithfulness_offline_card,
    summary_labels,
)
from knowgap.judges.faithfulness import VERSION
from knowgap.suites.extract import ExtractSuite
from knowgap.suites.extract.specs import SPECS
from knowgap.suites.judge_registry import get_judge
from tests.helpers import REPO

RECORDED = REPO / "tests" / "fixtures" / "extract_summary_cards" / "faithfulness.verdicts.jsonl"
"""The shipped checker's verdict and score of every labelled summary, as the shipped card's measurement gave them
(``faithfulness_offline_card``'s per-summary records)."""
RULE_FIELDS = ("n", "confusion", "balanced_accuracy", "sensitivity", "specificity", "kappa", "parse_failures",
               "languages", "replies", "labelling", "claim", "dataset", "dataset_sha256", "positive", "extra",
               "method", "notes", "version")


def _by_text(found: dict[tuple[str, str], Check]) -> Checks:
    def checks(pairs: Sequence[tuple[str, str]]) -> list[Check]:
        return [found[pair] for pair in pairs]  # KeyError: a pair that is not (review, summary) of an item
    return checks


def test_the_figure_is_on_the_scored_summaries_and_the_unscored_are_counted_apart() -> None:
    """A checker right on every English summary that leaves every Chinese one unscored (other_language, as it does
    an English summary of a Chinese review): the figure is 1.0 on the en items alone, the zh ones are counted in
    extra and would bring the figure down if counted as wrong verdicts."""
    items, _ = summary_labels()
    found: dict[tuple[str, str], Check] = {
        (it.review, it.summary): ("other_language", None) if it.lang == "zh" else
        ("unfaithful", 0.2) if it.unfaithful else ("faithful", 0.8) for it in items}
    card, per_item = faithfulness_offline_card(_by_text(found))
    en = [it for it in items if it.lang == "en"]
    assert card.n == len(en) and card.balanced_accuracy is not None and card.balanced_accuracy.value == 1.0
    assert card.languages is not None and set(card.languages) == {"en"}  # a zh run would show 'no card for zh'
    assert card.extra["unscored_other_language"] == len(items) - len(en)
    assert card.extra["unscored_other_language_unfaithful"] == sum(it.unfaithful for it in items if it.lang == "zh")
    counted_wrong = card.extra["balanced_accuracy_unscored_counted_wrong"]
    assert not isinstance(counted_wrong, (float, str)) and counted_wrong.value is not None
    assert counted_wrong.value < 1.0
    assert card.extra["mean_score_faithful"] == 0.8 and card.extra["mean_score_unfaithful"] == 0.2
    assert [p.id for p in per_item] == [it.id for it in items]
    assert all((p.verdict is None) == (p.lang == "zh") for p in per_item)
    assert assess(card, languages=["zh"]).reason.startswith("no card for zh")


def test_a_checker_that_calls_every_summary_faithful_gets_one_half_with_each_model_and_the_earlier_card_apart(
) -> None:
    card, _ = faithfulness_offline_card(lambda pairs: [("faithful", 0.9)] * len(pairs))
    assert card.positive == "faithful" and card.confusion is not None
    assert (card.confusion.fn, card.confusion.tn) == (0, 0) and card.confusion.fp > 0
    assert card.balanced_accuracy is not None and card.balanced_accuracy.value == 0.5
    assert card.replies is not None and set(card.replies.models) == {"local:qwen2.5-0.5b", "local:qwen2.5-1.5b"}
    assert {"n_local:qwen2.5-0.5b", "n_local:qwen2.5-1.5b_en", "balanced_accuracy_local:qwen2.5-0.5b_zh"} <= set(
        card.extra)
    # the benchmark card's figures, kept apart (another writer and annotator), never pooled into n
    assert card.extra["summedits_aggrefact_n"] == 1914.0 and card.n == 84
    assert card.labelling is not None and card.labelling.before_judge and "claims-1" in card.labelling.rule
    assert {f.labelled_set.rsplit("/", 1)[1] for f in card.known_failures} == {
        "verbatim_extracts.jsonl", "did_not_mention.jsonl", "not_mentioned_lead.jsonl"}


def test_the_card_checks_each_summary_as_an_extract_run_does_and_its_negative_is_what_the_rate_counts() -> None:
    """The checker's verdict of each labelled summary is what the extract suite records for it (offline_score,
    offline_verdict), and the card's negative (unfaithful) is exactly a 'wrong' offline_unfaithful_rate verdict;
    an unscored summary gets no such verdict."""
    items, _ = summary_labels()
    checks = checker_results([(it.review, it.summary) for it in items])
    suite = ExtractSuite(ExtractSuite.Options.model_validate({}))
    (spec,) = [s for s in SPECS if s.name == "offline_unfaithful_rate"]
    assert spec.counts == "negative" and get_judge("faithfulness").positive == "faithful"
    for it, (outcome, score) in zip(items, checks, strict=True):
        run = {"parsed": True, "sentiment": "positive", "conflicting": False, **suite._offline(it.review, it.summary)}
        assert (run["offline_verdict"], run["offline_score"]) == (outcome, score), it.id
        record = TrialRecord(trial_id="t", case_id=it.case_id, config_id="prompt=default",
                             output={"kind": "normal", "clean": [run]})
        rate = [v.verdict for v in suite.verdicts(record) if v.metric == "offline_unfaithful_rate"]
        check = SummaryCheck(id=it.id, model=it.model, lang=it.lang, faithful=not it.unfaithful, outcome=outcome,
                             score=score)
        assert rate == ([] if check.verdict is None else ["right" if check.verdict else "wrong"]), it.id


def test_the_catalogue_measures_the_real_summaries_without_data_and_the_benchmarks_with_it(tmp_path: Path,
                                                                                            kg_home: Path) -> None:
    judge = get_judge("faithfulness")
    assert judge.needs_data is False
    card = validate(judge)
    assert card.dataset == "extract_summaries.jsonl" and card.version == VERSION
    assert card.n + card.extra["unscored"] == len(summary_labels()[0])
    sample = validate(judge, limit=20)
    assert sample.n + sample.extra["unscored"] == 20 and "seeded sample" in sample.method
    with pytest.raises(KnowgapError, match="summedits|faithfulness"):  # --data: the benchmarks' folder is read
        validate(judge, data_dir=tmp_path)


def _recorded() -> list[SummaryCheck]:
    return [SummaryCheck.model_validate_json(line) for line in RECORDED.read_text(encoding="utf-8").splitlines()]


def test_the_shipped_card_reproduces_from_its_recorded_verdicts() -> None:
    recorded = _recorded()
    items, _ = summary_labels()
    assert [r.id for r in recorded] == [it.id for it in items]
    assert all(r.faithful == (not it.unfaithful) for r, it in zip(recorded, items, strict=True))
    said = {(it.review, it.summary): (r.outcome, r.score) for r, it in zip(recorded, items, strict=True)}
    (shipped,) = [c for c in shipped_cards() if c.judge == "faithfulness"]
    card, per_item = faithfulness_offline_card(_by_text(said))
    assert per_item == recorded
    for field in RULE_FIELDS:
        assert getattr(card, field) == getattr(shipped, field), field
    assert [f.model_dump(exclude={"measured"}) for f in card.known_failures] == [
        f.model_dump(exclude={"measured"}) for f in shipped.known_failures]


def test_the_checker_still_gives_its_recorded_verdicts() -> None:
    """The shipped weights and rules give today the verdict and score of every labelled summary the shipped card was
    measured from (the checker needs no embeddings: about a second for the 84)."""
    recorded = _recorded()
    items, _ = summary_labels()
    assert checker_results([(it.review, it.summary) for it in items]) == [(r.outcome, r.score) for r in recorded]
