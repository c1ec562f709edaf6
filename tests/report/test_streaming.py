"""Reports read a run's records as a stream: writing report.html (as a run does when it ends, and ``knowgap
report``), the ``--md`` summary, the CSV and ``show --failed --limit`` never hold more than a bounded number of
records at once, so a report of 50k trials takes about the memory of one of 2k (docs/scale.md).

Counted, not timed: every record the run's stored records hand out is watched through a weak reference, and the
most of them alive at one moment is what a report held. Holding them all (a list of every record) gives the
run's trial count."""

from __future__ import annotations

import csv
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import overload

import pytest

import knowgap
from knowgap.engine.records import TrialRecord
from knowgap.engine.store import RunStore
from knowgap.report import load_run_data, summary_markdown, write_csv
from knowgap.report.failures import list_failures
from knowgap.report.html import HTML_REPORT, write_html_report
from tests.helpers import scripted

REPEATS = 10
EXAMPLES = 20
"""The worst examples report.html lists (``write_html``'s default)."""


class Watched(Sequence[TrialRecord]):
    """A run's stored records, noting the most records handed out that were alive at once."""

    def __init__(self, records: Sequence[TrialRecord]) -> None:
        self.records = records
        self.alive: dict[int, weakref.ref[TrialRecord]] = {}
        self.most = 0
        self.handed_out = 0

    def __iter__(self) -> Iterator[TrialRecord]:
        for record in self.records:
            key = id(record)
            self.alive[key] = weakref.ref(record, lambda _, key=key: self.alive.pop(key, None))  # type: ignore[misc]
            self.handed_out += 1
            self.most = max(self.most, len(self.alive))
            yield record

    def __len__(self) -> int:
        return len(self.records)

    @overload
    def __getitem__(self, index: int) -> TrialRecord: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[TrialRecord]: ...

    def __getitem__(self, index: int | slice) -> TrialRecord | Sequence[TrialRecord]:
        return self.records[index]


@pytest.fixture
def declined(tmp_path: Path, runs_root: Path) -> knowgap.RunResult:
    """320 starter trials (32 x 10 repeats) answered "I don't know.": the 160 answerable ones fail."""
    return knowgap.run("starter", models={"target": scripted(tmp_path, "I don't know.")}, runs_root=runs_root,
                       repeats=REPEATS)


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> list[Watched]:
    """Every snapshot of stored records taken from now on (reports load a run through ``RunStore.snapshot``)."""
    made: list[Watched] = []
    real = RunStore.snapshot

    def snapshot(self: RunStore) -> Watched:
        made.append(Watched(real(self)))
        return made[-1]

    monkeypatch.setattr(RunStore, "snapshot", snapshot)
    return made


def test_the_run_s_reports_hold_a_bounded_number_of_records(declined: knowgap.RunResult,
                                                           watched: list[Watched], tmp_path: Path) -> None:
    trials = declined.manifest.trials_ok
    assert trials == 32 * REPEATS
    groups = 2  # prompt=plain, prompt=grounded
    bound = EXAMPLES * (1 + groups) + 2  # errored + failed per group kept for the worst examples, and the one read
    assert bound < trials / 4

    (declined.path / HTML_REPORT).unlink()
    out = write_html_report(declined.path)  # what the runner calls when a run ends (and `knowgap report RUN`)
    html = out.read_text(encoding="utf-8")
    half = 8 * REPEATS  # per group: 8 answerable and 8 unanswerable cases, each declined REPEATS times
    assert html.count(f"<title>answerable=true, abstained=true: {half}</title>") == groups  # score tables: every trial
    assert f"prompt=grounded: {half} of {2 * half}, prompt=plain: {half} of {2 * half}" in html  # failed per group
    assert html.count('<div class="example') == EXAMPLES

    run = load_run_data(declined.path)
    text = summary_markdown([run], examples=5)
    assert "worst examples" in text
    write_csv([run], tmp_path / "trials.csv")
    with (tmp_path / "trials.csv").open(encoding="utf-8", newline="") as fh:
        assert sum(1 for _ in csv.DictReader(fh)) == trials
    found = list_failures(run, limit=5)
    assert found.total == 2 * 16 * REPEATS and found.trials == 16 * REPEATS  # accuracy and over_abstention
    assert len({f.trial_id for f in found.failures}) == 5 and len(found.failures) == 10  # the limit counts trials

    assert watched and all(w.handed_out >= trials for w in watched)  # each went over every record
    assert max(w.most for w in watched) <= bound, [w.most for w in watched]


def test_a_list_of_every_record_is_what_the_count_catches(declined: knowgap.RunResult,
                                                          watched: list[Watched]) -> None:
    """The check above can fail: a report that keeps every record it reads shows the run's trial count."""
    kept = list(load_run_data(declined.path).records)
    assert watched[-1].most == len(kept) == 32 * REPEATS
