"""The validators of the offline detectors (the judges package's and the suites', each beside its judge): each runs
on its real labelled set (or a tiny real input with a fake judge model) and produces a card with the right counts;
the offline detectors are re-measured on their whole labelled sets and must not fall below their shipped cards."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.judges import detector_validation as dv
from knowgap.judges import labelled_sets
from knowgap.judges.cards import SHIPPED_DIR, ValidityCard, card_key
from knowgap.judges.labelled_sets import stratified
from knowgap.models import registry as model_registry
from knowgap.models.registry import register_provider
from knowgap.models.types import ChatRequest, ChatResponse
from knowgap.suites.abstain import answer_overlap_card
from knowgap.suites.clarify import correctness_card
from knowgap.suites.clarify.labelled_replies import final_answers
from knowgap.suites.extract import claims_card, coverage_card
from knowgap.suites.partial import gap_card, leak_card
from knowgap.suites.starter import answer_match_card
from tests.fakes.models import Fixed, Replies
from tests.helpers import REPO

SUMMEDITS_FIXTURE = REPO / "tests" / "fixtures" / "extract" / "faithfulness" / "summedits" / \
    "summedits_samsum_extract.json"

OFFLINE: dict[str, Callable[..., ValidityCard]] = {
    "clarification": dv.validate_clarification,
    "dangerous-assertion": dv.validate_dangerous_assertion,
    "clarify-correctness-approx": correctness_card.validate_clarify_correctness_approx,
    "leak-detector": leak_card.validate_leak_detector,
    "gap-matcher": gap_card.validate_gap_matcher,
    "answer-match": answer_match_card.validate_answer_match,
    "answer-overlap": answer_overlap_card.validate_answer_overlap,
    "summary-coverage": coverage_card.validate_summary_coverage,
    "extract-takeover": dv.validate_extract_takeover,
    "abstention-scenarios": dv.validate_abstention_scenarios,
}


def _labels(name: str) -> list[bool]:
    if name in ("clarification", "dangerous-assertion"):
        items, _ = labelled_sets.clarify_reply_items()
        return [it.asks if name == "clarification" else it.asserts for it in items]
    if name == "clarify-correctness-approx":
        return [it.correct for it in final_answers()[0]]
    if name == "leak-detector":  # the card's set: real replies (the constructed texts go to its extra)
        return [it.leaks for it in leak_card.real_leak_items()[0]]
    if name == "gap-matcher":
        return [it.match for it in gap_card.real_gap_items()[0]]
    if name == "extract-takeover":
        return [it.takeover for it in labelled_sets.takeover_items()[0]]
    if name == "abstention-scenarios":  # gold: the agreed labels (the one label where one annotator labelled)
        return [bool(it.gold) for it in labelled_sets.abstention_scenario_items()[0] if it.gold is not None]
    if name == "summary-coverage":  # the judge scores the pairs in one language
        return [it.covered for it in coverage_card.same_language_clause_items()[0]]
    if name == "answer-overlap":
        return [it.correct for it in answer_overlap_card.scenario_answer_items()[0]]
    return [it.correct for it in answer_match_card.real_answer_items()[0]]  # the card's set: real replies


def test_the_coverage_pairs_are_clauses_of_the_extract_reviews_as_the_judge_cuts_them() -> None:
    from knowgap.suites.extract.coverage import review_aspects

    cases = {row["id"]: row for row in map(json.loads, (REPO / "src" / "knowgap" / "suites" / "extract" / "data" /
                                                       "cases.jsonl").read_text(encoding="utf-8").splitlines())}
    items, _ = coverage_card.clause_coverage_items()
    assert len({it.id for it in items}) == len(items)
    for it in items:
        assert cases[it.case]["review"] == it.review and cases[it.case]["kind"] != "calibration", it.id
        assert it.id.split("/", 1)[1].rsplit("#", 1)[0] == it.case, it.id  # the id names the case
        assert it.clause in review_aspects(it.review), it.id
    assert {"mams-006", "mams-214", "mams-274"}.isdisjoint(it.case for it in items)  # read before labelling


def test_the_summary_coverage_card_states_what_its_set_is_when_the_set_changes(tmp_path: Path) -> None:
    """The validator states the card rule's facts of its labelled set itself (claim, the models that wrote the
    summaries, the languages with their figures, who labelled): a shipped card's facts are carried over only to a
    card of the same sha256, so a card re-measured on a changed file (afcffba renamed 3 of its cases) must not
    lose them and become a screen that 'does not say which replies'."""
    from knowgap.judges.cards import assess

    card = coverage_card.validate_summary_coverage(tmp_path)
    items, _, _ = coverage_card.same_language_clause_items()
    assert card.claim is not None and card.claim.startswith("extract.summary_coverage")
    assert card.replies is not None and card.replies.kind == "real" and card.replies.constructed == 0
    assert card.replies.models == {m: sum(it.source.startswith(m + ",") for it in items)
                                   for m in ("local:qwen2.5-0.5b", "local:qwen2.5-1.5b")}
    assert sum(card.replies.models.values()) == card.n == len(items)
    assert card.languages is not None and {k: (f.n, f.positives) for k, f in card.languages.items()} == {
        lang: (sum(it.lang == lang for it in items), sum(it.lang == lang and it.covered for it in items))
        for lang in ("en", "zh")}
    assert card.labelling is not None and "coverage-1" in card.labelling.rule
    assert assess(card, languages=["en"]).status == "reportable"
    shipped = ValidityCard.model_validate_json(
        (SHIPPED_DIR / f"{card_key(card.judge, card.version)}.json").read_text(encoding="utf-8"))
    assert (shipped.claim, shipped.replies, shipped.languages, shipped.labelling) == (
        card.claim, card.replies, card.languages, card.labelling)


def test_the_clarify_correctness_approx_card_states_what_its_set_is() -> None:
    """Its set is real final answers (issue 37, the card rule): the card says what it validates, the models that
    wrote the answers with their counts, each language's n and positives, and the rule they were labelled by before
    it ran, as the card shipped on that set does (a shipped card's facts are carried over only on the same
    sha256)."""
    card = correctness_card.validate_clarify_correctness_approx(None)
    items, _ = final_answers()
    assert card.claim is not None and card.claim.startswith("clarify.control_correctness_approx")
    assert card.replies is not None and (card.replies.kind, card.replies.constructed) == ("real", 0)
    assert card.replies.models == {m: sum(it.model == m for it in items) for m in {it.model for it in items}}
    assert card.languages is not None and {k: (f.n, f.positives) for k, f in card.languages.items()} == {
        lang: (sum(it.lang == lang for it in items), sum(it.lang == lang and it.correct for it in items))
        for lang in ("en", "zh")}
    assert card.labelling is not None and card.labelling.before_judge and "final-correct-1" in card.labelling.rule
    shipped = ValidityCard.model_validate_json(
        (SHIPPED_DIR / f"{card_key(card.judge, card.version)}.json").read_text(encoding="utf-8"))
    assert shipped.dataset_sha256 == card.dataset_sha256
    assert (shipped.claim, shipped.replies, shipped.languages, shipped.labelling) == (
        card.claim, card.replies, card.languages, card.labelling)


def test_the_scenario_answers_are_real_replies_to_answerable_questions_with_their_references() -> None:
    """scenario_answers.jsonl: each row answers an answerable question of its scenario file, carries that
    question's references, and the 1.5B rows are the replies the abstention-scenarios set holds."""
    from knowgap.suites.abstain.scenario_data import SHIPPED

    questions = {(path.stem, row["id"]): row for path in SHIPPED.glob("*.jsonl")
                 for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    replies = {it.id: it.response for it in labelled_sets.abstention_scenario_items()[0]}
    items, _ = answer_overlap_card.scenario_answer_items()
    assert len({it.id for it in items}) == len(items)
    for it in items:
        question = questions[(it.scenario, it.id.rsplit("/", 1)[-1])]
        assert not question["should_abstain"] and question["question"] == it.question, it.id
        assert it.answers == question["answers"], it.id
        if not it.id.startswith("05/"):
            assert replies[it.id] == it.response, it.id
    assert {it.scenario for it in items} == {"false-premise", "unknowable", "unanswerable-context"}


@pytest.fixture(autouse=True)
def _own_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake judge models registered here stay in this test."""
    monkeypatch.setattr(model_registry, "_FACTORIES", dict(model_registry._FACTORIES))


# --- the sample -------------------------------------------------------------------------------------------------


def test_stratified_balances_the_labels_and_a_smaller_sample_starts_a_larger_one() -> None:
    labels = [True] * 10 + [False] * 30
    small, large = stratified(labels, 6), stratified(labels, 30)
    assert sum(labels[i] for i in small) == 3
    assert sum(labels[i] for i in large) == 10  # every positive, the rest negatives
    assert large[:6] == small
    assert len(set(large)) == 30
    assert stratified(labels, None) == list(range(40))


# --- offline detectors ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(OFFLINE))
def test_an_offline_validator_counts_every_item_of_its_labelled_set(name: str, tmp_path: Path) -> None:
    labels = _labels(name)
    done: list[int] = []
    card = OFFLINE[name](tmp_path, 12, None, lambda d, _n: done.append(d))
    assert card.judge == name and card.judge_model is None
    assert card.n == 12 and done[-1] == 12
    assert card.confusion is not None
    positives = min(6, sum(labels))  # clarification's real replies hold 2 that ask: the sample takes every one
    assert card.confusion.tp + card.confusion.fn == positives
    assert card.confusion.fp + card.confusion.tn == 12 - positives
    assert card.dataset_sha256 and f"seeded sample of 12 of {len(labels)}" in card.method


@pytest.mark.parametrize("name", sorted(OFFLINE))
def test_an_offline_detector_does_not_fall_below_its_shipped_card(name: str, tmp_path: Path) -> None:
    """Re-measure on the whole labelled set (the detectors are deterministic, so the only noise is a changed
    set). A drop below the shipped card's own lower 95% bound is a regression; a changed set or version needs a
    re-measured card (``knowgap judge validate NAME`` and save it to judges/cards)."""
    card = OFFLINE[name](tmp_path, None, None, None)
    labels = _labels(name)
    assert card.n == len(labels) and card.confusion is not None
    assert card.confusion.tp + card.confusion.fn == sum(labels)
    path = SHIPPED_DIR / f"{card_key(card.judge, card.version)}.json"
    assert path.is_file(), f"no shipped card for {card.judge} version {card.version}: re-measure and ship it"
    shipped = ValidityCard.model_validate_json(path.read_text(encoding="utf-8"))
    assert shipped.dataset_sha256 == card.dataset_sha256, f"{card.dataset} changed: re-measure the {name} card"
    assert shipped.balanced_accuracy is not None and card.balanced_accuracy is not None
    floor = shipped.balanced_accuracy.ci_low
    assert floor is not None and card.balanced_accuracy.value is not None
    assert card.balanced_accuracy.value >= floor, (
        f"{name}: balanced accuracy {card.balanced_accuracy.value:.3f} fell below the shipped card's "
        f"lower bound {floor:.3f} (card {shipped.balanced_accuracy.value:.3f})")


def test_a_bad_labelled_line_names_file_line_and_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "labelled"
    folder.mkdir()
    good = json.dumps({"id": "m/c/x", "model": "m", "origins": [{"run": "r", "trial": "t", "prompt": "plain",
                                                                "defence": "none"}],
                       "case_id": "c", "lang": "en", "context": "c", "question": "q", "answers": ["1"], "reply": "1",
                       "finish_reason": "stop", "correct": True, "reason": "1"})
    (folder / "answer_match_real.jsonl").write_text(good + "\n" + good.replace('"correct": true', '"correct": "maybe"')
                                                     + "\n", encoding="utf-8")
    monkeypatch.setattr(labelled_sets, "LABELLED_DIR", folder)
    with pytest.raises(InputError, match=r"answer_match_real.jsonl, line 2, field 'correct'"):
        answer_match_card.validate_answer_match(tmp_path)


# --- model judges, with fake judge models -----------------------------------------------------------------------


def test_clarify_correctness_counts_verdicts_and_parse_failures(tmp_path: Path) -> None:
    register_provider("cards-correct", lambda spec, _rest: Fixed('{"verdict": "correct", "reason": "same"}', spec))
    card = correctness_card.validate_clarify_correctness_constructed(tmp_path, 8, "cards-correct:m", None)
    assert (card.judge_model, card.n, card.parse_failures) == ("cards-correct:m", 8, 0)
    assert card.confusion is not None and (card.confusion.tp, card.confusion.fp) == (4, 4)
    assert card.sensitivity is not None and card.sensitivity.value == 1.0

    assert card.claim is not None and card.claim.startswith("clarify.control_correctness,")
    assert card.replies is not None and (card.replies.kind, card.replies.constructed) == ("constructed", 8)
    assert card.languages is not None and sum(f.n for f in card.languages.values()) == 8

    register_provider("cards-garbled", lambda spec, _rest: Fixed("I think it is right.", spec))
    garbled = correctness_card.validate_clarify_correctness_constructed(tmp_path, 8, "cards-garbled:m",
                                                                       None)
    assert garbled.parse_failures == 8
    assert garbled.confusion is not None and garbled.confusion.tp + garbled.confusion.tn == 0


def _claims_judge(supported: bool) -> Callable[[ChatRequest], ChatResponse]:
    def reply(request: ChatRequest) -> ChatResponse:
        if "CLAIMS:" in request.messages[-1].content:
            verdict = "supported" if supported else "not_supported"
            return ChatResponse(text=json.dumps({"verdicts": [{"claim": 1, "verdict": verdict}]}))
        return ChatResponse(text='{"claims": ["one claim"]}')
    return reply


def test_extract_claims_runs_on_summedits_and_the_handwritten_pairs(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "faithfulness" / "summedits").mkdir(parents=True)
    shutil.copy(SUMMEDITS_FIXTURE, data / "faithfulness" / "summedits" / "summedits_samsum.json")
    register_provider("cards-unsupported", lambda spec, _rest: Replies(*[_claims_judge(False)] * 40, spec=spec))
    card = claims_card.validate_extract_claims(data, 10, "cards-unsupported:m", None)
    assert card.n == 10 and card.parse_failures == 0
    assert card.confusion is not None and (card.confusion.tp, card.confusion.fp) == (5, 5)  # always "unfaithful"
    assert "SummEdits" in card.method and "handwritten" in card.method

    register_provider("cards-half", lambda spec, _rest: Replies('{"claims": ["a"]}', "not json", spec=spec))
    broken = claims_card.validate_extract_claims(data, 1, "cards-half:m", None)
    assert broken.parse_failures == 1


def test_extract_claims_without_summedits_names_the_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="summedits"):
        claims_card.validate_extract_claims(tmp_path, 4, "never-called:m", None)
