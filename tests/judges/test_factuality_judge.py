"""The offline factuality judge: verdicts on hand-written answers, its versioned weights, the logistic combiner,
grouped cross-validation, and a re-measure of a stratified sample of the labelled dev answers against the
shipped validity card."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from knowgap.errors import KnowgapError
from knowgap.judges.cards import Estimate, find_card
from knowgap.judges.factuality import WEIGHTS_PATH, OfflineFactuality, load_weights
from knowgap.judges.factuality_features import FEATURES, FactualityRow, feature_matrix, yes_no
from knowgap.judges.factuality_validation import grouped_folds, load_labelled, tier_kappa, validate_factuality
from knowgap.judges.logistic import fit_logistic
from knowgap.text.embed import default_embedder
from tests.helpers import REPO

SHARED_DATA = next((p for p in (REPO.parent / "shared" / "data", Path("/work/shared/data"))
                    if (p / "policybench" / "responses_dev.jsonl").is_file()), None)

FEE_Q = "What is the late fee for overdue library books?"
FEE = "The late fee is 20 cents per day for each overdue book, up to a maximum of 5 dollars per book."
CARD_Q = "Can I renew my passport online if it has already expired?"
CARD = "No, an expired passport cannot be renewed online. You must apply in person at the service centre."
ZH_Q = "医保每年的起付线是多少？"
ZH = "医保每年的起付线为1500元，超过部分按比例报销。"


@pytest.fixture(scope="module")
def judge() -> OfflineFactuality:
    return OfflineFactuality()


def test_the_same_facts_pass_and_wrong_or_missing_facts_fail(judge: OfflineFactuality) -> None:
    rows = [
        FactualityRow(FEE_Q, FEE, "Overdue books cost 20 cents a day each, capped at 5 dollars per book."),
        FactualityRow(FEE_Q, FEE, "The late fee is 2 dollars per week, with no maximum."),
        FactualityRow(CARD_Q, CARD, "No. Once a passport has expired it cannot be renewed online; you need to "
                                    "apply in person at the service centre."),
        FactualityRow(CARD_Q, CARD, "Yes, you can renew it online through the e-service portal at any time."),
        FactualityRow(ZH_Q, ZH, "起付线是每年1500元，超过的部分按比例报销。"),
        FactualityRow(ZH_Q, ZH, "大概300元吧，具体可能要咨询医院。"),
    ]
    verdicts = judge.judge(rows, batch=4)
    assert [v.acceptable for v in verdicts] == [True, False, True, False, True, False]
    for v in verdicts:
        assert 0.0 <= v.score <= 1.0 and v.acceptable == (v.tier != "tier_3") and v.version == judge.version
    assert verdicts[0].score > verdicts[1].score and verdicts[4].score > verdicts[5].score
    # one at a time gives the same verdict as in a batch
    assert judge.judge_one(FEE_Q, FEE, rows[1].response).score == pytest.approx(verdicts[1].score, abs=1e-3)


def test_signals_in_both_languages() -> None:
    openings = ("No, it cannot.", "Yes - it can.", "不可以，必须本人办理。", "可以。", "The fee is 5.")
    assert [yes_no(t) for t in openings] == [-1, 1, -1, 1, 0]
    x = feature_matrix([FactualityRow(FEE_Q, FEE, "The late fee is 2 dollars per week."),
                        FactualityRow(CARD_Q, CARD, "Yes, you can.")], default_embedder())
    col = {name: x[:, i] for i, name in enumerate(FEATURES)}
    assert col["numbers_conflict"].tolist() == [1.0, 0.0] and col["polarity_mismatch"].tolist() == [0.0, 1.0]
    assert col["numbers_recall"][0] == 0.0 and np.all((col["coverage_mean"] > 0) & (col["coverage_mean"] <= 1.0001))


def test_version_follows_the_weights_and_stale_weights_are_refused(tmp_path: Path) -> None:
    weights = load_weights()
    assert weights.model.features == list(FEATURES) and len(WEIGHTS_PATH.read_bytes()) < 8000
    changed = weights.model_copy(deep=True)
    changed.model.weights[0] += 0.01
    assert changed.version() != weights.version() and OfflineFactuality(changed).version == changed.version()
    stale = json.loads(WEIGHTS_PATH.read_text(encoding="utf-8"))
    stale["model"]["features"] = stale["model"]["features"][:-1]
    (tmp_path / "w.json").write_text(json.dumps(stale), encoding="utf-8")
    with pytest.raises(KnowgapError, match="w.json: weights for features"):
        load_weights(tmp_path / "w.json")


def test_logistic_combiner_recovers_a_known_rule() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(400, 3)) * [1.0, 5.0, 0.1] + [0.0, 10.0, 0.0]
    y = (x[:, 0] - 0.4 * (x[:, 1] - 10) + rng.normal(scale=0.3, size=400) > 1.2).astype(float)  # rare positives
    model = fit_logistic(x, y, ["a", "b", "c"], l2=0.1)
    w = np.array(model.weights)
    assert w[0] > 0 > w[1] and abs(w[2]) < 0.5 * min(abs(w[0]), abs(w[1]))
    predicted = model.probability(x) >= 0.5
    recall_pos, recall_neg = predicted[y == 1].mean(), (~predicted[y == 0]).mean()
    assert recall_pos > 0.85 and recall_neg > 0.85  # balanced weights: the rare class is not drowned out
    with pytest.raises(ValueError, match="both classes"):
        fit_logistic(x, np.zeros(400), ["a", "b", "c"])


def test_folds_never_split_a_question() -> None:
    groups = [f"q{i % 23}" for i in range(200)]
    fold = grouped_folds(groups, 5, seed=1)
    for g in set(groups):
        assert len({fold[i] for i, h in enumerate(groups) if h == g}) == 1
    assert sorted(set(fold.tolist())) == [0, 1, 2, 3, 4]
    assert grouped_folds(groups, 5, seed=1).tolist() == fold.tolist()
    assert tier_kappa(["tier_1", "tier_3", "tier_3"], ["tier_1", "tier_3", "tier_3"]) == 1.0


@pytest.mark.slow
@pytest.mark.skipif(SHARED_DATA is None, reason="the shared data folder (../shared/data) is not here")
def test_a_stratified_sample_still_meets_the_shipped_card() -> None:
    """A regression of the features or the fitting shows as a held-out balanced accuracy below the 95% CI of the
    PolicyBench measurement the shipped card keeps in its ``extra`` (``policybench_gpt4o_*``; the card itself is
    measured on the embedded models' real answers), re-measured on a tier-stratified sample, cross-validated within
    it."""
    assert SHARED_DATA is not None
    card_now = find_card("factuality", load_weights().version())
    assert card_now is not None
    earlier = card_now.extra["policybench_gpt4o_balanced_accuracy"]
    assert isinstance(earlier, Estimate) and earlier.ci_low is not None
    n = card_now.extra["policybench_gpt4o_n"]
    assert isinstance(n, float) and n >= 1000
    sample = load_labelled(SHARED_DATA / "policybench" / "responses_dev.jsonl", limit=90)
    assert len(sample) == 90 and {"tier_1", "tier_2", "tier_3"} <= set(sample.tiers)
    card = validate_factuality(SHARED_DATA, limit=90)
    assert card.n == 90 and card.version == card_now.version and "grouped by question_id" in card.method
    assert card.balanced_accuracy is not None and card.balanced_accuracy.value is not None
    assert card.balanced_accuracy.value >= earlier.ci_low
