"""The validity cards shipped with knowgap: each names its judge's current version, and the offline judges still
measure as well as their card says on a fresh stratified sample (a regression fails here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowgap.judges.cards import (
    REISSUED,
    SUPERSEDED_DIR,
    ValidityCard,
    assess,
    find_card,
    ship_card,
    shipped_cards,
)
from knowgap.judges.catalog import validate
from knowgap.suites.judge_registry import judges
from tests.helpers import SHARED_DATA

SAMPLE = 80
"""Rows re-measured per judge (equal per label class)."""
CHEAP = {"abstention"}
"""Judges whose re-measurement takes well under a second; the others are marked slow."""
HELD_EXACTLY = {"factuality", "faithfulness"}
"""Judges whose every card verdict another test re-derives and compares one by one, which a sample here could only
repeat more weakly: the offline factuality judge's 135 tiers (test_abstain_reply_cards.py) and the offline
faithfulness checker's 84 verdicts of real extract summaries (test_extract_summary_cards.py): the judge still gives
the recorded verdicts, and the shipped card reproduces from them. (The checker's benchmark figure, which refits its
combiner by cross-validation, is re-measured by test_faithfulness_judge.py.)"""
BY_NAME = {judge.name: judge for judge in judges()}


def test_shipped_cards_are_for_the_current_versions() -> None:
    cards = shipped_cards()
    assert cards, "no shipped cards"
    for card in cards:
        assert card.judge in BY_NAME, f"shipped card for unknown judge {card.judge}"
        current = BY_NAME[card.judge].version()
        assert card.version == current, (
            f"shipped card {card.key} is stale: {card.judge} is now version {current}; re-run "
            f"`knowgap judge validate {card.judge} --ship`" + (f" --judge-model {card.judge_model}"
                                                               if card.judge_model else ""))
        assert card.n > 0 and card.balanced_accuracy is not None and card.balanced_accuracy.value is not None


def test_superseded_cards_are_of_earlier_versions_and_still_found(kg_home: Path) -> None:
    """A run made with a judge version knowgap has since replaced is reported with that version's card. (An
    earlier issue of a card, ``KEY~issued-DATE.json``, is kept beside them but never found: test_card_rule.py.)"""
    superseded = [c for p in sorted(SUPERSEDED_DIR.glob("*.json")) if REISSUED not in p.name
                  and (c := ValidityCard.model_validate_json(p.read_text(encoding="utf-8")))]
    assert superseded
    current = {(c.judge, c.judge_model): c.version for c in shipped_cards()}
    for card in superseded:
        assert (SUPERSEDED_DIR / f"{card.key}.json").is_file(), card.key
        assert current.get((card.judge, card.judge_model)) not in (None, card.version), card.key
        found = find_card(card.judge, card.version, card.judge_model)
        assert found is not None and found == card
    old = find_card("element-coverage", "element-coverage-1")
    assert old is not None and old.version == "element-coverage-1" and assess(old).status == "screen"


def test_shipping_a_new_version_supersedes_the_old_card(tmp_path: Path) -> None:
    folder = tmp_path / "cards"
    folder.mkdir()
    old = next(c for c in shipped_cards() if c.judge == "leak-detector")
    other = next(c for c in shipped_cards() if c.judge == "gap-matcher")
    for card in (old, other):
        (folder / f"{card.key}.json").write_text(card.model_dump_json(), encoding="utf-8")
    new = old.model_copy(update={"version": "leak-detector-99"})
    path, moved = ship_card(new, folder)
    assert path == folder / f"{new.key}.json" and path.is_file()
    assert moved == [folder / "superseded" / f"{old.key}.json"] and moved[0].is_file()
    assert sorted(p.name for p in folder.glob("*.json")) == sorted([f"{new.key}.json", f"{other.key}.json"])
    _, again = ship_card(new, folder)  # the same version once more: nothing to move
    assert again == []


def _offline_with_validator() -> list[object]:
    params: list[object] = []
    for card in shipped_cards():
        judge = BY_NAME.get(card.judge)
        if judge is None or judge.kind != "offline" or judge.name in HELD_EXACTLY:
            continue
        marks = [] if card.judge in CHEAP else [pytest.mark.slow]
        params.append(pytest.param(card.judge, marks=marks, id=card.judge))
    return params


def _drop(name: str) -> str | None:
    """Why a fresh sample of judge ``name`` shows a real drop from its shipped card, or None: the sample's
    balanced accuracy, upper 95% bound included, is below the shipped value (sampling noise alone keeps the
    shipped value inside the sample's interval about 97% of the time)."""
    judge = BY_NAME[name]
    assert SHARED_DATA is not None or not judge.needs_data
    (shipped,) = [c for c in shipped_cards() if c.judge == name and c.version == judge.version()]
    # a judge whose labelled set ships with it is re-measured on that set (given --data, abstention and factuality
    # would measure on PolicyBench instead: another set than their cards')
    fresh = validate(judge, data_dir=SHARED_DATA if judge.needs_data else None, limit=SAMPLE)
    assert fresh.n == min(SAMPLE, shipped.n)
    assert fresh.balanced_accuracy is not None and fresh.balanced_accuracy.ci_high is not None
    assert shipped.balanced_accuracy is not None and shipped.balanced_accuracy.value is not None
    # a perfect card (1.0) stays out of reach of any Wilson upper bound: no drop when the sample is as good
    if shipped.balanced_accuracy.value in (fresh.balanced_accuracy.ci_high, fresh.balanced_accuracy.value) \
            or fresh.balanced_accuracy.ci_high >= shipped.balanced_accuracy.value:
        return None
    return (f"{name} regressed: balanced accuracy {fresh.balanced_accuracy.value:.3f} "
            f"[{fresh.balanced_accuracy.ci_low:.3f}, {fresh.balanced_accuracy.ci_high:.3f}] on {fresh.n} rows, "
            f"shipped card {shipped.balanced_accuracy.value:.3f}")


needs_data = pytest.mark.skipif(SHARED_DATA is None,
                                reason="../shared/data (the labelled calibration data) is not next to this checkout")


@needs_data
@pytest.mark.parametrize("name", _offline_with_validator())
def test_a_fresh_sample_shows_no_drop(name: str) -> None:
    problem = _drop(name)
    assert problem is None, problem


def test_a_judge_that_got_worse_fails_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """The abstention detector made to miss one abstention in four is caught on the same 80-item sample of its real
    replies (40 of each class)."""
    from knowgap.judges import abstention

    real = abstention.judge_abstention
    calls = {"n": 0}

    def worse(text: str) -> abstention.AbstentionVerdict:
        verdict = real(text)
        if verdict.abstained:
            calls["n"] += 1
            if calls["n"] % 4 == 0:
                return abstention.AbstentionVerdict(False, None, "made worse")
        return verdict

    monkeypatch.setattr(abstention, "judge_abstention", worse)
    problem = _drop("abstention")
    assert problem is not None and problem.startswith("abstention regressed")
