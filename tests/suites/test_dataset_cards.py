"""Dataset cards (issue 37): every built-in suite ships a card and a re-read of a random sample of its shipped data;
the card's numbers are what the re-read file counts, the docs hold the section generated from them, and the rate
shows in `knowgap suites` and in a run's reports. A plugin suite without a card shows "no dataset card"."""

from __future__ import annotations

import glob
import json
import re
import shutil
from pathlib import Path

import pytest

import knowgap.suites
from knowgap.errors import InputError
from knowgap.stats import wilson
from knowgap.suites import BUILTIN, get_suite
from knowgap.suites.dataset_cards import (
    CARD_FILE,
    MODEL_READER,
    REREAD_FILE,
    SAMPLE_SIZE,
    LoadedCard,
    Measured,
    card_markdown,
    docs_section,
    draw_sample,
    load_card,
    population_sha256,
    report_line,
    shipped_units,
)
from tests.fakes.plugin_package import write_package
from tests.helpers import REPO, knowgap_cli, scripted

SUITES = Path(knowgap.suites.__file__).resolve().parent


def _loaded(name: str) -> LoadedCard:
    """A built-in suite's card, read from its data folder (no suite module imported)."""
    loaded = load_card(SUITES / name / "data")
    assert loaded is not None, f"suite {name} ships no {CARD_FILE}"
    return loaded


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_every_builtin_suite_has_a_card_whose_numbers_are_what_its_reread_counts(name: str) -> None:
    loaded = _loaded(name)
    card, rows = loaded.card, loaded.rows
    assert card.suite == name
    assert loaded.problems() == []  # n, wrong and fixed as typed = as counted from reread.jsonl
    units = shipped_units(name, loaded.folder)
    read = [r.unit for r in rows]
    assert len(set(read)) == len(read), "a unit read twice"
    assert len(read) >= min(SAMPLE_SIZE, len(units)), f"{len(read)} units read, fewer than the sample"
    missing = sorted(set(read) - set(units))
    assert not missing, f"re-read units not in the shipped data: {missing[:5]}"
    if population_sha256(units) == card.reread.population_sha256:
        assert len(units) == card.reread.population
        assert set(draw_sample(units)) <= set(read), "the re-read is not the seeded sample of the shipped units"
    else:  # a fix since the draw added or renamed units: the card must say so
        assert card.reread.population_changed, (
            f"{name}: the shipped units are not the population the sample was drawn from, and the card's "
            "reread.population_changed does not say why")
    for row in rows:  # a wrong unit says what the reference should be; only wrong ones are fixed
        assert row.reader.strip() and row.reason.strip()
        assert not (row.fixed and row.verdict == "correct")
    for label_set in card.label_sets:
        for pattern in label_set.files:  # relative to the repository or to the card's data folder
            assert glob.glob(str(REPO / pattern)) or glob.glob(str(loaded.folder / pattern)), \
                f"{name}: label set file {pattern} not found"
        assert label_set.labelled_by.strip() and label_set.rule.strip() and label_set.independence.strip()
    for dataset in card.dataset:
        assert (loaded.folder / dataset).is_file(), dataset


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_each_suites_docs_hold_the_card_generated_from_its_yaml(name: str) -> None:
    docs = (REPO / "docs" / f"{name}.md").read_text(encoding="utf-8")
    assert docs_section(docs) == card_markdown(_loaded(name)), (
        f"docs/{name}.md's Dataset card section differs from its data/{CARD_FILE} and {REREAD_FILE}: run "
        "python -m knowgap.suites.dataset_cards --write-docs")


def test_the_rate_and_its_interval_come_from_the_stats_package() -> None:
    m = Measured(n=40, wrong=2, fixed=1)
    assert m.interval == wilson(2, 40)
    assert m.text() == "2/40 = 5% [1.4%, 16.5%]"  # Wilson 95%: 0.0138 to 0.1650
    assert Measured(n=40, wrong=0, fixed=0).text() == "0/40 = 0% [0%, 8.8%]"


def _copy_card(tmp_path: Path, name: str = "starter") -> Path:
    folder = tmp_path / "data"
    shutil.copytree(SUITES / name / "data", folder)
    return folder


def test_a_card_whose_numbers_disagree_with_its_reread_fails(tmp_path: Path) -> None:
    folder = _copy_card(tmp_path)
    loaded = load_card(folder)
    assert loaded is not None and loaded.problems() == []
    rows = [json.loads(line) for line in (folder / REREAD_FILE).read_text(encoding="utf-8").splitlines()]
    flipped = next(r for r in rows if r["verdict"] == "correct")
    flipped.update(verdict="wrong", reason="a second wrong one", fixed=False)
    (folder / REREAD_FILE).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                      encoding="utf-8")
    changed = load_card(folder)
    assert changed is not None
    assert changed.measured.wrong == loaded.measured.wrong + 1
    assert any("reread.wrong is" in p for p in changed.problems())


def test_a_bad_reread_row_names_the_file_line_and_field(tmp_path: Path) -> None:
    folder = _copy_card(tmp_path)
    lines = (folder / REREAD_FILE).read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[2])
    row.update(verdict="correct", fixed=True)
    lines[2] = json.dumps(row, ensure_ascii=False)
    lines[4] = lines[4].replace('"verdict": "correct"', '"verdict": "right"').replace('"verdict": "wrong"',
                                                                                     '"verdict": "right"')
    (folder / REREAD_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_card(folder)
    text = str(caught.value)
    assert REREAD_FILE in text and "line 3" in text and "cannot be 'fixed'" in text
    assert "line 5" in text and "verdict" in text


def test_a_plugin_suite_without_a_card_says_so(tmp_path: Path) -> None:
    source = ("import knowgap\n\nclass Tiny(knowgap.Suite):\n    name = 'tiny-nocard'\n    description = 'one case'\n"
              "    def cases(self):\n        return [knowgap.Case(id='a')]\n"
              "    def configurations(self):\n        return [knowgap.Configuration(id='only')]\n"
              "    async def run_trial(self, trial, ctx):\n        return knowgap.TrialResult()\n"
              "    def metrics(self, records):\n        return []\n")
    root = write_package(tmp_path / "site", "acme-nocard", {"acme_nocard": source},
                         {"knowgap.suites": {"tiny-nocard": "acme_nocard:Tiny"}})
    proc = knowgap_cli("suites", env={"PYTHONPATH": str(root)})
    assert proc.returncode == 0, proc.stderr
    lines = {line.split(":", 1)[0]: line for line in proc.stdout.splitlines() if ":" in line}
    assert "no dataset card" in lines["tiny-nocard"]
    for name in BUILTIN:  # each built-in suite's measured rate, as the card's numbers give it
        assert f"reference error rate {_loaded(name).measured.text()}" in " ".join(proc.stdout.split()), name


def test_a_suite_names_its_shipped_units_in_its_own_data_part(tmp_path: Path) -> None:
    """A new suite (a plugin's, or a built-in one) says what its card's re-read samples in its data part, so adding
    one needs no edit of knowgap.suites.dataset_cards."""
    import knowgap
    from knowgap.engine.suite_data import record_ids
    from knowgap.errors import KnowgapError

    class Row(knowgap.Case):
        question: str

    class Tiny(knowgap.Suite):
        name = "tiny-units"
        data = knowgap.SuiteData(Row, units=record_ids("cases.jsonl"))

    class Bare(knowgap.Suite):
        name = "tiny-bare"
        data = knowgap.SuiteData(Row)

    (tmp_path / "cases.jsonl").write_text("".join(json.dumps({"id": f"q{i}", "question": "?"}) + "\n"
                                                  for i in range(3)), encoding="utf-8")
    assert shipped_units(Tiny, tmp_path) == ["q0", "q1", "q2"]
    assert draw_sample(shipped_units(Tiny, tmp_path)) == ["q0", "q1", "q2"]
    with pytest.raises(KnowgapError, match="tiny-bare.*units="):
        shipped_units(Bare, tmp_path)
    assert shipped_units("starter", SUITES / "starter" / "data")[:1] == ["en-library-hours"]  # by a suite's name


def test_the_report_line_names_the_rate_the_data_and_what_was_left_out() -> None:
    abstain = get_suite("abstain")
    loaded = _loaded("abstain")
    audit = str(loaded.folder / "policybench_audit.jsonl")
    shipped = {str(loaded.folder / d): "x" for d in loaded.card.dataset}
    left = loaded.excluded()
    assert left, "the abstain card names the questions it leaves out"
    line = report_line(abstain, {**shipped, audit: "x"}, {})
    assert loaded.measured.text() in line and "other data" not in line
    assert f"{len(left)} shipped units left out by default" in line and left[0] in line and left[-1] in line
    kept = report_line(abstain, shipped, {"include_still_answerable": True})
    assert "left out" not in kept
    other = report_line(abstain, {"/tmp/my-kb.jsonl": "x"}, {})
    assert "other data than the card measures" in other and "left out" not in other
    assert "no dataset card" in report_line(type("Plain", (), {"__module__": "tests.fakes.models"}))


def test_the_model_reader_is_named_honestly() -> None:
    for name in BUILTIN:
        readers = {r.reader for r in _loaded(name).rows}
        assert all("model" in r or "person" in r.lower() or "human" in r.lower() for r in readers), readers
    assert MODEL_READER.startswith("model: LLM agent")


def test_a_runs_reports_give_the_card_line_under_its_heading(tmp_path: Path) -> None:
    """A real abstain run on two sampled questions: report.md, report.html and the markdown summary each give the
    measured rate and the questions the run left out; with --include-still-answerable none is said left out."""
    import knowgap
    from knowgap.report import load_run_data
    from knowgap.report.summary import run_summary

    loaded = _loaded("abstain")
    target = scripted(tmp_path, '{"response": "I do not know.", "citation": null}')
    default = knowgap.run("abstain", models={"target": target}, runs_root=tmp_path / "runs",
                          options={"sample": 2, "retrieval": ["direct"], "prompts": ["basic"]})
    md = (default.path / "report.md").read_text(encoding="utf-8")
    html = (default.path / "report.html").read_text(encoding="utf-8")
    summary = run_summary(load_run_data(default.path))
    for text in (md, html, re.sub(r"\\(.)", r"\1", summary)):  # the summary escapes markdown specials
        assert loaded.measured.text() in text
        assert f"{len(loaded.excluded())} shipped units left out by default" in text
    every = knowgap.run("abstain", models={"target": target}, runs_root=tmp_path / "runs",
                        options={"sample": 2, "retrieval": ["direct"], "prompts": ["basic"],
                                 "include_still_answerable": True})
    md = (every.path / "report.md").read_text(encoding="utf-8")
    assert loaded.measured.text() in md and "shipped units left out" not in md
