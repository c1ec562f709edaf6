"""A user's own labels as the labelled set of a judge's validity card (labels/validity.py), and the cards in
`knowgap label agreement`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from knowgap.errors import KnowgapError
from knowgap.judges.abstention import VERSION
from knowgap.judges.cards import sha256_files
from knowgap.labels.store import LabelStore
from knowgap.labels.validity import LabelledItem, card_from_labels, labelled_set
from tests.labels.starter_runs import cli, starter_run


def _label(tmp_path: Path, runs_root: Path) -> tuple[str, LabelStore, dict[str, bool]]:
    """A starter run where alice and bob label 8 trials: 3 of the 4 the judge called abstentions and 1 of the 4
    it called answers are abstentions by the majority; one trial is a tie (left out)."""
    run = starter_run(tmp_path, runs_root)
    store = LabelStore.open(run.run_id, runs_root)
    records = store.records()
    yes = sorted(t for t, r in records.items() if r.scores["abstained"] is True)[:4]
    no = sorted(t for t, r in records.items() if r.scores["abstained"] is False)[:4]
    truth = {yes[0]: True, yes[1]: True, yes[2]: True, yes[3]: False,
             no[0]: True, no[1]: False, no[2]: False, no[3]: False}
    for trial, value in truth.items():
        store.add(records[trial], "abstained", "alice", value)
        store.add(records[trial], "abstained", "bob", value)
    tie = sorted(t for t in records if t not in truth)[0]
    store.add(records[tie], "abstained", "alice", True)
    store.add(records[tie], "abstained", "bob", False)
    return run.run_id, store, truth


def test_card_from_labels_counts_the_run_verdicts_against_the_majority(tmp_path: Path, runs_root: Path) -> None:
    run_id, store, truth = _label(tmp_path, runs_root)
    card = card_from_labels(run_id, "abstained", runs_root=runs_root)
    records = store.records()
    tp = sum(truth[t] and records[t].scores["abstained"] is True for t in truth)
    fn = sum(truth[t] and records[t].scores["abstained"] is False for t in truth)
    fp = sum(not truth[t] and records[t].scores["abstained"] is True for t in truth)
    assert card.confusion is not None
    assert (card.confusion.tp, card.confusion.fn, card.confusion.fp, card.n) == (tp, fn, fp, 8)  # tie left out
    assert card.balanced_accuracy is not None and card.balanced_accuracy.value == pytest.approx(
        (tp / (tp + fn) + (8 - tp - fn - fp) / (8 - tp - fn)) / 2)
    # named after the catalogue judge that gave the run's verdicts, at the version the run recorded: the card that
    # `knowgap judges` and reports look up for that judge
    assert (card.judge, card.version, card.judge_model) == ("abstention", VERSION, None)
    assert card.positive == "true" and card.parse_failures == 0
    assert card.dataset == str(store.file) and card.dataset_sha256 == sha256_files([store.file])
    assert "2 annotators" in card.method
    # the same card from the run folder and from the labels file itself, also a copy outside the run
    assert card_from_labels(store.run_path, "abstained").confusion == card.confusion
    copy = tmp_path / "my_labels.jsonl"
    shutil.copy(store.file, copy)
    assert card_from_labels(copy, "abstained").confusion == card.confusion
    assert card_from_labels(copy, "abstained", runs_root=runs_root).judge == "abstention"  # its run, by id
    lost = card_from_labels(copy, "abstained", runs_root=tmp_path / "nowhere")  # no run: no judge to name
    assert (lost.judge, lost.version, lost.confusion) == ("run:abstained", "unversioned", card.confusion)


def test_card_from_labels_runs_a_given_judge_on_the_labelled_responses(tmp_path: Path, runs_root: Path) -> None:
    run_id, store, truth = _label(tmp_path, runs_root)
    seen: list[LabelledItem] = []

    def says_yes_unless_chinese(item: LabelledItem) -> bool | None:
        seen.append(item)
        return None if "没有" in item.response else True

    card = card_from_labels(run_id, "abstained", runs_root=runs_root, verdict=says_yes_unless_chinese,
                            judge="abstention", version="7", seconds=1.6)
    records = store.records()
    assert sorted(i.trial_id for i in seen) == sorted(truth)
    assert all(i.response == records[i.trial_id].output.get("response", i.response) for i in seen)
    failures = sum("没有" in i.response for i in seen)
    assert card.parse_failures == failures and card.judge == "abstention" and card.version == "7"
    assert card.seconds_per_item == pytest.approx(0.2)
    # a judge that says yes to everything it parses: every true negative is lost
    assert card.confusion is not None and card.confusion.tn == 0


def test_card_from_labels_bad_input_is_one_clear_error(tmp_path: Path, runs_root: Path) -> None:
    run_id, store, _ = _label(tmp_path, runs_root)
    with pytest.raises(KnowgapError, match=r"labels\.jsonl: no labels on 'correct' \(labelled fields: abstained\)"):
        card_from_labels(run_id, "correct", runs_root=runs_root)
    with pytest.raises(KnowgapError, match="no verdicts of judge spec 'lexicon@1'"):
        card_from_labels(run_id, "abstained", runs_root=runs_root, spec="lexicon@1")
    bad = tmp_path / "bad.jsonl"
    lines = store.file.read_text(encoding="utf-8").splitlines()
    broken = json.loads(lines[0])
    del broken["annotator"]
    bad.write_text(lines[1] + "\n" + json.dumps(broken) + "\n", encoding="utf-8")
    with pytest.raises(KnowgapError, match=r"bad\.jsonl, line 2, field 'annotator'"):
        labelled_set(bad, "abstained")


def test_agreement_shows_each_judges_card(tmp_path: Path, runs_root: Path) -> None:
    run_id, store, _ = _label(tmp_path, runs_root)
    lexicon = tmp_path / "lexicon.yaml"
    lexicon.write_text("name: lexicon\nversion: '1'\nfield: abstained\nkind: lexicon\n", encoding="utf-8")
    rd = ("--runs-dir", str(runs_root))
    assert cli("label", "judges", run_id, "--spec", str(lexicon), "--reps", "50", *rd).returncode == 0
    report = json.loads(cli("label", "agreement", run_id, "--json", "--reps", "50", *rd).stdout)
    cards = {c["judge"]: c for c in report["cards"]}
    assert set(cards) == {"abstention", "lexicon@1"} and cards["lexicon@1"]["version"] == "1"
    assert cards["abstention"]["version"] == VERSION  # the run's own verdicts, under the judge that gave them
    assert cards["abstention"]["confusion"] == card_from_labels(run_id, "abstained", runs_root=runs_root
                                                                   ).confusion.model_dump()  # type: ignore[union-attr]
    text = cli("label", "agreement", run_id, "--reps", "50", *rd).stdout
    assert "validity cards on these labels" in text
    row = [cell.strip() for cell in next(line for line in text.splitlines()
                                         if line.startswith("│ abstention ")).split("│")]
    assert row[3] == "8" and row[4].startswith("0.750 [") and row[-2] == "screen"  # 3 of 4 right on each side


def test_a_card_from_labels_says_who_wrote_the_replies_in_which_language_and_who_labelled(
        tmp_path: Path, runs_root: Path) -> None:
    """The card rule's fields (issue 37): the replies are the run's target model's (one model: a screen whatever
    the figure), their languages those of the labelled trials' cases, the labellers the people in the file."""
    from knowgap.judges.cards import assess

    run_id, store, truth = _label(tmp_path, runs_root)
    card = card_from_labels(run_id, "abstained", runs_root=runs_root)
    records = store.records()
    target = {c.model for t in truth for c in records[t].calls if c.role == "target"}
    assert card.replies is not None and card.replies.kind == "real"
    assert len(target) == 1 and card.replies.models == {target.pop(): 8}
    from knowgap.suites.starter.dataset import DATA, load_cases

    lang = {c.id: c.lang for c in load_cases(DATA)}
    expected: dict[str, int] = {}
    for t in truth:
        expected[lang[records[t].case_id]] = expected.get(lang[records[t].case_id], 0) + 1
    assert card.languages is not None and {k: f.n for k, f in card.languages.items()} == expected
    assert card.labelling is not None and card.labelling.by.startswith("2 people (alice, bob)")
    assert card.labelling.before_judge is True
    assert card.claim == "did the response decline to answer? (the run's verdicts on 'abstained')"
    a = assess(card)
    assert a.status == "screen" and "its real replies come from one model" in a.reason
    # a copied labels file whose run is not found: nothing to tell who wrote the replies
    copy = tmp_path / "my_labels.jsonl"
    shutil.copy(store.file, copy)
    lost = card_from_labels(copy, "abstained", runs_root=tmp_path / "nowhere")
    assert lost.replies is None and lost.languages is None
    assert "does not say which replies it was measured on" in assess(lost).reason
