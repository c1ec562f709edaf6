"""The reference a trial's judges used (expected answer, missing information, hidden fields, gold labels), shown to
the person labelling the trial: the suite says what it is (:meth:`knowgap.engine.suite.Suite.label_reference`),
looked up by the trial's case id in the run's own suite, built from its manifest (same options, same data).
Never a verdict: the judges' verdicts stay hidden until the label is saved.
"""

from __future__ import annotations

from knowgap.engine.records import TrialRecord
from knowgap.engine.store import RunStore
from knowgap.engine.suite import Case, Suite
from knowgap.errors import KnowgapError
from knowgap.report.data import load_suite

UNAVAILABLE = "reference unavailable"


class References:
    """One run's references, the suite and its cases built once, on first use."""

    def __init__(self, run: RunStore) -> None:
        self.run = run
        self._suite: Suite | None = None
        self._cases: dict[str, Case] | None = None
        self._error: str | None = None

    def _load(self) -> None:
        manifest = self.run.current_manifest()
        suite = load_suite(manifest)
        if suite is None:
            self._error = f"suite '{manifest.config.suite}' cannot be loaded here"
            return
        try:
            self._cases = {c.id: c for c in suite.cases()}
        except (KnowgapError, OSError, ValueError) as exc:
            self._error = f"the run's cases cannot be read ({exc})"
            return
        self._suite = suite

    def of(self, record: TrialRecord) -> dict[str, str]:
        """Heading -> text; one ``reference unavailable`` entry saying why when the suite or its data is missing."""
        if self._suite is None and self._error is None:
            self._load()
        if self._suite is None or self._cases is None:
            return {UNAVAILABLE: self._error or ""}
        case = self._cases.get(record.case_id)
        if case is None:
            return {UNAVAILABLE: f"case '{record.case_id}' is not in the run's dataset any more"}
        return self._suite.label_reference(case, record.config)
