"""The run store: ``runs/<run-id>/`` with manifest.json, trials.jsonl (append-only) and metrics.json.

Each trial is appended as one JSON line when it finishes and flushed to the OS (the trials that finished in the
same turn of the event loop together, :mod:`knowgap.engine.group_commit`), so a crash (even SIGKILL) loses at most
the trials still in flight and those waiting for that flush. A torn last line left by a crash is cut off on resume.
Files other than trials.jsonl are replaced atomically (write to a temp file, then rename).

A process that writes a run holds its lock (``run.lock``, see :mod:`knowgap.engine.lock`) the whole time;
a write the file system refuses (read-only, permission, a file where a folder should be) is one
:class:`StoreWriteError` line naming the path, never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import IO, overload

from pydantic import ValidationError

from knowgap.engine.lock import RunLock, writer_alive
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


class StoreWriteError(KnowgapError):
    """The file system refused a write (read-only, no permission, a file where a folder should be...)."""


def cannot_write(path: Path, exc: OSError) -> StoreWriteError:
    """One line: the path knowgap meant to write and why the file system refused."""
    return StoreWriteError(f"cannot write to {path}: {(exc.strerror or str(exc)).lower()}")


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()  # nothing half-written is left behind
        raise cannot_write(path, exc) from None


class RunStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.run_id = path.name
        self._fh: IO[str] | None = None
        self._lock = RunLock(path)

    @classmethod
    def create(cls, root: Path, manifest: Manifest) -> RunStore:
        """A new run folder, locked by this process (``unlock`` when the run stops writing)."""
        path = root / manifest.run_id
        try:
            path.mkdir(parents=True, exist_ok=False)
        except FileExistsError:
            raise StoreWriteError(f"a run {manifest.run_id} already exists in {root}") from None
        except OSError as exc:
            raise cannot_write(path, exc) from None
        store = cls(path)
        store.lock()
        try:
            store.write_manifest(manifest)
        except BaseException:
            store.unlock()
            raise
        return store

    @classmethod
    def open(cls, root: Path, run: str) -> RunStore:
        """A run by id, or by path to its folder."""
        candidate = Path(run)
        path = candidate if (candidate / MANIFEST).exists() else root / run
        if not (path / MANIFEST).exists():
            raise KnowgapError(f"no run '{run}' (looked for {path / MANIFEST}); `knowgap runs` lists runs")
        return cls(path)

    # lock -------------------------------------------------------------------------------------
    def lock(self) -> None:
        """Take the run's lock, or raise RunLocked naming the process that holds it."""
        try:
            self._lock.acquire()
        except OSError as exc:
            raise cannot_write(self._lock.file, exc) from None

    def unlock(self) -> None:
        self._lock.release()

    def writer_alive(self) -> bool:
        """Whether a process (this one included) is writing the run now."""
        return self._lock.held_here or writer_alive(self.path)

    # manifest ---------------------------------------------------------------------------------
    def read_manifest(self) -> Manifest:
        file = self.path / MANIFEST
        try:
            return Manifest.model_validate_json(file.read_text(encoding="utf-8"))
        except ValidationError as exc:
            raise InputError.from_validation(str(file), exc) from None

    def current_manifest(self) -> Manifest:
        """The manifest as it stands now: a run that says ``running`` while no process holds its lock died
        (SIGKILL, power loss) and is shown as ``interrupted`` (the file is left as it is)."""
        manifest = self.read_manifest()
        if manifest.status == "running" and not self.writer_alive():
            manifest.status = "interrupted"
            try:  # the dead writer never wrote its counts
                statuses = Counter(r.status for r in self.iter_records())
            except InputError:
                return manifest
            manifest.trials_ok = statuses["ok"]
            manifest.trials_error = sum(statuses.values()) - statuses["ok"]
        return manifest

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
        self.append_lines([self.line(record)])

    @staticmethod
    def line(record: TrialRecord) -> str:
        """The line ``record`` is stored as: its JSON, redacted, and a newline."""
        return redact(record.model_dump_json()) + "\n"

    def append_lines(self, lines: Sequence[str]) -> None:
        """Append ``lines`` (each from :meth:`line`) and flush them to the OS together (one write for a group
        commit)."""
        try:
            if self._fh is None:
                self._repair_tail()
                self._fh = (self.path / TRIALS).open("a", encoding="utf-8")
            self._fh.write("".join(lines))
            self._fh.flush()
        except OSError as exc:
            raise cannot_write(self.path / TRIALS, exc) from None

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def iter_records(self) -> Iterator[TrialRecord]:
        """Every stored record, streamed; a later record of the same trial (an errored trial run again on
        resume) replaces the earlier one. The file is indexed when iteration starts."""
        yield from self.snapshot()

    def snapshot(self) -> StoredRecords:
        """The current record of every trial stored now, as a sequence read from ``trials.jsonl`` on each pass
        (see :class:`StoredRecords`): a report can go over a run's records several times without holding them."""
        return StoredRecords(self)

    def iter_every_record(self) -> Iterator[TrialRecord]:
        """Every stored record in file order, an errored trial's earlier records included (usage counts
        their calls: they were made)."""
        for _, record in self._scan():
            yield record

    def _lines(self, end: int | None = None) -> Iterator[tuple[int, str]]:
        """(line number, text) of every whole line, up to byte ``end`` when given (what the file held then)."""
        file = self.path / TRIALS
        if not file.exists():
            return
        read = 0
        with file.open("rb") as fh:  # bytes: a torn line may end inside a multi-byte UTF-8 character
            for number, line in enumerate(fh, start=1):
                read += len(line)
                if not line.endswith(b"\n") or (end is not None and read > end):
                    return  # torn last line from a crash (or written after ``end``): not a finished trial
                yield number, line.decode("utf-8")

    def _scan_ids(self, end: int | None = None) -> Iterator[tuple[int, str]]:
        file = self.path / TRIALS
        for number, line in self._lines(end):
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

    def _scan(self, end: int | None = None) -> Iterator[tuple[int, TrialRecord]]:
        file = self.path / TRIALS
        for number, line in self._lines(end):
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


class StoredRecords(Sequence[TrialRecord]):
    """The current record of every trial in a run's ``trials.jsonl`` as the file stood when this was made (later
    appends are not seen), in file order; a later record of a trial (an errored trial run again on resume)
    replaces the earlier one, as in :meth:`RunStore.iter_records`.

    Nothing but the count and the line numbers of replaced records is kept: each pass reads and parses the file
    again, so memory stays flat however many trials a run holds (a parsed record of a one-call trial takes about
    6 KiB, more with long prompts). ``len`` is free; indexing reads the file up to the record (``r[i]`` is O(i)):
    iterate instead."""

    def __init__(self, store: RunStore) -> None:
        file = store.path / TRIALS
        self._store = store
        self._end = file.stat().st_size if file.exists() else 0
        seen: set[int] = set()  # hashes of the trial ids: about half the memory of an index by id
        again: set[int] = set()
        lines = 0
        for _, trial_id in store._scan_ids(self._end):
            key = hash(trial_id)
            if key in seen:
                again.add(key)
            else:
                seen.add(key)
            lines += 1
        del seen
        replaced: set[int] = set()
        if again:  # some trial stored more than once (run again on resume), or two ids with one hash: by id
            last: dict[str, int] = {}
            for number, trial_id in store._scan_ids(self._end):
                if hash(trial_id) in again:
                    earlier = last.get(trial_id)
                    if earlier is not None:
                        replaced.add(earlier)
                    last[trial_id] = number
        self._count = lines - len(replaced)
        self._replaced = frozenset(replaced)

    def __iter__(self) -> Iterator[TrialRecord]:
        for number, record in self._store._scan(self._end):
            if number not in self._replaced:
                yield record

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    @overload
    def __getitem__(self, index: int) -> TrialRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[TrialRecord]: ...

    def __getitem__(self, index: int | slice) -> TrialRecord | list[TrialRecord]:
        if isinstance(index, slice):
            wanted = range(*index.indices(self._count))
            picked = {i: r for i, r in enumerate(islice(self, max(wanted, default=-1) + 1)) if i in wanted}
            return [picked[i] for i in wanted]
        i = index + self._count if index < 0 else index
        if not 0 <= i < self._count:
            raise IndexError(f"record {index} of {self._count}")
        return next(islice(self, i, None))

    def __repr__(self) -> str:
        return f"StoredRecords({self._store.path / TRIALS}, {self._count} trials)"


def list_runs(root: Path) -> list[Manifest]:
    """The current manifest of every run under ``root`` (see ``RunStore.current_manifest``), newest first."""
    if not root.exists():
        return []
    if not root.is_dir():
        raise KnowgapError(f"the runs folder {root} is not a folder")
    manifests = []
    for child in sorted(root.iterdir()):
        if (child / MANIFEST).exists():
            try:
                manifests.append(RunStore(child).current_manifest())
            except (InputError, ValueError, OSError):
                continue
    return sorted(manifests, key=lambda m: m.started_at, reverse=True)
