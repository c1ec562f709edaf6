"""The known-failure constructs of the model judges (issue 37): each set keeps its rule (every case holds one
construct item and one control of the other label, the construct differing from its control only where the rule
says); a judge that gives one verdict to everything scores 0 on the construct or shows it in the controls; a judge
that knows the labels is named a construct checked; a re-issued card keeps its measurement and its other entries;
and each shipped entry is what its recorded run (per-item verdicts and the run's seconds, tests/fixtures/
model_failures/) and the labelled set give, since the model run itself cannot be repeated here."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.judges.cards import SHIPPED_DIR, KnownFailure, cards_in
from knowgap.judges.known_failures import CHECKED
from knowgap.judges.model_failures import (
    ChangedNumber,
    ConstructVerdict,
    changed_numbers,
    construct_failure,
    measure_changed_numbers,
    measure_redirects,
    read_construct_set,
    read_verdicts,
    redirects,
    ship_known_failure,
)
from knowgap.suites.clarify.correctness_failures import measure_opposite_outcomes, opposite_outcomes
from knowgap.suites.clarify.judging import RUBRIC_WEIGHTS, rubric_anchors
from knowgap.suites.clarify.reply_failures import (
    measure_pseudo_conditions,
    measure_specific_questions,
    pseudo_conditions,
    specific_questions,
)
from knowgap.suites.extract.claims_failures import changed_facts, measure_changed_facts
from tests.helpers import REPO, scripted, write_jsonl
from tests.test_experiments import _load

RECORDED = REPO / "tests" / "fixtures" / "model_failures"


def test_each_set_pairs_a_construct_item_with_a_control_of_the_other_label() -> None:
    answers, cases = opposite_outcomes()
    assert {(a.lang, a.variant) for a in answers} == {(lang, v) for lang in ("zh", "en")
                                                     for v in ("opposite", "restated")}
    assert len(answers) == 28 and all(a.correct == (a.variant == "restated") for a in answers)
    assert all(not cases[a.case_id].deficient for a in answers)
    for a in answers:  # rule opposite-outcome-1: the restated answer copies no sentence of the reference
        parts = cases[a.case_id].conclusion.replace("。", ".").replace("；", ".").replace(";", ".").split(".")
        assert not any(len(part.strip()) > 12 and part.strip() in a.answer for part in parts), a.id
    summaries = changed_facts()
    assert len(summaries) == 28 and {s.lang for s in summaries} == {"zh", "en"}
    by_case = {(s.case_id, s.variant): s for s in summaries}
    for s in summaries:  # rule changed-fact-1: one fact changed, everything else identical
        assert s.unfaithful == (s.variant == "changed")
        if s.variant == "changed":
            assert _one_change(by_case[(s.case_id, "faithful")].summary, s.summary), s.id
    numbers = changed_numbers()
    assert len(numbers) == 24 and {n.lang for n in numbers} == {"en"}
    restated = {n.case_id: n.response for n in numbers if n.variant == "restated"}
    for n in numbers:  # rule changed-number-1: the key number changed, a digit in what changed
        assert (n.tier == "tier_3") == (n.variant == "changed")
        if n.variant == "changed":
            assert _one_change(restated[n.case_id], n.response), n.id


def test_the_redirect_question_and_pseudo_condition_sets_keep_their_rules() -> None:
    """redirect-only-1: the answered control is the key point, then the redirect word for word (en, 14 questions);
    asks-missing-fact-1: the same opening and closing lines, three questions against a generic middle that asks
    nothing; pseudo-condition-1: the same opening clause, the assuming answer asks nothing and its 'if' keeps the
    offline gap anchor off (only the question anchor applies), the totals are the rule's scores weighted as
    rubric_total weighs them, on the same 14 deficient cases (7 zh, 7 en) as asks-missing-fact-1."""
    replies = redirects()
    assert len(replies) == 28 and {r.lang for r in replies} == {"en"}
    by_case = {(r.case_id, r.variant): r for r in replies}
    for r in replies:
        assert r.abstained == (r.variant == "redirect")
        if r.variant == "answered":
            redirect = by_case[(r.case_id, "redirect")].response
            assert r.response.endswith(" " + redirect) and len(r.response) > len(redirect) + 20, r.id
    asking, cases = specific_questions()
    assert len(asking) == 28 and sum(a.lang == "zh" for a in asking) == 14
    pairs = {(a.case_id, a.variant): a.reply.splitlines() for a in asking}
    for a in asking:
        assert a.silent_failure == (a.variant == "generic") and cases[a.case_id].deficient
        asks, generic = pairs[(a.case_id, "asks")], pairs[(a.case_id, "generic")]
        assert (asks[0], asks[-1]) == (generic[0], generic[-1]) and len(asks) == 5 and len(generic) == 3, a.id
        assert sum("?" in line or "？" in line for line in asks) == 3
        assert not any("?" in line or "？" in line for line in generic)
    conditions, cases = pseudo_conditions()
    assert {(c.case_id, c.lang) for c in conditions} == {(a.case_id, a.lang) for a in asking}
    for c in conditions:
        assert c.adequate == (c.variant == "asks") == (c.total >= 3.0)
        assert c.total == round(sum(RUBRIC_WEIGHTS[k] * v for k, v in c.scores.items()), 2)
        anchors = rubric_anchors(c.reply, cases[c.case_id].query)
        if c.variant == "assumes":
            other = next(x for x in conditions if (x.case_id, x.variant) == (c.case_id, "asks"))
            head = len(os.path.commonprefix([c.reply, other.reply]))
            assert head >= 8 and c.reply[:head].strip().lower().startswith(("如果", "if ")), c.id
            assert set(anchors) == {"question_quality"}, c.id  # the restating 'if' stands the gap anchor down
        else:
            assert anchors == {}, c.id


def _one_change(control: str, construct: str) -> bool:
    """The two texts differ, only in one stretch of at most 40 characters (the rest identical)."""
    head = len(os.path.commonprefix([control, construct]))
    tail = len(os.path.commonprefix([control[head:][::-1], construct[head:][::-1]]))
    return control != construct and max(len(control), len(construct)) - head - tail <= 40


def test_a_case_without_its_pair_or_an_unknown_variant_is_named_by_file_line_and_field(tmp_path: Path) -> None:
    labelled = REPO / "src/knowgap/judges/data/labelled/factuality_changed_numbers.jsonl"
    rows = [json.loads(line) for line in labelled.read_text("utf-8").splitlines()]
    odd = write_jsonl(tmp_path / "odd.jsonl", [rows[0], {**rows[1], "variant": "garbled"}])
    with pytest.raises(InputError, match=r"odd\.jsonl, line 2, field 'variant'"):
        read_construct_set(odd, ChangedNumber, ("changed", "restated"))
    alone = write_jsonl(tmp_path / "alone.jsonl", [rows[0], rows[1], rows[2]])
    with pytest.raises(InputError, match=r"alone\.jsonl, line 3, field 'case_id'"):
        read_construct_set(alone, ChangedNumber, ("changed", "restated"))


def test_a_judge_that_calls_every_answer_correct_fails_the_opposite_outcome(tmp_path: Path) -> None:
    """Through the model gateway as a run asks it: the opposite answers all called correct (0 of 2), the restated
    controls right; the entry is a known failure, not a construct checked."""
    script = _load("model_known_failures")
    judge = scripted(tmp_path, json.dumps({"verdict": "correct", "reason": "r"}))
    verdicts, _ = measure_opposite_outcomes(judge, 4)
    assert [(v.variant, v.said) for v in verdicts] == [("restated", True), ("opposite", True)] * 2
    failure = script.constructs()["opposite-outcome"].failure(verdicts, judge, 1.0)
    assert failure.n == 2 and failure.figure.value == 0.0 and not failure.name.startswith(CHECKED)
    assert "Paired controls labelled right: 2 of 2" in failure.notes


ORACLE = '''
import json

WRONG = json.loads({wrong!r})


def reply(request):
    system = request.messages[0].content if len(request.messages) > 1 else ""
    user = request.messages[-1].content
    if system.startswith("Break the SUMMARY"):  # extract-claims: decompose into one claim
        return json.dumps({{"claims": [user.split("SUMMARY:\\n", 1)[1]]}})
    if "CLAIMS:\\n1. " in user:  # extract-claims: verify
        bad = user.split("CLAIMS:\\n1. ", 1)[1] in WRONG
        return json.dumps({{"verdicts": [{{"claim": 1, "verdict": "not_supported" if bad else "supported"}}]}})
    bad = any(text in user for text in WRONG)
    if "FINAL ANSWER TO GRADE" in user:
        return json.dumps({{"verdict": "incorrect" if bad else "correct", "reason": "r"}})
    return json.dumps({{"outcome": "tier_3" if bad else "tier_1"}})
'''


def test_a_judge_that_knows_the_labels_has_each_construct_checked(tmp_path: Path) -> None:
    """A python: judge that finds each construct item wrong (and nothing else) gets 1.0 on every construct, its
    controls right, and each entry is named a construct checked, per language too."""
    wrong = ([a.answer for a in opposite_outcomes()[0] if not a.correct]
             + [s.summary for s in changed_facts() if s.unfaithful]
             + [n.response for n in changed_numbers() if n.tier == "tier_3"])
    path = tmp_path / "oracle.py"
    path.write_text(ORACLE.format(wrong=json.dumps(wrong, ensure_ascii=False)), encoding="utf-8")
    judge = f"python:{path}:reply"
    script = _load("model_known_failures")
    for name, measure in (("opposite-outcome", measure_opposite_outcomes), ("changed-fact", measure_changed_facts),
                          ("changed-number", measure_changed_numbers)):
        verdicts, _ = measure(judge, 6)
        assert all(v.said == v.label for v in verdicts), name
        failure = script.constructs()[name].failure(verdicts, judge, None)
        assert failure.figure.value == 1.0 and failure.name.startswith(CHECKED), name


def test_shipping_an_entry_reissues_the_card_with_its_measurement_and_other_entries_kept(tmp_path: Path) -> None:
    folder = tmp_path / "cards"
    shutil.copytree(SHIPPED_DIR, folder)
    (before,) = [c for c in cards_in(folder) if c.judge == "factuality-llm"]
    other = KnownFailure(name="another construct", labelled_set="elsewhere.jsonl", n=1, figure=before.balanced_accuracy
                         or pytest.fail("no figure"), measure="m")
    ship_known_failure("factuality-llm", "local:qwen2.5-1.5b", other, folder)
    entry = KnownFailure(name="a construct", labelled_set="src/x.jsonl", n=2, figure=other.figure, measure="m")
    ship_known_failure("factuality-llm", "local:qwen2.5-1.5b", entry, folder)
    again = entry.model_copy(update={"n": 3})
    path = ship_known_failure("factuality-llm", "local:qwen2.5-1.5b", again, folder)
    (after,) = [c for c in cards_in(folder) if c.judge == "factuality-llm"]
    assert path.parent == folder and [f.n for f in after.known_failures][-2:] == [1, 3]
    assert len(after.known_failures) == len(before.known_failures) + 2
    assert after.model_dump(exclude={"known_failures", "issued"}) == before.model_dump(
        exclude={"known_failures", "issued"})
    assert len(list((folder / "superseded").glob("factuality-llm@*~issued-*.json"))) == len(
        list((SHIPPED_DIR / "superseded").glob("factuality-llm@*~issued-*.json"))) + 3


REPLY_ORACLE = '''
import json

POSITIVE = json.loads({positive!r})


def reply(request):
    user = request.messages[-1].content
    if "abstains from answering" in user or "silent failure" in user:  # the abstention and silent_failure specs
        hit = any(f"RESPONSE: {{text}}\\n" in user for text in POSITIVE)
        yes, no = ("yes", "no") if "abstains from answering" in user else ("dodges", "addresses")
        return json.dumps({{"outcome": yes if hit else no}})
    return "5" if any(text in user for text in POSITIVE) else "1"  # a rubric dimension's digit
'''


def test_a_judge_that_knows_the_labels_has_the_reply_constructs_checked_with_model_only(tmp_path: Path) -> None:
    """A python: judge that says abstained to the redirects only, dodges to the generic replies only, and rates the
    asking replies 5 and the assuming ones 1: every construct checked; the rubric's entry gives the model-only share
    beside the combined figure (both 1.0 here)."""
    positive = ([r.response for r in redirects() if r.abstained]
                + [a.reply for a in specific_questions()[0] if a.silent_failure]
                + [c.reply for c in pseudo_conditions()[0] if c.adequate])
    path = tmp_path / "oracle.py"
    path.write_text(REPLY_ORACLE.format(positive=json.dumps(positive, ensure_ascii=False)), encoding="utf-8")
    judge = f"python:{path}:reply"
    script = _load("model_known_failures")
    for name, measure in (("redirect-only", measure_redirects), ("asks-missing-fact", measure_specific_questions),
                          ("pseudo-condition", measure_pseudo_conditions)):
        verdicts, _ = measure(judge, 4)
        assert len(verdicts) == 4 and all(v.said == v.label for v in verdicts), name
        failure = script.constructs()[name].failure(verdicts, judge, None)
        assert failure.figure.value == 1.0 and failure.name.startswith(CHECKED), name
        assert ("Model-only" in failure.notes) == (name == "pseudo-condition"), name
    assert all(v.model_only == v.label for v in verdicts)


def test_a_judge_that_calls_every_reply_a_dodge_fails_the_specific_questions(tmp_path: Path) -> None:
    """As the 1.5B judge did on real replies: the asking replies all called dodges (0 of 2), the generic controls
    right; the entry is a known failure."""
    judge = scripted(tmp_path, json.dumps({"outcome": "dodges"}))
    verdicts, _ = measure_specific_questions(judge, 4)
    assert [(v.variant, v.said) for v in verdicts] == [("asks", True), ("generic", True)] * 2
    failure = _load("model_known_failures").constructs()["asks-missing-fact"].failure(verdicts, judge, 1.0)
    assert failure.n == 2 and failure.figure.value == 0.0 and not failure.name.startswith(CHECKED)
    assert "Paired controls labelled right: 2 of 2" in failure.notes


def test_a_combined_judge_gets_its_figure_as_it_runs_and_the_model_only_share_beside_it() -> None:
    """The anchors right where the model alone is wrong: the figure is the combined one (1.0, checked), the notes
    say the model alone labelled 0 of 2 construct items right."""
    verdicts = [ConstructVerdict(id=f"c{i}/{kind}", lang="zh", variant=kind, is_construct=kind == "assumes",
                                 label=kind == "asks", said=kind == "asks", model_only=True)
                for i in range(2) for kind in ("assumes", "asks")]
    failure = construct_failure("x", "x.jsonl", "m", verdicts, judge_model="j", seconds_per_item=None, about="")
    assert failure.figure.value == 1.0 and failure.name.startswith(CHECKED)
    assert "construct items labelled right 0 of 2, 0.00 [0.00, 0.66]; controls 2 of 2." in failure.notes


@pytest.mark.parametrize(("name", "judge", "folder", "items"), [
    ("opposite-outcome", "clarify-correctness", "", 28), ("changed-fact", "extract-claims", "", 28),
    ("changed-number", "factuality-llm", "", 24), ("redirect-only", "abstention-llm", "", 28),
    ("asks-missing-fact", "clarify-silent-failure", "", 28),
    ("asks-missing-fact", "clarify-silent-failure", "local_qwen2.5-0.5b", 28),
    ("pseudo-condition", "clarify-rubric", "", 28)])
def test_the_shipped_entry_is_what_its_recorded_run_and_the_labelled_set_give(name: str, judge: str, folder: str,
                                                                              items: int) -> None:
    """The run of the card's judge model cannot be repeated here: its per-item verdicts (every item of the set, each
    with the set's label, language and variant) and its seconds give exactly the entry the shipped card holds (the
    1.5B judge's runs in the folder itself, another judge model's in a folder of its name)."""
    script = _load("model_known_failures")
    failure, judge_model = script.entry_from(RECORDED / folder, name)
    (card,) = [c for c in cards_in(SHIPPED_DIR) if c.judge == judge and c.judge_model == judge_model]
    (shipped,) = [f for f in card.known_failures if f.labelled_set == failure.labelled_set]
    assert failure.model_dump(exclude={"measured"}) == shipped.model_dump(exclude={"measured"})
    verdicts = read_verdicts(RECORDED / folder / f"{name}.verdicts.jsonl")
    construct = script.constructs()[name]
    expected_model = "local:" + folder.removeprefix("local_") if folder else "local:qwen2.5-1.5b"
    assert construct.judge == judge and judge_model == card.judge_model == expected_model
    assert shipped.n == sum(v.is_construct for v in verdicts) == len(verdicts) // 2
    assert len({v.id for v in verdicts}) == len(verdicts) == items
