"""The clarify model judges' cards on real replies (issue 37, the card rule): clarify-rubric and clarify-silent-failure
read their labels joined to the real replies of clarify_replies.jsonl, run the judge model on a sample stratified by
language and label, and state what a card must (both models, each language, model-only and combined for the rubric);
a judge that always says yes gets balanced accuracy 0.5, and a bad label row is named by file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.judges.cards import assess, measured_dir
from knowgap.judges.labelled_sets import labelled_file
from knowgap.suites.clarify import rubric_card, silent_failure_card
from knowgap.suites.clarify.labelled_replies import rubric_labels, silent_failure_labels
from tests.helpers import scripted

REPLIES = {json.loads(line)["id"]: json.loads(line)
           for line in labelled_file("clarify_replies.jsonl").read_text(encoding="utf-8").splitlines()}
# two deficient replies per language, one of each model in zh; a complete case's reply
ZH_SMALL = "qwen2.5-0.5b/zh-contract-001/dd9da88b"
ZH_LARGE = "qwen2.5-1.5b/zh-tort-003/570afc4a"
EN_SMALL = "qwen2.5-0.5b/en-tort-001/adee6011"
EN_LARGE = "qwen2.5-1.5b/en-tort-001/e9e87f57"
COMPLETE = "qwen2.5-1.5b/zh-contract-102/c984026c"


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _replies(tmp_path: Path, ids: list[str]) -> Path:
    return _write(tmp_path / "replies.jsonl", [REPLIES[i] for i in ids])


def _rubric(reply_id: str, a: int, b: int, c: int, d: int) -> dict[str, object]:
    return {"id": reply_id, "gap_identification": a, "question_quality": b, "conditional_caution": c,
            "risk_control": d, "reason": "r"}


def test_the_labelled_total_is_the_rubrics_weighted_total(tmp_path: Path) -> None:
    """A reply rated A1 B1 C5 D5 has the weighted total 2.6 (not adequate), where a plain mean would give 3.0: the
    annotator's total is the one the judge's rubric_total is compared with."""
    replies = _replies(tmp_path, [ZH_SMALL])
    labels = _write(tmp_path / "labels.jsonl", [_rubric(ZH_SMALL, 1, 1, 5, 5)])
    scored, files = rubric_card.scored_replies(labels, replies)
    assert [f.name for f in files[:2]] == ["replies.jsonl", "labels.jsonl"] and files[2].name == "cases.jsonl"
    assert scored[0].label_total == pytest.approx(2.6) and scored[0].adequate is False


def test_a_rubric_label_naming_no_reply_or_a_complete_case_is_named_by_file_line_and_field(tmp_path: Path) -> None:
    replies = _replies(tmp_path, [ZH_SMALL, COMPLETE])
    unknown = _write(tmp_path / "unknown.jsonl", [_rubric(ZH_SMALL, 1, 1, 3, 3), _rubric("nobody/x/0", 1, 1, 1, 1)])
    with pytest.raises(InputError, match=r"unknown\.jsonl, line 2, field 'id': record nobody/x/0: no reply"):
        rubric_labels(unknown, replies)
    complete = _write(tmp_path / "complete.jsonl", [_rubric(COMPLETE, 1, 1, 3, 3)])
    with pytest.raises(InputError, match=r"line 1, field 'id'.*complete case"):
        rubric_labels(complete, replies)
    twice = _write(tmp_path / "twice.jsonl", [{"id": ZH_SMALL, "silent_failure": True, "reason": "r"}] * 2)
    with pytest.raises(InputError, match=r"line 2, field 'id'.*labelled twice"):
        silent_failure_labels(twice, replies)


def test_the_rubric_card_reports_model_only_and_combined_per_language(tmp_path: Path) -> None:
    """A judge model that rates every dimension 5 calls every reply adequate: on its own ratings (model-only) its
    balanced accuracy in zh (one adequate reply, one not) is 0.5; as the judge runs, the offline anchors (A, B = 1
    when the reply asks nothing) pull the replies that ask nothing below 3.0, so the combined figure differs. The
    card counts both models and both languages, and en (one class) has no figure."""
    replies = _replies(tmp_path, [ZH_SMALL, ZH_LARGE, EN_SMALL, EN_LARGE])
    labels = _write(tmp_path / "labels.jsonl", [
        _rubric(ZH_SMALL, 1, 1, 1, 2), _rubric(ZH_LARGE, 4, 3, 3, 4),  # 1.15 and 3.5: one adequate zh reply
        _rubric(EN_SMALL, 1, 1, 1, 1), _rubric(EN_LARGE, 1, 1, 1, 3)])
    card, verdicts = rubric_card.measure_clarify_rubric(None, scripted(tmp_path, "5"), labels_path=labels,
                                                        replies_path=replies)
    assert card.judge == "clarify-rubric" and card.n == 4 and len(verdicts) == 4
    assert card.replies is not None and card.replies.kind == "real"
    assert card.replies.models == {"local:qwen2.5-0.5b": 2, "local:qwen2.5-1.5b": 2}
    assert card.languages is not None and card.languages["zh"].positives == 1 and card.languages["en"].n == 2
    en = card.languages["en"].figure
    assert en is not None and en.value is None  # no adequate en reply: no balanced accuracy
    assert card.extra["balanced_accuracy_model_only_zh"].value == pytest.approx(0.5)  # type: ignore[union-attr]
    assert card.model_only is not None and card.model_only.value == pytest.approx(0.5)
    assert card.combined is not None and card.combined == card.balanced_accuracy
    assert all(v.model_total == pytest.approx(5.0) for v in verdicts)
    anchored = [v for v in verdicts if v.anchors]
    assert anchored and all(v.total is not None and v.total < 3.0 for v in anchored)
    assert card.extra["anchored_replies"] == float(len(anchored))
    assert card.extra["question_quality_exact_model_only"].value == 0.0  # type: ignore[union-attr]
    assert card.labelling is not None and "rubric-real-1" in card.labelling.rule and card.labelling.before_judge
    assert card.claim is not None and card.claim.startswith("clarify.rubric_*")
    assert assess(card, languages=["zh"]).status == "screen"  # one adequate reply is too thin to report


def test_the_rubric_validator_writes_each_judged_replys_verdict(tmp_path: Path) -> None:
    """The catalogue's validator measures the shipped set (a limit: a sample stratified by language and label) and
    writes the per-reply verdicts beside the cards measured here."""
    card = rubric_card.validate_clarify_rubric(None, 6, scripted(tmp_path, "2"))
    assert card.n == 6 and card.languages is not None and set(card.languages) == {"en", "zh"}
    items = measured_dir() / f"{card.key}.items.jsonl"
    rows = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 6 and all(r["id"] in REPLIES for r in rows)
    assert {r["lang"] for r in rows} == {"en", "zh"} and all(r["model_total"] == pytest.approx(2.0) for r in rows)


SILENT = [(ZH_SMALL, False), (ZH_LARGE, False), (COMPLETE, True), (EN_SMALL, True), (EN_LARGE, False)]


def _silent_labels(tmp_path: Path) -> tuple[Path, Path]:
    replies = _replies(tmp_path, [i for i, _ in SILENT])
    labels = _write(tmp_path / "sf.jsonl", [{"id": i, "silent_failure": s, "reason": "r"} for i, s in SILENT])
    return labels, replies


def _judge_file(tmp_path: Path) -> str:
    """A python: judge model that says 'dodges' exactly for the replies labelled silent failures."""
    dodging = [REPLIES[i]["reply"] for i, s in SILENT if s]
    path = tmp_path / "oracle_judge.py"
    path.write_text(
        "DODGING = " + json.dumps(dodging, ensure_ascii=False) + "\n"
        "def judge(request):\n"
        "    prompt = request.messages[-1].content\n"
        "    hit = any(reply in prompt for reply in DODGING)\n"
        "    return '{\"outcome\": \"%s\"}' % ('dodges' if hit else 'addresses')\n", encoding="utf-8")
    return f"python:{path}:judge"


def test_the_silent_failure_card_measures_the_judge_per_language_and_model(tmp_path: Path) -> None:
    labels, replies = _silent_labels(tmp_path)
    always, _ = silent_failure_card.measure_silent_failure(
        None, scripted(tmp_path, '{"outcome": "dodges"}'), labels_path=labels, replies_path=replies)
    assert always.balanced_accuracy is not None and always.balanced_accuracy.value == pytest.approx(0.5)
    assert always.languages is not None and {lang: f.n for lang, f in always.languages.items()} == {"en": 2, "zh": 3}
    assert all(f.figure is not None and f.figure.value == pytest.approx(0.5) for f in always.languages.values())
    oracle, verdicts = silent_failure_card.measure_silent_failure(
        None, _judge_file(tmp_path), labels_path=labels, replies_path=replies)
    assert oracle.balanced_accuracy is not None and oracle.balanced_accuracy.value == pytest.approx(1.0)
    assert [v.dodges for v in verdicts] == [v.silent_failure for v in verdicts]
    assert oracle.replies is not None and oracle.replies.models == {"local:qwen2.5-0.5b": 2, "local:qwen2.5-1.5b": 3}
    assert oracle.extra["n_kind_complete"] == 1.0 and "specificity_local:qwen2.5-1.5b" in oracle.extra
    assert oracle.labelling is not None and "silent-failure-1" in oracle.labelling.rule
    unreadable, verdicts = silent_failure_card.measure_silent_failure(
        None, scripted(tmp_path, "no verdict here"), labels_path=labels, replies_path=replies)
    assert unreadable.parse_failures == 5 and all(v.dodges is None for v in verdicts)
    assert unreadable.agreement is not None and unreadable.agreement.value == 0.0  # counted wrong, never dropped


def test_the_silent_failure_validator_samples_by_language_and_label_and_writes_verdicts(tmp_path: Path) -> None:
    card = silent_failure_card.validate_silent_failure(None, 8, scripted(tmp_path, '{"outcome": "addresses"}'))
    assert card.n == 8 and card.confusion is not None
    assert card.languages is not None and all(f.positives == 2 and f.n == 4 for f in card.languages.values())
    rows = [json.loads(line) for line in
            (measured_dir() / f"{card.key}.items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 8 and sum(r["silent_failure"] for r in rows) == 4 and not any(r["dodges"] for r in rows)


def test_the_shipped_cards_of_the_default_judge_model_are_measured_on_real_replies() -> None:
    """Both cards of local:qwen2.5-1.5b (the suite's default judge model) rest on real replies of two models in
    both languages, labelled before the judge ran; both are screens (the silent-failure judge called every reply a
    dodge: specificity 0 of 21)."""
    from knowgap.judges.cards import find_card
    from knowgap.suites.clarify.judging import silent_failure_spec
    from knowgap.suites.clarify.prompts import RUBRIC_VERSION

    rubric = find_card("clarify-rubric", RUBRIC_VERSION, "local:qwen2.5-1.5b")
    silent = find_card("clarify-silent-failure", silent_failure_spec().version, "local:qwen2.5-1.5b")
    for card in (rubric, silent):
        assert card is not None and card.replies is not None and card.replies.kind == "real"
        assert len(card.replies.models) == 2 and card.languages is not None and set(card.languages) == {"en", "zh"}
        assert card.labelling is not None and card.labelling.before_judge and assess(card).status == "screen"
    assert rubric is not None and rubric.model_only is not None and rubric.combined is not None
    assert silent is not None and silent.confusion is not None
    assert (silent.confusion.tp, silent.confusion.fn, silent.confusion.fp, silent.confusion.tn) == (19, 0, 21, 0)
