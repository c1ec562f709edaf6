"""A stored run loaded for reporting: manifest, metrics, trial records and (when installed) its suite.

The records of a run loaded from its store are read from ``trials.jsonl`` on each pass
(:class:`~knowgap.engine.store.StoredRecords`), never held all at once: report code iterates them and keeps
bounded aggregates (counts, the first N examples), so writing a report of 50k trials takes about the memory of
one of 2k (docs/scale.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from knowgap.engine.case_tags import dataset_note
from knowgap.engine.records import Manifest, MetricValue, TrialRecord
from knowgap.engine.store import RunStore
from knowgap.engine.suite import Suite
from knowgap.errors import KnowgapError
from knowgap.paths import runs_dir


@dataclass
class RunData:
    path: Path
    manifest: Manifest
    metrics: list[MetricValue]
    records: Sequence[TrialRecord]
    """The run's trials: a :class:`~knowgap.engine.store.StoredRecords` (re-read on each pass) when loaded from
    the store, or any list; iterate it, and keep what you need of it bounded."""
    suite: Suite | None = field(default=None, repr=False)
    """The run's suite with its options, or None when it is not installed (a run from elsewhere)."""

    @property
    def run_id(self) -> str:
        return self.manifest.run_id

    @property
    def target(self) -> str:
        return self.manifest.config.models.get("target", "")

    def dataset_note(self) -> str | None:
        """One line when the run's trials were stored without their cases' tags, naming the groups that then come
        from today's dataset (:func:`~knowgap.engine.case_tags.dataset_note`); None otherwise."""
        return dataset_note(self.run_id, self.suite, self.records)

    def trial_failed(self, record: TrialRecord) -> bool | None:
        """The suite's verdict on a trial; errored trials always count as failed."""
        if record.status != "ok":
            return True
        if self.suite is None:
            return None
        return self.suite.trial_failed(record)


def load_suite(manifest: Manifest) -> Suite | None:
    from knowgap.suites import get_suite

    try:
        suite_cls = get_suite(manifest.config.suite)
        return suite_cls(suite_cls.Options.model_validate(manifest.config.options))
    except (KnowgapError, ValueError):
        return None


def load_run_data(run: str | Path, runs_root: str | Path | None = None) -> RunData:
    """A run by id (under ``runs_root``) or by folder."""
    store = RunStore.open(runs_dir(runs_root), str(run))
    manifest = store.current_manifest()
    return RunData(path=store.path, manifest=manifest, metrics=store.read_metrics(),
                   records=store.snapshot(), suite=load_suite(manifest))


def held(run: RunData) -> RunData:
    """The run with its records read once into a list, for code that needs them all at once (a bootstrap
    recomputing the suite's metrics on resamples, trials paired across runs); a list is kept as it is."""
    return run if isinstance(run.records, list) else replace(run, records=list(run.records))


def truncated_answers(record: TrialRecord) -> int:
    """How many of the target's answers in the trial were cut at ``max_tokens`` (the model layer's finish reason)."""
    return sum(1 for c in record.calls if c.role == "target" and c.response is not None and c.response.truncated)


CUT_NOTE = "cut at max_tokens"
"""How a listing flags a trial with a cut answer."""
