"""The label store of a run: ``<run folder>/labels/``.

- ``labels.jsonl``: append-only label events (one JSON line each, written under an exclusive lock and
  flushed at once). The current label of (trial, field, annotator) is its last event; earlier ones are its
  history. The terminal labeller and the web app write the same file.
- ``samples/<name>.json``: stratified samples (see sampling.py).
- ``judges/<name>@<version>.jsonl``: verdicts of judge spec versions run on the labelled set.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from knowgap.engine.records import ScoreValue, TrialRecord
from knowgap.engine.store import RunStore, write_atomic
from knowgap.errors import InputError, KnowgapError
from knowgap.labels.records import (
    FieldKind,
    JudgeVerdict,
    LabelEvent,
    Sample,
    SampleContext,
    check_label_value,
    field_kind,
)
from knowgap.paths import runs_dir
from knowgap.redaction import redact

LABELS_DIR = "labels"
LABELS = "labels.jsonl"


def context_of(record: TrialRecord, reference: dict[str, str] | None = None) -> SampleContext:
    """The sample's full context: the last target call's messages, the response, every score, the reference."""
    calls = [c for c in record.calls if c.role == "target"] or record.calls
    call = calls[-1] if calls else None
    response = record.output.get("response")
    if not isinstance(response, str):
        response = call.response.text if call and call.response else ""
    return SampleContext(case_id=record.case_id, config_id=record.config_id, config=record.config,
                         repeat=record.repeat, messages=list(call.request.messages) if call else [],
                         response=response, judge_verdicts=dict(record.scores), reference=reference or {})


def read_events(file: Path) -> list[LabelEvent]:
    """The label events of a ``labels.jsonl`` file, oldest first (none when it does not exist). A torn last line
    (a crash mid-write) is ignored; a bad line is one error naming the file, the line and the field."""
    if not file.exists():
        return []
    out = []
    with file.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.endswith(b"\n"):
                break
            line = raw.decode("utf-8-sig" if number == 1 else "utf-8").strip()
            if not line:
                continue
            try:
                out.append(LabelEvent.model_validate_json(line))
            except ValidationError as exc:
                raise InputError.from_validation(str(file), exc, line=number) from None
    return out


def current_labels(events: list[LabelEvent], field: str | None = None) -> dict[tuple[str, str, str], LabelEvent]:
    """(trial_id, field, annotator) -> the latest event, labels withdrawn (value None) left out."""
    latest: dict[tuple[str, str, str], LabelEvent] = {}
    for e in events:
        if field is None or e.field == field:
            latest[(e.trial_id, e.field, e.annotator)] = e
    return {k: v for k, v in latest.items() if v.value is not None}


class LabelStore:
    def __init__(self, run_path: Path) -> None:
        self.run_path = run_path
        self.run_id = run_path.name
        self.path = run_path / LABELS_DIR
        self.file = self.path / LABELS

    @classmethod
    def open(cls, run: str, runs_root: str | Path | None = None) -> LabelStore:
        return cls(RunStore.open(runs_dir(runs_root), run).path)

    def run_store(self) -> RunStore:
        return RunStore(self.run_path)

    def records(self) -> dict[str, TrialRecord]:
        return {r.trial_id: r for r in self.run_store().iter_records()}

    # label events ------------------------------------------------------------------------------
    @contextmanager
    def _locked_append(self) -> Iterator[IO[str]]:
        self.path.mkdir(parents=True, exist_ok=True)
        with self.file.open("a", encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def events(self) -> list[LabelEvent]:
        """Every label event, oldest first. A torn last line (a crash mid-write) is ignored."""
        return read_events(self.file)

    def current(self, field: str | None = None) -> dict[tuple[str, str, str], LabelEvent]:
        """(trial_id, field, annotator) -> the latest event (a value of None means the label was withdrawn)."""
        return current_labels(self.events(), field)

    def human_labels(self, field: str) -> dict[str, dict[str, ScoreValue]]:
        """annotator -> trial_id -> current value."""
        out: dict[str, dict[str, ScoreValue]] = {}
        for (trial_id, _f, annotator), e in self.current(field).items():
            out.setdefault(annotator, {})[trial_id] = e.value
        return out

    def history(self, trial_id: str, field: str | None = None) -> list[LabelEvent]:
        return [e for e in self.events() if e.trial_id == trial_id and (field is None or e.field == field)]

    def add(self, record: TrialRecord, field: str, annotator: str, value: ScoreValue, *,
            source: str = "api", sample: str | None = None, note: str = "",
            kind: FieldKind | None = None, reference: dict[str, str] | None = None) -> LabelEvent:
        """Save one label at once. Re-labelling the same (trial, field, annotator) is an edit: a new event
        superseding the previous one. The value must have the field's type (``kind``, default: the type of this
        trial's verdict): true/false for a true/false field, and so on. ``reference``: what the annotator was shown
        of the judges' reference (see reference.py), kept in the event's context."""
        annotator = annotator.strip()
        if not annotator:
            raise KnowgapError("a label needs an annotator name (--annotator NAME)")
        if record.status != "ok":
            raise KnowgapError(f"trial {record.trial_id} errored; there is no response to label")
        if field not in record.scores:
            raise KnowgapError(f"trial {record.trial_id} has no score '{field}' "
                               f"(its scores: {', '.join(record.scores) or 'none'})")
        check_label_value(field, value, kind if kind is not None else field_kind([record.scores[field]]))
        with self._locked_append() as fh:
            previous = None
            for e in self.events():
                if (e.trial_id, e.field, e.annotator) == (record.trial_id, field, annotator):
                    previous = e
            event = LabelEvent.model_validate({
                "run_id": self.run_id, "trial_id": record.trial_id, "field": field, "annotator": annotator,
                "value": value, "source": source, "sample": sample, "note": note,
                "revision": previous.revision + 1 if previous else 1,
                "supersedes": previous.event_id if previous else None,
                "context": context_of(record, reference)})
            fh.write(redact(event.model_dump_json()) + "\n")
        return event

    def annotators(self) -> list[str]:
        return sorted({e.annotator for e in self.events()})

    # samples -----------------------------------------------------------------------------------
    def sample_path(self, name: str) -> Path:
        if not name or "/" in name or name.startswith("."):
            raise KnowgapError(f"bad sample name '{name}'")
        return self.path / "samples" / f"{name}.json"

    def write_sample(self, sample: Sample) -> Path:
        path = self.sample_path(sample.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, sample.model_dump_json(indent=2))
        return path

    def read_sample(self, name: str) -> Sample:
        path = self.sample_path(name)
        if not path.exists():
            known = ", ".join(s.name for s in self.samples()) or "none"
            raise KnowgapError(f"run {self.run_id} has no sample '{name}' (samples: {known}); "
                               f"make one with: knowgap label sample {self.run_id} --judge-field FIELD --n 50")
        try:
            return Sample.model_validate_json(path.read_text(encoding="utf-8"))
        except ValidationError as exc:
            raise InputError.from_validation(str(path), exc) from None

    def samples(self) -> list[Sample]:
        folder = self.path / "samples"
        if not folder.exists():
            return []
        return sorted((self.read_sample(p.stem) for p in folder.glob("*.json")), key=lambda s: s.created_at)

    # judge spec verdicts -----------------------------------------------------------------------
    def write_verdicts(self, ref: str, verdicts: list[JudgeVerdict]) -> Path:
        path = self.path / "judges" / f"{ref}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, "".join(redact(v.model_dump_json()) + "\n" for v in verdicts))
        return path

    def judge_verdicts(self, field: str | None) -> dict[str, dict[str, ScoreValue]]:
        """spec ref (name@version) -> trial_id -> verdict, for every judge spec version run on this field
        (on any field when None)."""
        folder = self.path / "judges"
        out: dict[str, dict[str, ScoreValue]] = {}
        if not folder.exists():
            return out
        for path in sorted(folder.glob("*.jsonl")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    v = JudgeVerdict.model_validate_json(line)
                except ValidationError as exc:
                    raise InputError.from_validation(str(path), exc, line=number) from None
                if field is None or v.field == field:
                    out.setdefault(v.spec, {})[v.trial_id] = v.value
        return out


def parse_value(text: str) -> ScoreValue:
    """A label value typed by a person or sent by the web app: JSON scalars, else the plain string."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    return text
