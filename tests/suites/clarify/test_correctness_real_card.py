"""The clarify-correctness model judge's card on real final answers (issue 37, the card rule): the catalogue's
validator (``knowgap judge validate clarify-correctness``) runs the judge model on the final answers labelled for
clarify-correctness-approx (``clarify_final_answers.jsonl``, rule final-correct-1), per language and per model, and
writes each answer's verdict beside the card; a judge that always says 'correct' gets balanced accuracy 0.5, a judge
that knows the labels 1.0, and a bad labelled row is named by file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.judges.cards import ValidityCard, assess, measured_dir, shipped_cards
from knowgap.judges.catalog import validate
from knowgap.suites.clarify import correctness_card
from knowgap.suites.clarify.labelled_replies import ANSWERS_FILE
from knowgap.suites.judge_registry import get_judge
from tests.helpers import scripted, write_jsonl

ROWS = [json.loads(line) for line in ANSWERS_FILE.read_text(encoding="utf-8").splitlines()]


def _verdict(verdict: str) -> str:
    return json.dumps({"verdict": verdict, "reason": "r"})


def test_an_always_correct_judge_has_balanced_accuracy_one_half_in_each_language_and_model(tmp_path: Path) -> None:
    """Through the catalogue, as `knowgap judge validate clarify-correctness` runs it: all 34 labelled answers (en 9,
    zh 25) of both models, 0.5 overall, in each language and for each model; the card names the approximation's rule
    and the per-answer verdicts land in KNOWGAP_HOME/judge_cards/KEY.items.jsonl."""
    card = validate(get_judge("clarify-correctness"), judge_model=scripted(tmp_path, _verdict("correct")))
    assert card.n == len(ROWS) == 34 and card.parse_failures == 0
    assert card.balanced_accuracy is not None and card.balanced_accuracy.value == pytest.approx(0.5)
    assert card.sensitivity is not None and card.sensitivity.value == 1.0
    assert card.languages is not None
    assert {lang: (f.n, f.positives) for lang, f in card.languages.items()} == {"en": (9, 4), "zh": (25, 8)}
    assert all(f.figure is not None and f.figure.value == pytest.approx(0.5) for f in card.languages.values())
    assert card.replies is not None and card.replies.kind == "real"
    assert card.replies.models == {"local:qwen2.5-0.5b": 20, "local:qwen2.5-1.5b": 14}
    for group in ("local:qwen2.5-0.5b", "local:qwen2.5-1.5b", "en", "zh", "local:qwen2.5-1.5b_zh"):
        assert card.extra[f"balanced_accuracy_{group}"].value == pytest.approx(0.5)  # type: ignore[union-attr]
    assert card.extra["verdict_correct"] == 34.0
    assert card.labelling is not None and "final-correct-1" in card.labelling.rule and card.labelling.before_judge
    assert card.claim is not None and card.claim.startswith("clarify.control_correctness,")
    assert card.dataset.endswith("clarify_final_answers.jsonl") and "clarify-correctness-approx" in card.method
    assert assess(card).status == "screen"
    rows = [json.loads(line) for line in
            (measured_dir() / f"{card.key}.items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [r["id"] for r in ROWS] and {r["verdict"] for r in rows} == {"correct"}


def _oracle(tmp_path: Path, rows: list[dict[str, object]]) -> str:
    """A python: judge model that says 'correct' exactly for the answers labelled correct, 'partially_correct' for
    the others, and an unparsable reply for one of them."""
    path = tmp_path / "oracle_judge.py"
    right = [r["reply"] for r in rows if r["correct"]]
    wrong = [r["reply"] for r in rows if not r["correct"]]
    path.write_text(
        "RIGHT = " + json.dumps(right, ensure_ascii=False) + "\n"
        "GARBLED = " + json.dumps(wrong[0], ensure_ascii=False) + "\n"
        "def judge(request):\n"
        "    prompt = request.messages[-1].content\n"
        "    answer = prompt.split('FINAL ANSWER TO GRADE:\\n', 1)[1]\n"
        "    if answer.startswith(GARBLED):\n"
        "        return 'I think it is right.'\n"
        "    hit = any(answer.startswith(reply) for reply in RIGHT)\n"
        "    return '{\"verdict\": \"%s\", \"reason\": \"r\"}' % ('correct' if hit else 'partially_correct')\n",
        encoding="utf-8")
    return f"python:{path}:judge"


def test_a_judge_that_knows_the_labels_scores_one_and_partially_correct_is_not_correct(tmp_path: Path) -> None:
    """The judge is shown each answer (the oracle finds it in the prompt); 'partially_correct' counts as not correct,
    as final_correct does, and an unparsed reply is counted wrong and recorded as no verdict."""
    rows = [r for r in ROWS if r["lang"] == "en"][:4] + [r for r in ROWS if r["lang"] == "zh"][:4]
    path = write_jsonl(tmp_path / "answers.jsonl", rows)
    card, verdicts = correctness_card.measure_clarify_correctness(None, _oracle(tmp_path, rows), path=path)
    assert [v.id for v in verdicts] == [r["id"] for r in rows]
    assert card.parse_failures == 1 and card.extra["verdict_unparsed"] == 1.0
    assert [v.verdict for v in verdicts if v.verdict is not None] == [
        "correct" if v.correct else "partially_correct" for v in verdicts if v.verdict is not None]
    assert card.confusion is not None and card.confusion.fp == 1  # the unparsed one, counted wrong
    assert card.confusion.tp == sum(bool(r["correct"]) for r in rows)
    assert card.extra["verdict_partially_correct"] == float(sum(not r["correct"] for r in rows) - 1)


def test_a_limit_samples_by_language_and_label(tmp_path: Path) -> None:
    card, verdicts = correctness_card.measure_clarify_correctness(8, scripted(tmp_path, _verdict("incorrect")))
    assert card.n == 8 and card.languages is not None and set(card.languages) == {"en", "zh"}
    assert {(v.lang, v.correct) for v in verdicts} == {("en", True), ("en", False), ("zh", True), ("zh", False)}
    assert card.balanced_accuracy is not None and card.balanced_accuracy.value == pytest.approx(0.5)


def test_a_bad_labelled_row_is_named_by_file_line_and_field(tmp_path: Path) -> None:
    """Before any model call: an answer to a deficient case, or a label that is not a boolean."""
    spec = scripted(tmp_path, _verdict("correct"))
    deficient = write_jsonl(tmp_path / "deficient.jsonl", [ROWS[0], {**ROWS[1], "case_id": "zh-contract-001"}])
    with pytest.raises(InputError, match=r"deficient\.jsonl, line 2, field 'case_id'.*not a complete clarify case"):
        correctness_card.measure_clarify_correctness(None, spec, path=deficient)
    maybe = write_jsonl(tmp_path / "maybe.jsonl", [ROWS[0], ROWS[1], {**ROWS[2], "correct": "maybe"}])
    with pytest.raises(InputError, match=r"maybe\.jsonl, line 3, field 'correct'"):
        correctness_card.measure_clarify_correctness(None, spec, path=maybe)
    assert not list(tmp_path.glob("*.items.jsonl")) and not measured_dir().exists()


def test_the_shipped_card_is_measured_on_the_approximations_labelled_set() -> None:
    """The shipped card of the 1.5B judge: the same 34 labelled answers (same file and sha256, same rule) as the
    clarify-correctness-approx card, both models, both languages; a screen (0.61, and fewer than 10 correct answers
    in each language); the constructed issue kept as superseded."""
    from knowgap.judges.cards import REISSUED, SUPERSEDED_DIR, find_card

    card = find_card("clarify-correctness", "clarify-correctness-v1", "local:qwen2.5-1.5b")
    approx = next(c for c in shipped_cards() if c.judge == "clarify-correctness-approx")
    assert card is not None and (card.dataset, card.dataset_sha256) == (approx.dataset, approx.dataset_sha256)
    assert card.labelling == approx.labelling and card.n == approx.n == 34
    assert card.replies is not None and card.replies.models == approx.replies.models  # type: ignore[union-attr]
    assert card.languages is not None and {k: (f.n, f.positives) for k, f in card.languages.items()} == {
        "en": (9, 4), "zh": (25, 8)}
    assert card.balanced_accuracy is not None and card.balanced_accuracy.value == pytest.approx(0.61, abs=0.01)
    a = assess(card, languages=["zh"])
    assert a.status == "screen"
    old = SUPERSEDED_DIR / f"{card.key}{REISSUED}2026-12-05.json"
    earlier = ValidityCard.model_validate_json(old.read_text(encoding="utf-8"))
    assert earlier.replies is not None and earlier.replies.kind == "constructed" and earlier.n == 28
