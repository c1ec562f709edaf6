"""The leak-detector and gap-matcher cards on real replies (issue 37, the card rule): their labelled sets are real
replies of at least two models to the partial suite's role views, in both languages, each label with its reason;
the validators check each reply as the suite does and state what the card was measured on, as the shipped cards
do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.jsonl import read_models
from knowgap.judges.cards import SHIPPED_DIR, ValidityCard, card_key
from knowgap.judges.labelled_sets import labelled_file
from knowgap.suites.partial import gap_card, leak_card
from knowgap.suites.partial.dataset import DATA, load_dataset
from knowgap.suites.partial.labelled_rows import rows_with_scenarios
from knowgap.suites.partial.leak import find_leaks, fingerprints
from knowgap.suites.partial.view import build_view, render_view


def test_the_real_sets_are_replies_of_two_models_in_both_languages_each_label_with_its_reason() -> None:
    scenarios = load_dataset(DATA)
    leaks = [row for _, row in read_models(labelled_file(leak_card.REAL_FILE), leak_card.LeakReply, what="replies")]
    pairs = [row for _, row in read_models(labelled_file(gap_card.REAL_FILE), gap_card.GapPair, what="pairs")]
    for rows in (leaks, pairs):
        assert len({r.id for r in rows}) == len(rows)
        assert len({r.model for r in rows}) >= 2 and {r.lang for r in rows} == {"en", "zh"}
        for r in rows:
            scenario = scenarios[r.scenario_id]
            assert r.lang == scenario.effective_lang() and scenario.policy(r.role).role == r.role, r.id
            assert any(t.id == r.task_id for t in scenario.tasks), r.id
            assert r.reason.strip() and all(run.count("/") >= 1 for run in r.runs), r.id
    for p in pairs:  # an expected missing field of the scenario, named by a non-empty missing item
        assert p.named.strip() and p.id.startswith(f"{p.model.split(':', 1)[-1]}/{p.scenario_id}/"), p.id
        assert p.path in scenarios[p.scenario_id].field_labels or "." in p.path, p.id


def test_a_reply_is_checked_against_what_the_suite_checks_not_against_the_view_alone() -> None:
    """The suite leaves out of a role's fingerprints everything its prompt shows, the question included: the
    severity question of the security family defines P1 by "a tier0 host", so a reply that says tier0 repeats the
    question, and the suite does not count it. The constructed set's reader, which knows only the view, does."""
    scenario = load_dataset(DATA)["si-en-04"]
    role = "soc_tier1"
    built = build_view(scenario, scenario.policy(role))
    view_only = fingerprints(built.secrets, "\n".join([render_view(built.view, "en"), json.dumps(built.pending)]),
                             scenario.leak_markers)
    text = "The asset is tier0, so this is P1."
    assert find_leaks(text, view_only)
    assert not find_leaks(text, leak_card.suite_fingerprints(scenario, "severity", role))


def test_the_cards_state_their_claim_replies_languages_and_labelling_as_shipped() -> None:
    checks = ((leak_card.validate_leak_detector, leak_card.real_leak_items, "leaks", "leaks-1"),
              (gap_card.validate_gap_matcher, gap_card.real_gap_items, "match", "gap-match-1"))
    for validate, read, field, rule in checks:
        card = validate(None)
        items = read()[0]
        models = {it.model for it in items}
        assert card.replies is not None and (card.replies.kind, card.replies.constructed) == ("real", 0)
        assert card.replies.models == {m: sum(it.model == m for it in items) for m in models} and len(models) >= 2
        assert card.languages is not None and {k: (f.n, f.positives) for k, f in card.languages.items()} == {
            lang: (sum(it.lang == lang for it in items), sum(it.lang == lang and getattr(it, field) for it in items))
            for lang in ("en", "zh")}
        assert card.labelling is not None and card.labelling.before_judge and rule in card.labelling.rule
        assert card.claim is not None and card.claim.startswith("partial.")
        assert "constructed_specificity" in card.extra  # the constructed set: a discrimination check only
        shipped = ValidityCard.model_validate_json(
            (SHIPPED_DIR / f"{card_key(card.judge, card.version)}.json").read_text(encoding="utf-8"))
        assert (shipped.dataset_sha256, shipped.claim, shipped.replies, shipped.languages, shipped.labelling) == (
            card.dataset_sha256, card.claim, card.replies, card.languages, card.labelling)


@pytest.mark.parametrize("card", [gap_card, leak_card])
def test_a_labelled_real_row_naming_no_scenario_is_refused_naming_file_line_and_field(card: object,
                                                                                     tmp_path: Path) -> None:
    """Both cards read their real rows (one row model's fields, RealReplyRow) with the scenario each names through
    one reader: the rows before a bad one come with their scenario, the bad one is named by file, line and field."""
    model = gap_card.GapPair if card is gap_card else leak_card.LeakReply
    lines = labelled_file(card.REAL_FILE).read_text(encoding="utf-8").splitlines()[:2]  # type: ignore[attr-defined]
    rows = [json.loads(line) for line in lines]
    rows[1]["scenario_id"] = "xx-en-99"
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    read = rows_with_scenarios(path, model, "rows")
    number, row, scenario = next(read)
    assert (number, row.id, scenario.scenario_id) == (1, rows[0]["id"], rows[0]["scenario_id"])
    with pytest.raises(InputError, match=r"rows.jsonl, line 2, field 'scenario_id'.*no scenario 'xx-en-99'"):
        next(read)
