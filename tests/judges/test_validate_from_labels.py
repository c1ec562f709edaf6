"""`knowgap judge validate NAME --labels FILE` end to end: a real run on a scripted model, a sample, labels typed
into the real terminal labeller, the card of the judge's current version, and that card attached to the judge in
`knowgap judges`, in the run's report and in `knowgap label agreement`; labels on another judge's field, or of a
run made with another judge or version, refused with one line naming the file and the field."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pytest

from knowgap.errors import KnowgapError
from knowgap.judges.abstention import VERSION
from knowgap.judges.cards import ValidityCard, card_key
from knowgap.labels.store import LabelStore
from knowgap.labels.validity import judge_card_from_labels
from tests.helpers import script_file

DECLINES = "The context does not say, so I cannot answer."  # the detector: abstained; people: abstained
ANSWERS = "It opens at 9."  # the detector: answered; people: answered
MISSED = "No idea, sorry."  # the detector: answered; people: abstained (a miss)
MISREAD = "I don't know why you ask, but the fee is five dollars."  # the detector: abstained; people: answered
PEOPLE_SAY_ABSTAINED = {DECLINES, MISSED}


def kg(*args: str, cwd: Path, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    """The real command line, run in ``cwd`` (so ``runs/`` is the user's runs folder)."""
    return subprocess.run([sys.executable, "-m", "knowgap", *args], input=stdin, capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "COLUMNS": "250", **env}, timeout=300, check=False)


class Labelled(NamedTuple):
    folder: Path
    env: dict[str, str]
    run_id: str
    labels: str
    """``runs/RUN/labels/labels.jsonl``, relative to ``folder``."""
    counts: dict[str, int]
    """The confusion counts by hand: sampled trials by response, the tie left out."""


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> Labelled:
    """A starter run (32 trials) whose replies cycle through the four kinds above; a sample of 16 on `abstained`
    (seed 0) labelled by alice and bob in the terminal, as people would: abstained for DECLINES and MISSED.
    Bob labels the first trial the other way, so it is a tie (left out of the card)."""
    folder = tmp_path_factory.mktemp("validate_labels")
    env = {"KNOWGAP_HOME": str(folder / "home_setup")}
    script = script_file(folder / "replies.jsonl", DECLINES, ANSWERS, MISSED, MISREAD)
    ran = kg("run", "starter", "--model", f"scripted:{script}", "--no-cache", "-q", cwd=folder, env=env)
    assert ran.returncode == 0, ran.stderr
    (run_id,) = [p.name for p in (folder / "runs").iterdir()]
    drawn = kg("label", "sample", run_id, "--judge-field", "abstained", "--n", "16", "--seed", "0", cwd=folder,
               env=env)
    assert drawn.returncode == 0, drawn.stderr
    store = LabelStore(folder / "runs" / run_id)
    records, order = store.records(), store.read_sample("abstained").trial_ids
    replies = [records[t].output["response"] for t in order]
    # the detector's verdicts are as designed (what the hand count below rests on)
    assert {records[t].scores["abstained"] for t in order if replies[order.index(t)] in (DECLINES, MISREAD)} == {True}
    assert {records[t].scores["abstained"] for t in order if replies[order.index(t)] in (ANSWERS, MISSED)} == {False}
    keys = ["y" if reply in PEOPLE_SAY_ABSTAINED else "n" for reply in replies]
    for annotator, typed in (("alice", keys), ("bob", ["n" if keys[0] == "y" else "y", *keys[1:]])):
        session = kg("label", run_id, "--annotator", annotator, cwd=folder, env=env, stdin="\n".join(typed) + "\n")
        assert session.returncode == 0 and "done: 16 labels saved" in session.stdout, session.stdout + session.stderr
    kinds = Counter(replies[1:])  # the first trial is a tie
    counts = {"tp": kinds[DECLINES], "fn": kinds[MISSED], "fp": kinds[MISREAD], "tn": kinds[ANSWERS]}
    assert all(counts.values()), f"the sample of 16 should hold every kind of reply: {counts}"
    return Labelled(folder, env, run_id, f"runs/{run_id}/labels/labels.jsonl", counts)


def _balanced_accuracy(c: dict[str, int]) -> float:
    return (c["tp"] / (c["tp"] + c["fn"]) + c["tn"] / (c["tn"] + c["fp"])) / 2


def _abstention_cells(show: str) -> list[str]:
    return [line for line in show.splitlines() if "abstention_unanswerable" in line and "│" in line]


@pytest.mark.slow
def test_a_card_from_labels_attaches_to_the_judge_in_judges_reports_and_agreement(labelled: Labelled,
                                                                                    tmp_path: Path) -> None:
    env = {"KNOWGAP_HOME": str(tmp_path / "home")}
    where, run_id, hand = labelled.folder, labelled.run_id, labelled.counts
    ba = _balanced_accuracy(hand)
    before = kg("show", run_id, cwd=where, env=env)
    assert before.returncode == 0 and _abstention_cells(before.stdout), before.stderr
    # the shipped card holds the embedded models' English answers only: the starter's Chinese cases have no card
    assert all("SCREEN: abstention" in cell for cell in _abstention_cells(before.stdout))
    assert "abstention_unanswerable: no card for zh: its card (abstain_replies.jsonl) holds en items only" \
        in before.stdout

    proc = kg("judge", "validate", "abstention", "--labels", labelled.labels, cwd=where, env=env)
    assert proc.returncode == 0, proc.stderr
    assert f"abstention ({VERSION})" in proc.stdout and f"n={sum(hand.values())}: balanced accuracy {ba:.2f}" in \
        proc.stdout
    saved = tmp_path / "home" / "judge_cards" / f"{card_key('abstention', VERSION)}.json"
    card = ValidityCard.model_validate_json(saved.read_text(encoding="utf-8"))
    assert card.confusion is not None and card.confusion.model_dump() == hand
    assert (card.judge, card.version, card.judge_model, card.dataset) == ("abstention", VERSION, None,
                                                                          labelled.labels)
    assert "2 annotators" in card.method

    listed = kg("judges", "--json", cwd=where, env=env)
    rows = {r["name"]: r for r in map(json.loads, listed.stdout.splitlines())}
    (mine, *_) = rows["abstention"]["assessments"]
    assert mine["card"]["confusion"] == hand and mine["card"]["dataset"] == labelled.labels
    assert mine["status"] == "screen" and f"judge balanced accuracy {ba:.2f}" in mine["reason"]
    assert rows["abstention-scenarios"]["assessments"][0]["card"]["dataset"] != labelled.labels  # its own card
    text = kg("judges", cwd=where, env=env).stdout
    block = text[text.index("abstention (offline"):text.index("abstention-scenarios (offline")]
    assert f"{labelled.labels}, n={sum(hand.values())}: balanced accuracy {ba:.2f}" in block

    after = kg("show", run_id, cwd=where, env=env).stdout  # the run's report: the metric's badge is this card's
    cells = _abstention_cells(after)
    assert cells and all("SCREEN: abstention" in cell for cell in cells), after
    # held to the bar on each of the run's languages (the lower figure of the labelled en and zh trials), and one
    # run's replies are one model's: a screen by the card rule either way
    reason = next(line for line in after.splitlines() if line.startswith("  abstention_unanswerable: "))
    assert re.fullmatch(rf"  abstention_unanswerable: judge balanced accuracy \d\.\d\d < 0\.80 on "
                        rf"{re.escape(labelled.labels)} \(n={sum(hand.values())}; its (en|zh) items, n=\d+\); its real "
                        r"replies come from one model \(scripted:.*\); the rule asks for replies of at least 2 models"
                        # and 15 labelled trials are too few of each class in each language (MIN_PER_CLASS)
                        r"(; its (en|zh) items hold \d+ positive\(s\) and \d+ negative\(s\): a figure on fewer than "
                        r"10 of either class cannot clear the bar){1,2}",
                        reason), reason
    markdown = kg("report", run_id, "--md", cwd=where, env=env).stdout
    assert f"SCREEN: abstention {VERSION} · BA {ba:.2f}" in markdown

    agreement = json.loads(kg("label", "agreement", run_id, "--json", "--reps", "50", cwd=where, env=env).stdout)
    own = next(c for c in agreement["cards"] if c["judge"] == "abstention")
    assert own["version"] == VERSION and own["confusion"] == hand and own["n"] == sum(hand.values())


def test_labels_of_another_judges_decision_are_refused(labelled: Labelled, tmp_path: Path) -> None:
    env = {"KNOWGAP_HOME": str(tmp_path / "home")}
    file = labelled.labels
    for args, said in (
            (("clarification",), f"{file}: field 'abstained' is not judge 'clarification''s decision"),
            (("clarification",), "these labels measure abstention, abstention-llm, abstention-scenarios"),
            (("answer-match",), f"{file}: field 'abstained' is not judge 'answer-match''s decision"),
            (("abstention", "--field", "correct"), f"{file}: field 'correct' is not judge 'abstention''s decision"),
            (("abstention-llm",), f"{file}: field 'abstained': run {labelled.run_id}'s verdicts were given by "
                                  f"judge 'abstention' ({VERSION})")):
        proc = kg("judge", "validate", *args, "--labels", file, cwd=labelled.folder, env=env)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert said in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (tmp_path / "home" / "judge_cards").exists()  # nothing saved


def test_a_run_of_an_earlier_judge_version_or_not_found_is_refused(labelled: Labelled, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run = shutil.copytree(labelled.folder / "runs" / labelled.run_id, runs / labelled.run_id)
    labels = run / "labels" / "labels.jsonl"
    assert judge_card_from_labels("abstention", labels).confusion is not None  # the copy, in its run folder
    # a copy of the labels file kept elsewhere: found by its run id under the runs folder, else refused
    elsewhere = shutil.copy(labels, tmp_path / "my_labels.jsonl")
    copied = judge_card_from_labels("abstention", elsewhere, runs_root=runs)
    assert copied.confusion is not None and copied.confusion.model_dump() == labelled.counts
    with pytest.raises(KnowgapError, match=rf"my_labels\.jsonl: run {labelled.run_id} is not found"):
        judge_card_from_labels("abstention", elsewhere, runs_root=tmp_path / "nowhere")
    # the run as an earlier knowgap wrote it: its verdicts came from another version of the detector
    manifest = run / "manifest.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    for judge in data["metric_judges"].values():
        if judge["judge"] == "abstention":
            judge["version"] = "abstention-detector-1"
    manifest.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(KnowgapError, match=rf"labels\.jsonl: field 'abstained': run {labelled.run_id} used judge "
                                           rf"'abstention' version abstention-detector-1, not the current {VERSION}"):
        judge_card_from_labels("abstention", labels)
