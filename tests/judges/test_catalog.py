"""The judge catalogue (judges as objects, found by discovery: knowgap.suites.judge_registry), their validators under
one signature, and the commands 'knowgap judges' / 'knowgap judge validate'."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowgap.errors import InputError, KnowgapError
from knowgap.judges.abstain_reply_cards import abstain_reply_items
from knowgap.judges.cards import REPORTABLE_BALANCED_ACCURACY, ValidityCard, binary_card
from knowgap.judges.catalog import default_data_dir, judge_row, validate
from knowgap.judges.judge import Judge
from knowgap.judges.validation import stratified_sample, validate_abstention, validate_factuality_llm
from knowgap.suites.judge_registry import get_judge, judge_names, judge_rows, judges
from tests.helpers import knowgap_cli, scripted, write_jsonl

ANSWERED = "Gross earnings include basic pay and bonuses."
ABSTAINED = "The context does not specify the fee, so I cannot answer."


def policybench(folder: Path, rows: list[dict[str, Any]]) -> Path:
    """A data folder laid out like shared/data with ``rows`` as the PolicyBench dev responses."""
    full = [{"question": f"q{i}?", "expected_answer": "The fee is $5.", "question_id": f"Q{i}", **r}
            for i, r in enumerate(rows)]
    write_jsonl(folder / "policybench" / "responses_dev.jsonl", full)
    return folder


def small_set(folder: Path) -> Path:
    """6 answers (2 labelled abstentions, one of which the detector misses) and 2 abstentions."""
    rows = [{"response": ANSWERED, "abstention": "no", "factuality": "tier_1"},
            {"response": ANSWERED, "abstention": "no", "factuality": "tier_3"},
            {"response": ANSWERED, "abstention": "yes", "factuality": "NA"},
            {"response": ABSTAINED, "abstention": "yes", "factuality": "NA"},
            {"response": ABSTAINED, "abstention": "yes", "factuality": "NA"},
            {"response": ANSWERED, "abstention": "no", "factuality": "tier_2"},
            {"response": ANSWERED, "abstention": "no", "factuality": "tier_3"}]
    return policybench(folder, rows)


def test_every_judge_has_a_current_version_and_a_validator() -> None:
    found = judges()
    for judge in found:
        assert judge.version(), judge.name
        assert callable(judge.validator) and getattr(judge.validator, "__name__", "").startswith("validate_"), \
            judge.name
    assert len({j.name for j in found}) == len(found) == len(judge_names())
    assert get_judge("abstention-llm").version() == "abstention_v1"  # from judges/data/abstention.yaml


def test_unknown_judge_suggests_the_closest_names() -> None:
    with pytest.raises(KnowgapError, match="unknown judge 'abstension'; did you mean abstention"):
        get_judge("abstension")


def _judge(name: str, validator: object, kind: str = "offline", needs_data: bool = True) -> Judge:
    return Judge(name=name, kind=kind, decides="x", current="v", positive="x", labelled_set="x",  # type: ignore[arg-type]
                 validator=validator, needs_data=needs_data)  # type: ignore[arg-type]


def test_a_validator_that_returns_no_card_is_one_clear_line(tmp_path: Path) -> None:
    def validate_nothing(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                         progress: Any = None) -> Any:
        return {"n": 1}

    with pytest.raises(KnowgapError, match="^the validator of judge 'half' returned dict, not a ValidityCard"):
        validate(_judge("half", validate_nothing), data_dir=tmp_path)


def _card(name: str, *args: Any, **kwargs: Any) -> ValidityCard:
    return binary_card(name, "v", [True, False], [True, False], positive="p", dataset=json.dumps(
        [str(a) for a in args] + [f"{k}={v}" for k, v in sorted(kwargs.items())]), dataset_sha256="0")


def fake_validator(data_dir: Path | None, limit: int | None = None, judge_model: str | None = None,
                   progress: Any = None) -> ValidityCard:
    return _card("standard", data_dir.name if data_dir else None, limit=limit, judge_model=judge_model)


def test_a_judge_whose_labels_ship_needs_no_data_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNOWGAP_DATA", "/nonexistent/knowgap-data")  # would be an error if it were looked up
    assert json.loads(validate(_judge("fs", fake_validator, needs_data=False), limit=5).dataset) == [
        "None", "judge_model=None", "limit=5"]
    assert get_judge("element-coverage").needs_data is False


def test_every_validator_is_called_with_one_signature(tmp_path: Path) -> None:
    data = tmp_path / "mydata"
    data.mkdir()
    offline, model = _judge("fd", fake_validator), _judge("fr", fake_validator, kind="model", needs_data=False)
    assert json.loads(validate(offline, data_dir=data, limit=7).dataset) == ["mydata", "judge_model=None", "limit=7"]
    assert json.loads(validate(model, judge_model="local:x", limit=3).dataset) == [
        "None", "judge_model=local:x", "limit=3"]
    with pytest.raises(KnowgapError, match="offline: --judge-model does not apply"):
        validate(offline, data_dir=data, judge_model="local:x")


def test_data_dir_from_the_environment_or_the_nearest_shared_data(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    monkeypatch.delenv("KNOWGAP_DATA", raising=False)
    (tmp_path / "shared" / "data").mkdir(parents=True)
    deep = tmp_path / "main" / "src"
    deep.mkdir(parents=True)
    assert default_data_dir(deep) == tmp_path / "shared" / "data"
    lonely = tmp_path.parent / f"{tmp_path.name}-nothing"
    lonely.mkdir()
    if not any((p / "shared" / "data").is_dir() for p in lonely.parents):
        with pytest.raises(KnowgapError, match="no labelled data folder: give --data DIR or set KNOWGAP_DATA"):
            default_data_dir(lonely)
    monkeypatch.setenv("KNOWGAP_DATA", str(deep))
    assert default_data_dir(lonely) == deep
    monkeypatch.setenv("KNOWGAP_DATA", str(tmp_path / "absent"))
    with pytest.raises(KnowgapError, match="KNOWGAP_DATA=.*absent: not a folder"):
        default_data_dir()


def test_stratified_sample_is_seeded_balanced_and_nested() -> None:
    labels = [True] * 10 + [False] * 90
    rows = list(range(100))
    twenty = stratified_sample(rows, labels, 20)
    assert sum(labels[i] for i in twenty) == 10 and len(twenty) == 20
    assert stratified_sample(rows, labels, 20) == twenty  # seeded
    assert stratified_sample(rows, labels, 10) == twenty[:10]  # a smaller limit: the first rows of a larger one
    thirty = stratified_sample(rows, labels, 30)  # the small class gives its rest to the large one
    assert sum(labels[i] for i in thirty) == 10 and len(thirty) == 30
    assert stratified_sample(rows, labels, None) == rows
    with pytest.raises(KnowgapError, match="at least 1"):
        stratified_sample(rows, labels, 0)


def test_abstention_validator_counts_each_disagreement(tmp_path: Path) -> None:
    card = validate_abstention(small_set(tmp_path))
    assert card.judge == "abstention" and card.n == 7
    assert card.confusion is not None
    assert (card.confusion.tp, card.confusion.fn, card.confusion.fp, card.confusion.tn) == (2, 1, 0, 4)
    assert card.balanced_accuracy is not None and card.balanced_accuracy.value == pytest.approx((2 / 3 + 1) / 2)
    assert len(card.dataset_sha256) == 64 and card.method.startswith("all rows")
    limited = validate_abstention(tmp_path, limit=4)
    assert limited.n == 4 and limited.confusion is not None and limited.confusion.tp + limited.confusion.fn == 2


def test_a_bad_label_names_file_line_and_field(tmp_path: Path) -> None:
    policybench(tmp_path, [{"response": ANSWERED, "abstention": "maybe", "factuality": "NA"}])
    with pytest.raises(InputError, match=r"responses_dev.jsonl, line 1, field 'abstention': label 'maybe'"):
        validate_abstention(tmp_path)
    with pytest.raises(KnowgapError, match="labelled set not found: .*nowhere"):
        validate_abstention(tmp_path / "nowhere")


def test_factuality_llm_counts_parse_failures_as_wrong(tmp_path: Path) -> None:
    small_set(tmp_path)
    # the 4 answered rows in file order: tier_1, tier_3, tier_2, tier_3 (acceptable, not, acceptable, not)
    judge = scripted(tmp_path, '{"outcome": "tier_2"}', '{"outcome": "tier_3"}', "I cannot tell",
                     '{"outcome": "tier_1"}')
    seen: list[tuple[int, int]] = []
    card = validate_factuality_llm(tmp_path, judge_model=judge, progress=lambda d, t: seen.append((d, t)))
    assert card.judge == "factuality-llm" and card.version == "factuality_v1" and card.judge_model == judge
    assert card.n == 4 and card.parse_failures == 1
    assert card.confusion is not None
    assert (card.confusion.tp, card.confusion.fn, card.confusion.fp, card.confusion.tn) == (1, 1, 1, 1)
    assert card.extra["exact_tier_agreement"] == 0.25
    assert seen[-1] == (4, 4)


def test_cli_validate_saves_a_measured_card_that_judges_lists(tmp_path: Path, kg_home: Path) -> None:
    data = small_set(tmp_path / "data")
    out = tmp_path / "card.json"
    proc = knowgap_cli("judge", "validate", "abstention", "--data", str(data), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert f"n=7: balanced accuracy {(2 / 3 + 1) / 2:.2f}" in proc.stdout
    saved = list((kg_home / "judge_cards").glob("abstention@*.json"))
    assert len(saved) == 1 and ValidityCard.model_validate_json(out.read_text()).n == 7
    listed = knowgap_cli("judges", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in map(json.loads, listed.stdout.splitlines())}
    assert list(rows) == judge_names()
    mine = rows["abstention"]["assessments"][0]
    assert mine["card"]["n"] == 7  # the card measured here comes before the shipped one
    # its balanced accuracy clears the bar, but a card measured on a folder of answers does not say who wrote them
    assert (2 / 3 + 1) / 2 >= REPORTABLE_BALANCED_ACCURACY and mine["card"]["replies"] is None
    assert mine["status"] == "screen" and "does not say which replies" in mine["reason"]


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    for args, message in ((("abstension",), "did you mean abstention"),
                          (("abstention", "--data", str(tmp_path)), "labelled set not found"),
                          (("abstention", "--labels", str(tmp_path / "l.jsonl"), "--limit", "3"),
                           "--labels measures on your own labels"),
                          (("abstention", "--labels", str(tmp_path / "l.jsonl"), "--ship"),
                           "--ship do not apply"),
                          (("abstention", "--labels", str(tmp_path / "l.jsonl")), "l.jsonl: no such labels file"),
                          (("abstention", "--field", "abstained"), "--field names the labelled field of --labels")):
        proc = knowgap_cli("judge", "validate", *args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_a_judge_without_a_card_is_a_screen() -> None:
    (only,) = judge_row(_judge("unmeasured", fake_validator), []).assessments
    rows = {r.name: r for r in judge_rows()}
    assert only.status == "screen" and only.card is None and "no validity card" in only.reason
    shipped = rows["abstention"].assessments[0]  # its shipped card: every labelled real answer of the two models
    assert shipped.card is not None and shipped.card.n == len(abstain_reply_items()[0]) and shipped.reason


def test_the_listing_shows_a_cards_other_measures() -> None:
    """``knowgap judges`` prints a card's ``extra`` (element-coverage's precision, the bound on element recall)."""
    from knowgap.judges.card_lines import assessment_lines
    from knowgap.judges.cards import Estimate, ValidityCard, assess, fmt

    precision = Estimate(value=0.85, ci_low=0.71, ci_high=0.93)
    card = ValidityCard(judge="j", version="v", positive="p", dataset="d", dataset_sha256="0", n=82,
                        extra={"precision_held_out": precision, "precision_held_out_n": 40.0, "note": "x"})
    lines = assessment_lines(assess(card))
    assert f"    also: precision_held_out {fmt(precision)}, precision_held_out_n 40, note x" in lines
    assert len(assessment_lines(assess(card.model_copy(update={"extra": {}})))) == len(lines) - 1
