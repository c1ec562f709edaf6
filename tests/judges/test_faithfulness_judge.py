"""The offline faithfulness judge on real text: invented numbers, flipped negations and copied sentences that lost
their referent; each source analysed and embedded once; grouped cross-validation; and a regression check that
re-measures a stratified sample of the labelled benchmarks against the checker's card on them (the shipped card is
measured on real extract summaries: test_extract_summary_cards.py)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from knowgap.judges import faithfulness_features
from knowgap.judges.cards import SUPERSEDED_DIR, ValidityCard, cards_in, find_card, shipped_cards
from knowgap.judges.faithfulness import JUDGE_NAME, RULES, VERSION, OfflineFaithfulness
from knowgap.judges.faithfulness_data import CalibrationPair, group_of, near_verbatim_pairs
from knowgap.judges.faithfulness_model import fit, load
from knowgap.judges.faithfulness_validity import DATASET, grouped_folds, pick_accuracy, validate_faithfulness
from knowgap.stats import wilson
from knowgap.text.embed import Kind, default_embedder
from tests.helpers import REPO, SHARED_DATA, knowgap_cli

NEWS = ("The city council approved a budget of 45 million dollars on Tuesday after a long debate. "
        "Mayor Linda Park said the money would pay for new bus lines and two libraries. "
        "Opposition members did not support the plan, arguing that taxes would rise. "
        "The vote was seven to four. "
        "Separately, police said a warehouse fire in the harbour district injured three workers. "
        "Fire chief Tom Reyes said the cause was not yet known. "
        "He said the investigation would take several weeks.")


@pytest.fixture(scope="module")
def checker() -> OfflineFaithfulness:
    return OfflineFaithfulness()


def test_a_faithful_copy_passes(checker: OfflineFaithfulness) -> None:
    result = checker.check(NEWS, "The council approved a 45 million dollar budget on Tuesday. "
                                 "Opposition members did not support the plan.")
    assert result.verdict == "faithful" and all(not c.issues for c in result.claims), result


def test_an_invented_number_makes_it_unfaithful(checker: OfflineFaithfulness) -> None:
    good = checker.check(NEWS, "The council approved a 45 million dollar budget on Tuesday.")
    bad = checker.check(NEWS, "The council approved a 60 million dollar budget on Tuesday.")
    assert bad.claims[0].issues == ["number"] and bad.verdict == "unfaithful"
    assert bad.score is not None and good.score is not None and bad.score < good.score


def test_a_flipped_negation_makes_it_unfaithful(checker: OfflineFaithfulness) -> None:
    bad = checker.check(NEWS, "Opposition members supported the plan, arguing that taxes would rise.")
    assert "negation" in bad.claims[0].issues and bad.verdict == "unfaithful"


ZH_REVIEW = "外卖送了一个半小时，菜全凉了，米饭还是夹生的，不会再点了。"  # handwritten_zh_reviews.jsonl, zh-own


@pytest.mark.parametrize("summary", [
    "The delivery took an hour and a half, the food was cold and the rice undercooked; they will not order again.",
    "The delivery arrived in twenty minutes, the food was hot, and the customer will order again.",
])
def test_a_summary_in_another_language_is_not_scored(checker: OfflineFaithfulness, summary: str) -> None:
    # a word-comparing checker finds no Chinese word in English: it scored the faithful and the unfaithful
    # summary the same, unfaithful; now neither gets a score
    result = checker.check(ZH_REVIEW, summary)
    assert (result.verdict, result.score, result.claims) == ("other_language", None, [])
    assert checker.check(summary, ZH_REVIEW).verdict == "other_language"


def test_a_summary_in_its_sources_language_is_scored(checker: OfflineFaithfulness) -> None:
    faithful = checker.check(ZH_REVIEW, "外卖送了一个半小时，菜凉了，米饭夹生，顾客不会再点。")
    unfaithful = checker.check(ZH_REVIEW, "外卖二十分钟就送到了，菜很热，顾客还会再点。")
    assert faithful.verdict == "faithful" and unfaithful.verdict == "unfaithful"
    # too short to tell its language: checked as before, not set aside
    assert checker.check(NEWS, "Budget: 45 million.").verdict in ("faithful", "unfaithful")


def test_a_copied_sentence_that_lost_its_referent_is_flagged(checker: OfflineFaithfulness) -> None:
    # copied verbatim, but "He" now has no referent; and the same sentence pinned on the wrong person
    assert checker.check(NEWS, "He said the investigation would take several weeks.").claims[0].issues == ["context"]
    wrong = checker.check(NEWS, "Mayor Linda Park said the investigation would take several weeks.")
    assert wrong.claims[0].issues == ["context"]
    right = checker.check(NEWS, "Tom Reyes said the investigation would take several weeks.")
    assert right.claims[0].issues == []


class CountingEmbedder:
    """The real e5 embedder, counting every text the checker asks it to embed."""

    def __init__(self) -> None:
        self.inner = default_embedder()
        self.name = self.inner.name
        self.texts: Counter[str] = Counter()

    def embed(self, texts: Sequence[str], kind: Kind = "passage") -> np.ndarray:
        self.texts.update(texts)
        return self.inner.embed(texts, kind)


@pytest.mark.slow
def test_each_source_is_analysed_and_embedded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    builds: list[str] = []
    real_build = faithfulness_features.SourceIndex.build.__func__  # type: ignore[attr-defined]

    def counting_build(cls: type, source: str) -> faithfulness_features.SourceIndex:
        builds.append(source)
        return real_build(cls, source)  # type: ignore[no-any-return]

    monkeypatch.setattr(faithfulness_features.SourceIndex, "build", classmethod(counting_build))
    features = ["weak_claims", "copy_novel", "summary_sim"]  # a combiner that uses e5 similarity
    embedder = CountingEmbedder()
    checker = OfflineFaithfulness(embedder=embedder, combiner=fit(np.eye(3), np.array([0.0, 1.0, 1.0]), features))
    summaries = ["The council approved a 45 million dollar budget on Tuesday.",
                 "The budget of 45 million dollars was approved on Tuesday after a long debate.",
                 "Three workers were injured in a warehouse fire; its cause is not yet known."]
    for summary in summaries:
        assert checker.check(NEWS, summary).score is not None
    assert builds == [NEWS]
    source_units = set(checker.sources.get(NEWS).units)
    embedded_units = {t: n for t, n in embedder.texts.items() if t in source_units}
    assert embedded_units and set(embedded_units.values()) == {1}, embedded_units
    assert all(embedder.texts[s] == 1 for s in summaries)


def test_the_shipped_judge_needs_no_embeddings(checker: OfflineFaithfulness) -> None:
    embedder = CountingEmbedder()
    OfflineFaithfulness(embedder=embedder).check(NEWS, "The vote was seven to four.")
    assert not embedder.texts


def test_folds_keep_every_document_together_and_pick_accuracy_counts_ties_half() -> None:
    groups = [f"doc{i % 7}" for i in range(40)]
    folds = grouped_folds(groups, folds=3)
    for g in set(groups):
        assert len({int(f) for f, h in zip(folds, groups, strict=True) if h == g}) == 1
    assert set(folds.tolist()) == {0, 1, 2}
    pick = pick_accuracy([0.9, 0.1, 0.5, 0.5], [(0, 1), (2, 3)], ["a", "a", "b", "b"])
    assert pick.value == 0.75
    # a picker right on every pair of 5 documents: as uncertain as 5 of 5, not the bootstrap's point [1, 1]
    perfect = pick_accuracy([0.9, 0.1] * 5, [(2 * i, 2 * i + 1) for i in range(5)], [f"d{i // 2}" for i in range(10)])
    assert (perfect.value, perfect.ci_low, perfect.ci_high) == (1.0, *wilson(5, 5))


def test_near_verbatim_pairs_pair_a_faithful_summary_with_a_copied_unfaithful_one() -> None:
    source = "The bank raised its interest rate to 4 percent on Monday to fight inflation."

    def pair(summary: str, faithful: bool) -> CalibrationPair:
        return CalibrationPair(benchmark="t", subset="t", id=summary, source=source, summary=summary,
                               faithful=faithful)

    pairs = [pair("Rates went up to 4 percent to curb inflation.", True),
             pair("The bank raised its interest rate to 4 percent on Monday.", True),
             pair("The bank cut its interest rate to 4 percent on Monday to fight inflation.", False),  # 1 new word
             pair("A central bank lowered borrowing costs sharply last week.", False)]  # not copied
    assert near_verbatim_pairs(pairs) == [(0, 2), (1, 2)]
    assert near_verbatim_pairs(pairs, both=True) == [(1, 2)]
    assert len({group_of(p) for p in pairs}) == 1


def _benchmark_card() -> ValidityCard:
    """The latest card of the shipped version measured on the benchmarks (an earlier issue, kept in superseded/: the
    shipped card is measured on real extract summaries and keeps these figures apart in its extra)."""
    found = [c for c in (*shipped_cards(), *cards_in(SUPERSEDED_DIR))
             if (c.judge, c.version, c.dataset) == (JUDGE_NAME, VERSION, DATASET)]
    assert found, "no card of the shipped checker on SummEdits + AggreFact"
    return max(found, key=lambda c: (c.measured, c.issued or ""))


def test_the_shipped_combiner_has_a_card_from_its_training_data() -> None:
    combiner = load()
    assert OfflineFaithfulness().version == VERSION == f"{combiner.version}+{RULES}"
    card = _benchmark_card()
    assert card.positive == "faithful"
    assert card.dataset_sha256 == combiner.training_sha256 and card.n >= combiner.trained_on
    shipped = find_card(JUDGE_NAME, VERSION)
    assert shipped is not None and shipped.positive == "faithful" and shipped.dataset == "extract_summaries.jsonl"
    assert shipped.extra["summedits_aggrefact_balanced_accuracy"] == card.balanced_accuracy  # kept apart, not pooled
    moved = combiner.model_copy(update={"weights": [w + 0.1 for w in combiner.weights]})
    assert moved.version != combiner.version


def _benchmarks() -> Path | None:
    for folder in (REPO.parent / "shared" / "data" / "faithfulness", Path("/work/shared/data/faithfulness")):
        if (folder / "summedits").is_dir():
            return folder
    return None


@pytest.mark.slow
@pytest.mark.skipif(_benchmarks() is None, reason="the faithfulness benchmarks are only on the development machine")
def test_a_stratified_sample_stays_within_the_shipped_card() -> None:
    data = _benchmarks()
    assert data is not None
    card = validate_faithfulness(data, limit=400)
    shipped = _benchmark_card()
    assert shipped.balanced_accuracy is not None
    assert card.balanced_accuracy is not None and card.balanced_accuracy.value is not None
    assert shipped.balanced_accuracy.ci_low is not None
    assert card.balanced_accuracy.value >= shipped.balanced_accuracy.ci_low, (card.balanced_accuracy,
                                                                              shipped.balanced_accuracy)
    assert card.n >= 400 and set(card.extra) >= {"near_verbatim_pick_accuracy", "near_verbatim_pairs"}


@pytest.mark.skipif(SHARED_DATA is None, reason="no shared/data folder beside the repository")
def test_the_cli_finds_the_benchmarks_under_the_labelled_data_root(tmp_path: Path) -> None:
    """``knowgap judge validate faithfulness`` passes the labelled-data root, not its faithfulness/ folder."""
    assert SHARED_DATA is not None
    out = tmp_path / "card.json"
    done = knowgap_cli("judge", "validate", "faithfulness", "--data", str(SHARED_DATA), "--limit", "30",
                       "--out", str(out))
    assert done.returncode == 0, done.stderr
    card = json.loads(out.read_text(encoding="utf-8"))
    assert card["judge"] == "faithfulness" and card["n"] >= 30
    assert card["dataset_sha256"] == _benchmark_card().dataset_sha256
