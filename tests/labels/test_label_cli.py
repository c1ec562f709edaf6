"""The real `knowgap label` command line, with answers typed on stdin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowgap.labels.store import LabelStore
from tests.helpers import scripted
from tests.labels.starter_runs import cli, starter_run


def test_sample_label_resume_edit_and_agreement(tmp_path: Path, runs_root: Path) -> None:
    run = starter_run(tmp_path, runs_root)
    rd = ("--runs-dir", str(runs_root))
    out = cli("label", "sample", run.run_id, "--judge-field", "abstained", "--n", "6", "--seed", "0", *rd)
    assert out.returncode == 0, out.stderr
    assert "sample 'abstained': 6 trials" in out.stdout
    order = LabelStore.open(run.run_id, runs_root).read_sample("abstained").trial_ids
    # session 1: two labels, then quit
    one = cli("label", run.run_id, "--annotator", "alice", *rd, stdin="y\nn\nq\n")
    assert one.returncode == 0, one.stderr
    assert "6 trials, 0 already labelled by alice, 6 to go" in one.stdout
    assert "--- response ---" in one.stdout and "judge verdicts" not in one.stdout  # blind by default
    assert "stopped; 2 labels saved this session" in one.stdout
    # session 2 resumes at the third trial; an unknown key is refused; 'b' goes back and edits
    two = cli("label", run.run_id, "--annotator", "alice", *rd, stdin="x\ny\nb\nn\n")
    assert "4 to go" in two.stdout and f"trial {order[2]}" in two.stdout.split("saved")[0]
    assert "unknown answer 'x'" in two.stdout and "(edit, revision 2)" in two.stdout
    assert "end of input" in two.stdout
    store = LabelStore.open(run.run_id, runs_root)
    assert store.human_labels("abstained")["alice"] == {order[0]: True, order[1]: False, order[2]: False}
    assert [e.value for e in store.history(order[2])] == [True, False]
    assert {e.source for e in store.events()} == {"terminal"}
    three = cli("label", run.run_id, "--annotator", "bob", "--show-judge", *rd, stdin="y\ny\ny\ny\ny\ny\n")
    assert "judge verdicts" in three.stdout and "done: 6 labels saved" in three.stdout
    rep = cli("label", "agreement", run.run_id, "--json", "--reps", "200", *rd)
    assert rep.returncode == 0, rep.stderr
    report = json.loads(rep.stdout)
    pairs = {(p["kind"], p["a"], p["b"]): p for p in report["pairs"]}
    assert pairs[("person-person", "alice", "bob")]["n"] == 3
    assert pairs[("person-person", "alice", "bob")]["percent"]["value"] == pytest.approx(1 / 3, abs=1e-6)
    assert pairs[("judge-person", "run:abstained", "bob")]["n"] == 6
    text = cli("label", "agreement", run.run_id, "--by", "answerable", "--reps", "200", *rd)
    assert "Krippendorff's alpha (nominal) among people" in text.stdout
    assert "prompt=grounded answerable=false" in text.stdout


def test_label_errors_are_clear(tmp_path: Path, runs_root: Path) -> None:
    run = starter_run(tmp_path, runs_root)
    rd = ("--runs-dir", str(runs_root))
    no_sample = cli("label", run.run_id, "--annotator", "a", *rd)
    assert no_sample.returncode == 2 and "no sample" in no_sample.stderr and "label sample" in no_sample.stderr
    bad_field = cli("label", "sample", run.run_id, "--judge-field", "nope", "--n", "3", *rd)
    assert bad_field.returncode == 2 and "judge fields in this run: abstained, answerable, correct" in bad_field.stderr
    no_run = cli("label", "agreement", "missing-run", *rd)
    assert no_run.returncode == 2 and "no run 'missing-run'" in no_run.stderr


def test_judge_spec_versions_side_by_side(tmp_path: Path, runs_root: Path) -> None:
    run = starter_run(tmp_path, runs_root)
    rd = ("--runs-dir", str(runs_root))
    cli("label", "sample", run.run_id, "--judge-field", "abstained", "--n", "4", *rd)
    cli("label", run.run_id, "--annotator", "alice", *rd, stdin="y\ny\nn\nn\n")
    lexicon = tmp_path / "lexicon.yaml"
    lexicon.write_text("name: lexicon\nversion: '1'\nfield: abstained\nkind: lexicon\n", encoding="utf-8")
    always_yes = scripted(tmp_path, "Yes, it declines.")
    llm = tmp_path / "llm.yaml"
    llm.write_text("name: asks\nversion: '2'\nfield: abstained\nkind: llm\n"
                   "prompt: 'Does this answer decline? {response} Reply yes or no.'\n", encoding="utf-8")
    out = cli("label", "judges", run.run_id, "--spec", str(lexicon), "--spec", str(llm),
              "--judge-model", always_yes, "--reps", "200", *rd)
    assert out.returncode == 0, out.stderr
    assert "lexicon@1: 4 verdicts" in out.stdout and "asks@2: 4 verdicts" in out.stdout
    rows = [line for line in out.stdout.splitlines() if "asks@2" in line and "│" in line]
    assert rows and "0.500" in rows[0]  # says yes to all four; alice said yes to two
    stored = (runs_root / run.run_id / "labels" / "judges" / "asks@2.jsonl").read_text(encoding="utf-8")
    assert all(json.loads(line)["value"] is True and len(json.loads(line)["spec_sha256"]) == 64
               for line in stored.splitlines())
    report = json.loads(cli("label", "agreement", run.run_id, "--json", "--reps", "100", *rd).stdout)
    assert report["judges"] == ["run:abstained", "asks@2", "lexicon@1"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nversion: '1'\nfield: abstained\nkind: llm\nprompt: 'no placeholder'\n", encoding="utf-8")
    failed = cli("label", "judges", run.run_id, "--spec", str(bad), *rd)
    assert failed.returncode == 2 and "bad.yaml, line 5, field 'prompt'" in failed.stderr
    bad.write_text("name: x\nfield: abstained\n", encoding="utf-8")
    failed = cli("label", "judges", run.run_id, "--spec", str(bad), *rd)
    assert failed.returncode == 2 and "field 'version'" in failed.stderr
