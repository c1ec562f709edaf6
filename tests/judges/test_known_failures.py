"""The adversarial constructs the shipped cards say their judges fail: each re-measured on its labelled set gives
the figure its card records (a change to the judge or the set shows here), and the sets keep their rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from knowgap.judges.abstention import VERSION as ABSTENTION
from knowgap.judges.cards import KnownFailure, find_card
from knowgap.judges.clarification import CLARIFICATION_VERSION
from knowgap.judges.faithfulness import VERSION as FAITHFULNESS
from knowgap.judges.known_failures import (
    HEDGED_ANSWERS,
    VERBATIM_EXTRACTS,
    extract_pairs,
    measure_hedged_answers,
    measure_verbatim_extracts,
)


def _recorded(judge: str, version: str, labelled_set: str, judge_model: str | None = None) -> KnownFailure:
    card = find_card(judge, version, judge_model)
    assert card is not None
    (found,) = [f for f in card.known_failures if f.labelled_set.endswith(labelled_set)]
    return found


def _same(measured: KnownFailure, recorded: KnownFailure) -> None:
    assert measured.model_dump(exclude={"measured"}) == recorded.model_dump(exclude={"measured"})


def test_the_faithfulness_card_records_what_the_checker_does_on_verbatim_extracts() -> None:
    measured = measure_verbatim_extracts()
    _same(measured, _recorded("faithfulness", FAITHFULNESS, VERBATIM_EXTRACTS.name))
    assert measured.n == 26 and set(measured.languages) == {"en", "zh"}
    assert {k: f.n for k, f in measured.languages.items()} == {"en": 13, "zh": 13}


@pytest.mark.parametrize("judge", ["abstention", "abstention-scenarios"])
def test_the_abstention_cards_record_what_the_detector_does_on_hedged_answers(judge: str) -> None:
    _same(measure_hedged_answers(), _recorded(judge, ABSTENTION, HEDGED_ANSWERS.name))


def test_the_verbatim_extracts_keep_their_rule() -> None:
    """Each unfaithful summary holds at least 90% of its tokens in the document; each faithful one shares no run
    longer than 3 words (4 Chinese characters) with it, names and numbers aside (rule verbatim-extract-1)."""

    def tokens(text: str, lang: str) -> list[str]:
        return re.findall(r"[\u4e00-\u9fff]", text) if lang == "zh" else re.findall(r"[a-z0-9']+", text.lower())

    def longest_run(a: list[str], b: list[str]) -> int:
        best = 0
        for i in range(len(a)):
            for j in range(len(b)):
                k = 0
                while i + k < len(a) and j + k < len(b) and a[i + k] == b[j + k]:
                    k += 1
                best = max(best, k)
        return best

    pairs = extract_pairs()
    assert {p.variant for p in pairs} == {"fact", "context"}
    for p in pairs:
        doc = tokens(p.document, p.lang)
        unfaithful = tokens(p.unfaithful, p.lang)
        assert sum(t in doc for t in unfaithful) / len(unfaithful) >= 0.9, p.id
        assert longest_run(tokens(p.faithful, p.lang), doc) <= (4 if p.lang == "zh" else 3), p.id
        assert p.unfaithful != p.document and p.faithful != p.document


# --- issue 37, wave 6: the offline judges' constructs ---------------------------------------------------------------
JUDGE_MODEL = "local:qwen2.5-1.5b"


@pytest.mark.parametrize(("judge", "part"), [("clarification", "asked"), ("qualified-answer", "flagged")])
def test_the_clarify_cards_record_what_the_detector_does_on_self_posed_questions(judge: str, part: str) -> None:
    from knowgap.judges.known_failures import SELF_POSED, measure_self_posed_questions

    measured = measure_self_posed_questions(part)
    _same(measured, _recorded(judge, CLARIFICATION_VERSION, SELF_POSED.name))
    assert {k: f.n for k, f in measured.languages.items()} == {"en": 8, "zh": 8}


@pytest.mark.parametrize("name", ["did_not_mention.jsonl", "not_mentioned_lead.jsonl"])
def test_the_faithfulness_and_extract_claims_cards_record_what_the_refusal_rule_does(name: str) -> None:
    from knowgap.judges.known_failures import LABELLED_DIR, measure_did_not_mention
    from knowgap.suites.extract.claims_card import measure_did_not_mention_claims
    from knowgap.suites.extract.claims_judge import PROMPT_VERSION

    offline = measure_did_not_mention(LABELLED_DIR / name)
    _same(offline, _recorded("faithfulness", FAITHFULNESS, name))
    claims = measure_did_not_mention_claims(LABELLED_DIR / name)
    _same(claims, _recorded("extract-claims", PROMPT_VERSION, name, JUDGE_MODEL))
    # one rule before both judges: the same summaries set aside
    assert offline.notes.split(" (")[1].split(")")[0] == claims.notes.split(" (")[1].split(")")[0]
    assert {k: f.n for k, f in offline.languages.items()} == {"en": 8, "zh": 8}


def test_the_partial_rubric_card_records_what_its_uncertainty_anchor_does_on_sham_missing_entries() -> None:
    from knowgap.suites.partial.prompts import RUBRIC_VERSION
    from knowgap.suites.partial.rubric_card import measure_sham_missing

    measured = measure_sham_missing()
    _same(measured, _recorded("partial-rubric", RUBRIC_VERSION, "sham_missing.jsonl", JUDGE_MODEL))
    assert {k: f.n for k, f in measured.languages.items()} == {"en": 8, "zh": 8}


def _entry(name: str) -> tuple[str, str, KnownFailure]:
    """(judge, version, the entry measured now) of the construct set ``name``: each measured as its card's was."""
    from knowgap.judges.clarification import DANGER_VERSION
    from knowgap.judges.known_failures import measure_distant_negation
    from knowgap.suites.abstain.answer_overlap_card import measure_number_forms
    from knowgap.suites.abstain.scenario_answers import ANSWER_OVERLAP_VERSION
    from knowgap.suites.clarify.coverage import VERSION as ELEMENT_VERSION
    from knowgap.suites.clarify.coverage_card import measure_sibling_elements
    from knowgap.suites.extract.coverage import VERSION as SUMMARY_VERSION
    from knowgap.suites.extract.coverage_card import measure_clause_paraphrase
    from knowgap.suites.partial.gap_card import measure_gap_paraphrase
    from knowgap.suites.partial.leak import VERSION as LEAK_VERSION
    from knowgap.suites.partial.leak_card import measure_amount_in_words
    from knowgap.suites.partial.scoring import GAP_MATCH_VERSION

    if name == "distant_negation.jsonl":
        return "dangerous-assertion", DANGER_VERSION, measure_distant_negation()
    if name == "number_forms.jsonl":
        return "answer-overlap", ANSWER_OVERLAP_VERSION, measure_number_forms()
    if name == "gap_paraphrase.jsonl":
        return "gap-matcher", GAP_MATCH_VERSION, measure_gap_paraphrase()
    if name == "amount_in_words.jsonl":
        return "leak-detector", LEAK_VERSION, measure_amount_in_words()
    if name == "sibling_elements.jsonl":
        return "element-coverage", ELEMENT_VERSION, measure_sibling_elements()
    assert name == "clause_paraphrase.jsonl"
    return "summary-coverage", SUMMARY_VERSION, measure_clause_paraphrase()


@pytest.mark.parametrize(("name", "per_language", "positives"), [
    ("distant_negation.jsonl", 8, 0), ("number_forms.jsonl", 7, 7), ("gap_paraphrase.jsonl", 12, 6),
    ("amount_in_words.jsonl", 8, 8),
    # these two embed every reply with multilingual-e5-small, as a run does (about 15 s each on an idle core)
    pytest.param("sibling_elements.jsonl", 16, 0, marks=pytest.mark.slow),
    pytest.param("clause_paraphrase.jsonl", 8, 8, marks=pytest.mark.slow)])
def test_each_offline_card_records_what_its_judge_does_on_its_construct(name: str, per_language: int,
                                                                        positives: int) -> None:
    judge, version, measured = _entry(name)
    _same(measured, _recorded(judge, version, name))
    assert {k: (f.n, f.positives) for k, f in measured.languages.items()} == {
        "en": (per_language, positives), "zh": (per_language, positives)}


def test_a_construct_the_judge_handles_is_named_a_construct_checked_not_a_failure() -> None:
    from knowgap.judges.known_failures import CHECKED, DID_NOT_MENTION, NOT_MENTIONED_LEAD, measure_did_not_mention

    handled, failed = measure_did_not_mention(DID_NOT_MENTION), measure_did_not_mention(NOT_MENTIONED_LEAD)
    assert handled.figure.value is not None and handled.figure.value >= 0.8
    assert handled.name.startswith(CHECKED) and "A construct checked" in handled.notes
    assert failed.figure.value is not None and failed.figure.value < 0.8 and not failed.name.startswith(CHECKED)


def test_reissuing_a_card_with_an_entry_keeps_its_measurement_and_the_earlier_issue(tmp_path: Path) -> None:
    from knowgap.judges.cards import SHIPPED_DIR, _read, card_key
    from knowgap.judges.known_failures import measure_self_posed_questions, reissue_with_known_failures

    key = card_key("clarification", CLARIFICATION_VERSION)
    shipped = _read(SHIPPED_DIR / f"{key}.json")
    assert shipped is not None
    bare = shipped.model_copy(update={"known_failures": [], "issued": None})
    (tmp_path / f"{key}.json").write_text(bare.model_dump_json(indent=2))
    entry = measure_self_posed_questions("asked")

    path = reissue_with_known_failures("clarification", CLARIFICATION_VERSION, [entry], "2031-01-02", None, tmp_path)
    assert path == tmp_path / f"{key}.json"
    new = _read(path)
    assert new is not None and new.issued == "2031-01-02" and new.known_failures == [entry]
    assert new.model_dump(exclude={"known_failures", "issued"}) == bare.model_dump(exclude={"known_failures", "issued"})
    (earlier,) = (tmp_path / "superseded").glob(f"{key}~issued-*.json")
    assert _read(earlier) == bare
    # again: nothing to do, nothing moved
    assert reissue_with_known_failures("clarification", CLARIFICATION_VERSION, [entry], "2031-01-03", None,
                                       tmp_path) is None
    assert len(list((tmp_path / "superseded").iterdir())) == 1


def test_the_construct_sets_keep_their_rules() -> None:
    """Each set holds 8 en and 8 zh items as its rule builds them, labelled as the rule says."""
    import json

    from knowgap.judges.known_failures import LABELLED_DIR

    def rows(name: str) -> list[dict[str, object]]:
        return [json.loads(line) for line in (LABELLED_DIR / name).read_text(encoding="utf-8").splitlines()]

    sizes = {"self_posed_questions.jsonl": 8, "did_not_mention.jsonl": 8, "not_mentioned_lead.jsonl": 8,
             "sham_missing.jsonl": 8, "distant_negation.jsonl": 8, "number_forms.jsonl": 7, "gap_paraphrase.jsonl": 12,
             "amount_in_words.jsonl": 8, "sibling_elements.jsonl": 16, "clause_paraphrase.jsonl": 8}
    for name, size in sizes.items():
        found = rows(name)
        assert sorted(str(r["id"]) for r in found) == [f"{la}-{i:02d}" for la in ("en", "zh")
                                                       for i in range(1, size + 1)], name
        assert all(str(r["reason"]).strip() for r in found), name
    for r in rows("self_posed_questions.jsonl"):  # one question, posed and answered by the reply itself
        assert str(r["reply"]).count("?") + str(r["reply"]).count("？") == 1 and not r["asks"] and not r["qualified"]
    for name in ("did_not_mention.jsonl", "not_mentioned_lead.jsonl"):
        found = rows(name)
        assert all(len(str(r["summary"])) < 200 and r["refusal"] is False for r in found)
        assert [r["faithful"] for r in found] == [i % 2 == 1 for _ in ("en", "zh") for i in range(1, 9)]
    for r in rows("sham_missing.jsonl"):
        reply = json.loads(str(r["reply"]))
        assert reply["sufficient"] is True and reply["missing"] == [r["sham"]] and r["uncertainty_anchor"] is True
    gaps = rows("gap_paraphrase.jsonl")  # each field once as a paraphrase (a match), once as a near miss (none)
    assert [(g["kind"], g["match"]) for g in gaps] == [("paraphrase", True), ("near_miss", False)] * 12
    for g in gaps:
        if g["kind"] == "near_miss":  # names the field's record as its path spells it
            assert str(g["path"]).split(".")[0].replace("_", " ") in str(g["named"])
    assert all(r["covered"] is False and int(str(r["element"])) >= 1 for r in rows("sibling_elements.jsonl"))
    assert all(r["leaks"] is True and not any(ch.isdigit() for ch in str(r["text"]))
               for r in rows("amount_in_words.jsonl"))


def test_a_construct_row_without_its_reason_is_refused_naming_file_line_and_field(tmp_path: Path) -> None:
    from knowgap.errors import InputError
    from knowgap.judges.known_failures import SELF_POSED, measure_self_posed_questions

    lines = SELF_POSED.read_text(encoding="utf-8").splitlines()
    broken = tmp_path / SELF_POSED.name
    broken.write_text("\n".join([lines[0], lines[1].replace('"reason"', '"why"')]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        measure_self_posed_questions("asked", broken)
    assert str(broken) in str(err.value) and "line 2" in str(err.value) and "reason" in str(err.value)


# --- issue 37, wave 7: offline judges on paired construct sets (a construct item and a control per case) -----------
def _paired(name: str) -> tuple[str, str, KnownFailure]:
    """(judge, version, the entry measured now) of the paired construct set ``name``."""
    from knowgap.judges.factuality import VERSION as FACTUALITY
    from knowgap.judges.model_failures import changed_numbers_offline
    from knowgap.judges.takeover import VERSION as TAKEOVER
    from knowgap.suites.clarify.correctness_failures import measure_negated_terms
    from knowgap.suites.clarify.judging import APPROX_VERSION
    from knowgap.suites.extract.takeover_failures import measure_takeover_warnings

    if name == "clarify_negated_terms.jsonl":
        return "clarify-correctness-approx", APPROX_VERSION, measure_negated_terms()
    if name == "takeover_warnings.jsonl":
        return "extract-takeover", TAKEOVER, measure_takeover_warnings()
    assert name == "factuality_changed_numbers.jsonl"
    return "factuality", FACTUALITY, changed_numbers_offline()


@pytest.mark.parametrize(("name", "construct_items", "rule"), [
    ("clarify_negated_terms.jsonl", {"en": 8, "zh": 8}, "clarify_negated_terms_rule.md"),
    ("takeover_warnings.jsonl", {"en": 8, "zh": 8}, "takeover_warnings_rule.md"),
    # embeds every answer with multilingual-e5-small, as a run does; the set and its rule are factuality-llm's
    pytest.param("factuality_changed_numbers.jsonl", {"en": 12}, "model_judge_constructs_rule.md",
                 marks=pytest.mark.slow)])
def test_each_offline_card_records_what_its_judge_does_on_its_paired_construct(name: str,
                                                                               construct_items: dict[str, int],
                                                                               rule: str) -> None:
    judge, version, measured = _paired(name)
    _same(measured, _recorded(judge, version, name))
    assert {k: f.n for k, f in measured.languages.items()} == construct_items
    assert "Paired controls labelled right: " in measured.notes and "no model" in measured.notes
    assert f"src/knowgap/judges/data/labelled/{rule}" in measured.notes


def test_the_paired_offline_sets_keep_their_rules() -> None:
    """negated-terms-1: each answer holds one alternative of every conclusion term group of its complete case and asks
    nothing, the negated one labelled incorrect; takeover-warning-1: both summaries of a case are the baseline and one
    sentence quoting the same span of the injected text that the review does not hold, the warned one labelled no
    takeover, both with the baseline's sentiment."""
    import re

    from knowgap.suites.clarify.correctness_failures import NEGATED_TERMS, opposite_outcomes
    from knowgap.suites.extract.takeover_failures import takeover_warnings

    answers, cases = opposite_outcomes(NEGATED_TERMS, ("negated", "affirmed"))
    assert len(answers) == 32 and all(a.correct == (a.variant == "affirmed") for a in answers)
    for a in answers:
        for group in cases[a.case_id].conclusion_terms:
            alternatives = [t.strip() for t in group.split("|")]
            assert any(t in a.answer if a.lang == "zh" else re.search(rf"\b{re.escape(t)}\b", a.answer, re.I)
                       for t in alternatives), (a.id, group)
        assert "?" not in a.answer and "？" not in a.answer

    summaries, extract_cases = takeover_warnings()
    assert len(summaries) == 32 and all(s.takeover == (s.variant == "echoed") for s in summaries)
    quoted: dict[str, set[str]] = {}
    for s in summaries:
        case = extract_cases[s.case_id]
        assert case.injected_review is not None and s.summary.startswith(s.baseline_summary)
        assert s.sentiment == s.baseline_sentiment
        (quote,) = re.findall(r"[\"“](.+)[\"”]", s.summary.removeprefix(s.baseline_summary))
        assert quote in case.injected_review and quote not in case.review, s.id
        quoted.setdefault(s.case_id, set()).add(quote)
    assert all(len(q) == 1 for q in quoted.values())
