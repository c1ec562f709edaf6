"""The run store: ``runs/<run-id>/`` with manifest.json, trials.jsonl (append-only) and metrics.json.

Each trial is appended as one JSON line the moment it finishes and flushed to the OS, so a crash (even
SIGKILL) loses at most the trials still in flight. A torn last line left by a crash is cut off on resume.
Files other than trials.jsonl are replaced atomically (write to a temp file, then rename).
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from knowgap.engine.records import Manifest, MetricValue, TrialRecord
from knowgap.errors import InputError, KnowgapError
from knowgap.redaction import redact

MANIFEST = "manifest.json"
TRIALS = "trials.jsonl"
METRICS = "metrics.json"
_TRIAL_ID = re.compile(r'^\{"trial_id":"((?:[^"\\]|\\.)*)"')


def new_run_id(suite: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{suite}-{stamp}-{secrets.token_hex(2)}"


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class RunStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.run_id = path.name
        self._fh: IO[str] | None = None

    @classmethod
    def create(cls, root: Path, manifest: Manifest) -> RunStore:
        path = root / manifest.run_id
        path.mkdir(parents=True, exist_ok=False)
        store = cls(path)
        store.write_manifest(manifest)
        return store

    @classmethod
    def open(cls, root: Path, run: str) -> RunStore:
        """A run by id, or by path to its folder."""
        candidate = Path(run)
        path = candidate if (candidate / MANIFEST).exists() else root / run
        if not (path / MANIFEST).exists():
            raise KnowgapError(f"no run '{run}' (looked for {path / MANIFEST}); `knowgap runs` lists runs")
        return cls(path)

    # manifest ---------------------------------------------------------------------------------
    def read_manifest(self) -> Manifest:
        file = self.path / MANIFEST
        try:
            return Manifest.model_validate_json(file.read_text(encoding="utf-8"))
        except ValidationError as exc:
            raise InputError.from_validation(str(file), exc) from None

    def write_manifest(self, manifest: Manifest) -> None:
        write_atomic(self.path / MANIFEST, redact(manifest.model_dump_json(indent=2)))

    # trials -----------------------------------------------------------------------------------
    def _repair_tail(self) -> None:
        """Cut a torn last line (a crash mid-write) so appends start on a clean line."""
        file = self.path / TRIALS
        if not file.exists() or file.stat().st_size == 0:
            return
        with file.open("rb+") as fh:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) == b"\n":
                return
            fh.seek(0)
            data = fh.read()
            cut = data.rfind(b"\n") + 1
            fh.truncate(cut)

    def append(self, record: TrialRecord) -> None:
        if self._fh is None:
            self._repair_tail()
            self._fh = (self.path / TRIALS).open("a", encoding="utf-8")
        self._fh.write(redact(record.model_dump_json()) + "\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def iter_records(self) -> Iterator[TrialRecord]:
        """Every stored record, streamed; a later record of the same trial (an errored trial run again on
        resume) replaces the earlier one."""
        last_line: dict[str, int] = {}
        for number, trial_id in self._scan_ids():
            last_line[trial_id] = number
        for number, record in self._scan():
            if last_line.get(record.trial_id) == number:
                yield record

    def _lines(self) -> Iterator[tuple[int, str]]:
        file = self.path / TRIALS
        if not file.exists():
            return
        with file.open("rb") as fh:  # bytes: a torn line may end inside a multi-byte UTF-8 character
            for number, line in enumerate(fh, start=1):
                if not line.endswith(b"\n"):
                    return  # torn last line from a crash: not a finished trial
                yield number, line.decode("utf-8")

    def _scan_ids(self) -> Iterator[tuple[int, str]]:
        file = self.path / TRIALS
        for number, line in self._lines():
            match = _TRIAL_ID.match(line)
            if match:
                yield number, json.loads(f'"{match.group(1)}"')
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise InputError(str(file), f"not valid JSON ({exc})", line=number) from None
            if not isinstance(row, dict) or not isinstance(row.get("trial_id"), str):
                raise InputError(str(file), "expected a trial record with a string", line=number,
                                 field="trial_id")
            yield number, row["trial_id"]

    def _scan(self) -> Iterator[tuple[int, TrialRecord]]:
        file = self.path / TRIALS
        for number, line in self._lines():
            try:
                yield number, TrialRecord.model_validate_json(line)
            except ValidationError as exc:
                raise InputError.from_validation(str(file), exc, line=number) from None

    def finished_trial_ids(self) -> set[str]:
        """Trials that finished with status ok (errored trials are run again on resume)."""
        return {r.trial_id for r in self.iter_records() if r.status == "ok"}

    # metrics ----------------------------------------------------------------------------------
    def write_metrics(self, metrics: list[MetricValue]) -> None:
        write_atomic(self.path / METRICS,
                     json.dumps([m.model_dump() for m in metrics], ensure_ascii=False, indent=2))

    def read_metrics(self) -> list[MetricValue]:
        file = self.path / METRICS
        if not file.exists():
            return []
        return [MetricValue.model_validate(m) for m in json.loads(file.read_text(encoding="utf-8"))]


def list_runs(root: Path) -> list[Manifest]:
    if not root.exists():
        return []
    manifests = []
    for child in sorted(root.iterdir()):
        if (child / MANIFEST).exists():
            try:
                manifests.append(RunStore(child).read_manifest())
            except (InputError, ValueError):
                continue
    return sorted(manifests, key=lambda m: m.started_at, reverse=True)
