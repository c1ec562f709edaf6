"""partial-rubric on real replies (issue 37, the card rule): the labelled set judges/data/labelled/
partial_rubric_real.jsonl (scored 1-5 on the rubric's criteria by rule rubric-1), the validator the catalogue runs
(scripted judge models through the real gateway), and the card's measures (knowgap.judges.rubric_validity's
real-reply section) on real Ratings."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.judges.cards import Estimate, assess
from knowgap.judges.geval import Ratings, ScaleScore
from knowgap.judges.rubric_validity import ScoredReply, ScoredResult, sample_scored, scored_card
from knowgap.suites.partial.prompts import RUBRIC_CRITERIA, RUBRIC_VERSION
from knowgap.suites.partial.rubric_card import REAL_FILE, real_rubric_replies, validate_partial_rubric
from tests.helpers import scripted


def test_the_labelled_set_holds_real_replies_of_two_models_in_both_languages() -> None:
    replies, path = real_rubric_replies()
    assert path.name == REAL_FILE and len(replies) == 77 and len({r.id for r in replies}) == 77
    assert Counter((r.model, r.lang) for r in replies) == {
        ("local:qwen2.5-0.5b", "en"): 17, ("local:qwen2.5-0.5b", "zh"): 20,
        ("local:qwen2.5-1.5b", "en"): 21, ("local:qwen2.5-1.5b", "zh"): 19}
    assert all(set(r.labels) == set(RUBRIC_CRITERIA) for r in replies)
    assert Counter((r.lang, r.adequate) for r in replies) == {("en", True): 8, ("en", False): 30,
                                                              ("zh", True): 13, ("zh", False): 26}


def test_the_judge_sample_is_stratified_by_language_and_label() -> None:
    replies, _ = real_rubric_replies()
    chosen = sample_scored(replies, 48)
    assert Counter((r.lang, r.adequate) for r in chosen) == {("en", True): 8, ("en", False): 16,
                                                             ("zh", True): 12, ("zh", False): 12}
    assert [r.id for r in chosen] == [r.id for r in sample_scored(replies, 48)]  # seeded
    assert sample_scored(replies, None) == replies


@pytest.mark.parametrize("digit", ["5", "1"])
def test_a_judge_that_gives_every_reply_one_rating_is_at_chance(digit: str, tmp_path: Path, kg_home: Path) -> None:
    """A judge model rating every criterion of every reply the same says the same of every reply on its own: its
    model-only balanced accuracy is 0.5; the card carries both figures, the languages and the models."""
    card = validate_partial_rubric(None, None, scripted(tmp_path, digit))
    assert card.judge == "partial-rubric" and card.version == RUBRIC_VERSION and card.n == 77
    assert card.model_only is not None and card.model_only.value == pytest.approx(0.5)
    assert card.combined == card.balanced_accuracy and card.combined is not None
    assert card.replies is not None and card.replies.kind == "real"
    assert card.replies.models == {"local:qwen2.5-0.5b": 37, "local:qwen2.5-1.5b": 40}
    assert card.languages is not None and {k: (v.n, v.positives) for k, v in card.languages.items()} == {
        "en": (38, 8), "zh": (39, 13)}
    assert card.labelling is not None and card.labelling.before_judge and "rubric-1" in card.labelling.rule
    assert {"balanced_accuracy_model_only_en", "balanced_accuracy_model_only_zh",
            "sensitivity_local:qwen2.5-0.5b", "specificity_local:qwen2.5-1.5b", "total_mae",
            "total_mae_model_only", "evidence_cited_within_1"} <= set(card.extra)
    assert assess(card).status == "screen"
    items = [json.loads(line) for line in
             (kg_home / "judge_cards" / f"{card.key}.items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(items) == 77 and all(it["model_total"] == float(digit) for it in items)
    anchored = [it for it in items if it["anchors"]]
    assert anchored and all(it["ratings"][c] == 1.0 for it in anchored for c in it["anchors"])
    if digit == "5":  # the suite's anchors (its offline checks) pull some of them down: that is the combined figure
        assert any(not it["adequate"] for it in anchored) and all(it["model_adequate"] for it in items)


def _scored(lang: str, model: str, labels: tuple[int, int, int], rated: tuple[float | None, ...],
            anchors: dict[str, str] | None = None) -> ScoredResult:
    names = list(RUBRIC_CRITERIA)
    reply = ScoredReply(f"{model}/{lang}/{labels}", model, lang, dict(zip(names, labels, strict=True)),
                        judge=None)  # type: ignore[arg-type]
    ratings = Ratings({n: None if v is None else ScaleScore(expected=v, sampled=round(v))
                       for n, v in zip(names, rated, strict=True)}, dict.fromkeys(names, 1.0))
    return ScoredResult(reply, ratings.anchored(anchors or {}))


def test_the_card_measures_agreement_at_the_midpoint_per_language_and_per_model() -> None:
    good, bad = (5, 4, 4), (1, 2, 2)
    results = ([_scored("en", "a", good, (4.6, 4.2, 4.0))] * 12 + [_scored("en", "b", bad, (1.4, 2.0, 2.2))] * 12
               + [_scored("zh", "a", good, (2.0, 2.0, 2.0))] * 10 + [_scored("zh", "b", bad, (4.0, 4.0, 4.0))] * 10
               + [_scored("zh", "b", bad, (None, 3.0, 3.0))])  # unreadable: a wrong verdict
    card = scored_card("partial-rubric", "v", results, judge_model="m", dataset="d", dataset_sha256="0" * 64,
                       seconds=45.0, method="m")
    assert card.languages is not None
    en, zh = card.languages["en"], card.languages["zh"]
    assert (en.n, en.positives, zh.n, zh.positives) == (24, 12, 21, 10)
    assert en.figure is not None and en.figure.value == pytest.approx(1.0)
    assert zh.figure is not None and zh.figure.value == pytest.approx(0.0)
    assert card.parse_failures == 1 and card.seconds_per_item == pytest.approx(1.0)
    assert card.model_only is None and card.combined is None  # no anchor applied: the model's ratings are the judge's
    assert card.extra["total_mae"] == pytest.approx((12 * 0.2 / 3 + 12 * 0.6 / 3 + 20 * 7 / 3) / 44)  # 44 rated
    mae = card.extra["evidence_cited_mae"]
    assert isinstance(mae, float) and mae == pytest.approx((12 * 0.4 + 12 * 0.4 + 10 * 3 + 10 * 3) / 44)
    within = card.extra["coherence_within_1"]
    assert isinstance(within, Estimate) and within.value == pytest.approx(25 / 45)  # the unreadable one's 3.0 too
    a = card.extra["sensitivity_a"]
    assert isinstance(a, Estimate) and a.value == pytest.approx(12 / 22)
    assert assess(card, languages=["en"]).status == "reportable"  # two writers, 12 of each class, 1.00
    assert assess(card, languages=["en", "zh"]).status == "screen"  # zh's own figure is 0.00


def test_anchors_make_the_combined_figure_and_the_model_only_one_is_kept() -> None:
    anchor = {"evidence_cited": "cites evidence it was not shown", "uncertainty_stated": "claims certainty"}
    results = ([_scored("en", "a", (1, 1, 2), (4.0, 4.0, 4.0), anchor)] * 10
               + [_scored("en", "b", (4, 4, 4), (4.0, 4.0, 4.0))] * 10)
    card = scored_card("partial-rubric", "v", results, judge_model="m", dataset="d", dataset_sha256="0" * 64,
                       seconds=None, method="m")
    assert card.combined is not None and card.combined.value == pytest.approx(1.0)
    assert card.model_only is not None and card.model_only.value == pytest.approx(0.5)
    assert card.extra["anchored_replies"] == 10.0
    assert card.extra["total_mae_model_only"] == pytest.approx((10 * (4 - 4 / 3) + 0) / 20)


def test_a_row_that_does_not_fit_its_case_is_named_by_file_line_and_field(tmp_path: Path) -> None:
    shipped = real_rubric_replies()[1].read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "scores.jsonl"
    row = json.loads(shipped[1])
    bad.write_text("\n".join([shipped[0], json.dumps({**row, "coherence": 6})]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        real_rubric_replies(bad)
    assert "scores.jsonl" in str(err.value) and "line 2" in str(err.value) and "coherence" in str(err.value)
    bad.write_text(json.dumps({**row, "task_id": "no_such_task"}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="no_such_task"):
        real_rubric_replies(bad)
