"""The extract-claims card on real summaries (issue 37, the card rule): the judge runs on the labelled summaries of
judges/data/labelled/extract_summaries.jsonl as a run asks it (decompose, then verify each claim against the review),
on a sample stratified by language and label; a judge that finds every summary faithful gets balanced accuracy 0.5,
one that finds exactly the labelled unfaithful ones 1.0; the card counts both models and both languages and writes
each item's verdict; a bad labelled row is refused naming file, line and field; --data still measures the earlier
constructed set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.judges.cards import binary_card, binary_measures, confusion_of, measured_dir, sha256_files, shipped_cards
from knowgap.judges.extract_summary_cards import SummaryLabel
from knowgap.suites.extract import claims_card
from tests.helpers import REPO, knowgap_cli

JUDGE = '''
import json

UNFAITHFUL = set(json.loads({unfaithful!r}))


def reply(request):
    system = request.messages[0].content
    user = request.messages[-1].content
    if system.startswith("Break the SUMMARY"):  # decompose: the whole summary is one claim
        return json.dumps({{"claims": [user.split("SUMMARY:\\n", 1)[1]]}})
    claim = user.split("CLAIMS:\\n1. ", 1)[1]
    verdict = "not_supported" if claim in UNFAITHFUL else "supported"
    return json.dumps({{"verdicts": [{{"claim": 1, "verdict": verdict}}]}})
'''


def _judge(tmp_path: Path, unfaithful: list[str], name: str) -> str:
    """A python: judge that calls a summary unfaithful exactly when it is in ``unfaithful``."""
    path = tmp_path / f"{name}.py"
    path.write_text(JUDGE.format(unfaithful=json.dumps(unfaithful)), encoding="utf-8")
    return f"python:{path}:reply"


def _labelled() -> list[SummaryLabel]:
    return claims_card.summary_labels()[0]


def test_the_shipped_set_holds_both_models_and_languages_each_labelled_with_a_reason() -> None:
    items = _labelled()
    assert {(it.model, it.lang) for it in items} == {(m, lang) for m in ("local:qwen2.5-0.5b", "local:qwen2.5-1.5b")
                                                     for lang in ("zh", "en")}
    assert all(it.reason.strip() for it in items)
    for lang in ("zh", "en"):
        assert {it.unfaithful for it in items if it.lang == lang} == {True, False}


def test_a_judge_that_finds_every_summary_faithful_gets_one_half_per_language_and_model(tmp_path: Path) -> None:
    card, verdicts = claims_card.measure_claims_real(16, _judge(tmp_path, [], "never"))
    assert card.n == 16 and card.parse_failures == 0 and len(verdicts) == 16
    assert card.confusion is not None and (card.confusion.tp, card.confusion.fp) == (0, 0)
    assert card.balanced_accuracy.value == pytest.approx(0.5)
    assert card.languages is not None and set(card.languages) == {"zh", "en"}
    for lang in ("zh", "en"):  # stratified per language: both classes in each, so each has a figure of 0.5
        figure = card.languages[lang].figure
        assert card.languages[lang].n == 8 and figure is not None and figure.value == pytest.approx(0.5)
    assert card.replies is not None and card.replies.kind == "real" and set(card.replies.models) == {
        "local:qwen2.5-0.5b", "local:qwen2.5-1.5b"}
    assert card.labelling is not None and card.labelling.before_judge is True
    assert {"n_local:qwen2.5-0.5b_zh", "n_local:qwen2.5-1.5b", "balanced_accuracy_local:qwen2.5-0.5b"} <= set(
        card.extra)
    assert sum(v for k, v in card.extra.items() if k.startswith("outcome_") and isinstance(v, float)) == 16.0
    assert card.model_only is not None and card.model_only.value == pytest.approx(0.5)
    assert all(v.verdict is False and v.model_only_verdict is False for v in verdicts)
    assert all(v.score == 1.0 for v in verdicts if v.outcome == "scored")


def test_a_judge_that_finds_exactly_the_labelled_unfaithful_summaries_gets_one(tmp_path: Path) -> None:
    """The model alone is right on every item (model-only 1.0); as the judge runs, the rule before the model calls a
    short summary holding an abstention phrase ('cannot provide even adequate service') a refusal it never checks,
    so the unfaithful summaries it screens out are missed (combined below 1): both figures are on the card."""
    unfaithful = [it.summary for it in _labelled() if it.unfaithful]
    card, verdicts = claims_card.measure_claims_real(None, _judge(tmp_path, unfaithful, "knows"))
    assert card.n == len(_labelled())
    assert card.model_only is not None and card.model_only.value == pytest.approx(1.0)
    for lang in ("zh", "en"):
        figure = card.extra[f"balanced_accuracy_model_only_{lang}"]
        assert not isinstance(figure, (float, str)) and figure.value == pytest.approx(1.0)
    assert [v.model_only_verdict for v in verdicts] == [v.unfaithful for v in verdicts]
    screened = [v for v in verdicts if v.outcome == "refusal"]
    assert screened and card.extra["refusal_screened"] == float(len(screened))
    missed = sum(v.unfaithful for v in screened)
    assert missed and card.confusion is not None and card.confusion.fn == missed and card.confusion.fp == 0
    assert card.combined == card.balanced_accuracy and card.combined.value is not None
    assert card.combined.value < 1.0
    assert all(v.score == (0.0 if v.unfaithful else 1.0) for v in verdicts if v.outcome == "scored")


def test_the_catalogue_validator_writes_each_verdict_beside_the_card(tmp_path: Path) -> None:
    card = claims_card.validate_extract_claims_real(None, 6, _judge(tmp_path, [], "never"))
    rows = [json.loads(line) for line in
            (measured_dir() / f"{card.key}.items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert card.n == 6 and len(rows) == 6 and {r["verdict"] for r in rows} == {False}
    assert all(r["id"] in {it.id for it in _labelled()} for r in rows)


def test_with_a_data_folder_the_earlier_constructed_set_is_measured(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="summedits"):
        claims_card.validate_extract_claims_real(tmp_path, 4, "never-called:m", None)


def test_a_bad_labelled_row_is_named_by_file_line_and_field(tmp_path: Path) -> None:
    good = claims_card.summary_labels()[1].read_text(encoding="utf-8").splitlines()[0]
    row = json.loads(good)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good + "\n" + json.dumps({**row, "id": "x/y/1", "lang": "fr"}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.jsonl.*line 2.*lang"):
        claims_card.summary_labels(bad)
    no_reason = tmp_path / "no_reason.jsonl"
    no_reason.write_text(json.dumps({k: v for k, v in row.items() if k != "reason"}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"no_reason\.jsonl.*line 1.*reason"):
        claims_card.summary_labels(no_reason)
    twice = tmp_path / "twice.jsonl"
    twice.write_text(good + "\n" + good + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"twice\.jsonl.*line 2.*'id'.*labelled twice"):
        claims_card.summary_labels(twice)


@pytest.mark.slow
def test_the_command_measures_the_real_set_and_writes_the_card(tmp_path: Path) -> None:
    out = tmp_path / "card.json"
    done = knowgap_cli("judge", "validate", "extract-claims", "--judge-model", _judge(tmp_path, [], "never"),
                       "--limit", "4", "--out", str(out), env={"KNOWGAP_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr
    card = json.loads(out.read_text(encoding="utf-8"))
    assert card["dataset"] == "extract_summaries.jsonl" and card["n"] == 4
    assert card["replies"]["kind"] == "real"


def test_the_shipped_card_is_reproduced_from_its_recorded_verdicts() -> None:
    """The per-summary verdicts of the measurement with local:qwen2.5-1.5b (the items file it wrote) give the shipped
    card's confusion, language figures and model-only figure, on items of the labelled set with their labels."""
    shipped = next(c for c in shipped_cards() if c.judge == "extract-claims")
    path = REPO / "tests" / "fixtures" / "extract_claims_real" / "items.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    labelled = {it.id: it for it in _labelled()}
    assert all(labelled[r["id"]].unfaithful == r["unfaithful"] and labelled[r["id"]].lang == r["lang"] for r in rows)
    assert shipped.dataset == "extract_summaries.jsonl" and shipped.n == len(rows) == 40
    verdicts, labels = [r["verdict"] for r in rows], [r["unfaithful"] for r in rows]
    again = binary_card("extract-claims", shipped.version, verdicts, labels, positive=shipped.positive,
                        dataset=shipped.dataset, dataset_sha256=shipped.dataset_sha256,
                        item_languages=[r["lang"] for r in rows])
    assert again.confusion == shipped.confusion and again.languages == shipped.languages
    model_only = binary_measures(confusion_of([r["model_only_verdict"] for r in rows], labels)[0])
    assert shipped.model_only == model_only["balanced_accuracy"]
    assert shipped.dataset_sha256 == sha256_files([claims_card.summary_labels()[1]])
