"""Validity cards: the numbers a card holds and what they mean for a reported rate."""

from __future__ import annotations

import pytest

from knowgap.judges.cards import (
    Replies,
    ValidityCard,
    assess,
    binary_card,
    confusion_of,
    corrected,
    find_card,
    save_card,
    sha256_files,
)


def _card(tp: int, fn: int, fp: int, tn: int) -> ValidityCard:
    labels = [True] * (tp + fn) + [False] * (fp + tn)
    verdicts: list[bool | None] = [True] * tp + [False] * fn + [True] * fp + [False] * tn
    return binary_card("toy", "toy_v1", verdicts, labels, positive="yes", dataset="toy.jsonl", dataset_sha256="0")


def test_parse_failures_stay_in_the_denominator_as_wrong_verdicts() -> None:
    c, failures = confusion_of([True, None, None, False], [True, True, False, False])
    assert failures == 2
    assert (c.tp, c.fn, c.fp, c.tn) == (1, 1, 1, 1)
    card = binary_card("toy", "v", [True, None, None, False], [True, True, False, False], positive="yes",
                       dataset="d", dataset_sha256="0")
    assert card.n == 4 and card.parse_failures == 2
    assert card.agreement is not None and card.agreement.value == 0.5


def test_balanced_accuracy_is_the_mean_of_the_class_recalls_with_an_interval_around_it() -> None:
    card = _card(tp=90, fn=10, fp=60, tn=140)  # sensitivity 0.9, specificity 0.7
    ba = card.balanced_accuracy
    assert ba is not None and ba.value == pytest.approx(0.8)
    assert ba.ci_low is not None and ba.ci_high is not None and ba.ci_low < 0.8 < ba.ci_high
    assert card.sensitivity and card.sensitivity.value == pytest.approx(0.9)
    assert card.specificity and card.specificity.value == pytest.approx(0.7)
    assert card.kappa and card.kappa.value is not None and 0 < card.kappa.value < 1


def test_a_judge_without_a_card_or_below_the_bar_makes_a_screen() -> None:
    assert assess(None).status == "screen"
    assert "no validity card" in assess(None).reason
    weak = assess(_card(tp=60, fn=40, fp=40, tn=60))
    assert weak.status == "screen" and "0.60 < 0.80" in weak.reason
    good = _card(tp=95, fn=5, fp=5, tn=95)
    assert assess(good).status == "screen"  # it does not say which replies it was measured on (test_card_rule.py)
    real = good.model_copy(update={"replies": Replies(kind="real", models={"a": 100, "b": 100})})
    assert assess(real).status == "reportable"
    assert assess(None, judged=False).status == "computed"


def test_the_corrected_rate_undoes_a_known_bias_and_widens_for_a_small_card() -> None:
    # a judge that calls 20% of negatives positive inflates a true 10% rate to 0.1*0.9 + 0.9*0.2 = 27%
    big = _card(tp=900, fn=100, fp=200, tn=800)
    fixed = corrected(270, 1000, big)
    assert fixed is not None and fixed.value == pytest.approx(0.1, abs=1e-9)
    assert fixed.ci_low is not None and fixed.ci_high is not None
    assert fixed.ci_low < 0.1 < fixed.ci_high
    small = _card(tp=9, fn=1, fp=2, tn=8)
    wide = corrected(270, 1000, small)
    assert wide is not None and wide.ci_low is not None and wide.ci_high is not None
    assert wide.ci_high - wide.ci_low > fixed.ci_high - fixed.ci_low
    assert corrected(5, 10, _card(tp=5, fn=5, fp=5, tn=5)) is None  # no better than chance


def test_a_measured_card_is_found_before_a_shipped_one_and_only_for_its_version(tmp_path) -> None:
    card = _card(tp=9, fn=1, fp=1, tn=9).model_copy(update={"judge_model": "local:qwen2.5-0.5b"})
    path = save_card(card)
    assert path.exists()
    assert find_card("toy", "toy_v1", "local:qwen2.5-0.5b") == card
    assert find_card("toy", "toy_v2", "local:qwen2.5-0.5b") is None
    assert find_card("toy", "toy_v1") is None
    (tmp_path / "a").write_bytes(b"x")
    (tmp_path / "b").write_bytes(b"y")
    assert sha256_files([tmp_path / "a", tmp_path / "b"]) != sha256_files([tmp_path / "b", tmp_path / "a"])


def test_a_perfect_score_on_a_small_set_still_gets_an_interval_below_one() -> None:
    card = _card(tp=14, fn=0, fp=0, tn=14)
    ba, kappa = card.balanced_accuracy, card.kappa
    assert ba is not None and ba.value == 1.0 and ba.ci_low is not None and ba.ci_low < 0.95
    assert kappa is not None and kappa.ci_low is not None and kappa.ci_low < 0.95


def test_a_corrupt_measured_card_is_ignored_with_a_warning_naming_file_and_field(caplog) -> None:
    card = _card(tp=9, fn=1, fp=1, tn=9)
    path = save_card(card)
    broken = path.read_text(encoding="utf-8").replace('"n": 20', '"n": "twenty"')
    assert broken != path.read_text(encoding="utf-8")
    path.write_text(broken, encoding="utf-8")
    with caplog.at_level("WARNING", logger="knowgap.judges"):
        assert find_card("toy", "toy_v1") is None
    assert str(path) in caplog.text and "n:" in caplog.text
    path.write_text("{not json", encoding="utf-8")
    caplog.clear()
    with caplog.at_level("WARNING", logger="knowgap.judges"):
        assert find_card("toy", "toy_v1") is None
    assert str(path) in caplog.text
