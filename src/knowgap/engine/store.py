"""The run store: ``runs/<run-id>/`` with manifest.json, started.json, trials.jsonl (append-only) and metrics.json.

Durability (docs/reliability.md, "Durability"): each trial is appended as one JSON line when it finishes and
flushed to the OS (the trials that finished in the same turn of the event loop together,
:mod:`knowgap.engine.group_commit`), so a crash of the process (even SIGKILL) loses at most the trials still in flight
and those waiting for that flush. trials.jsonl is fsynced at least every ``SYNC_EVERY_S`` seconds while trials are
appended, when the store closes, and before every manifest or metrics write: a manifest never counts a trial whose
line is not on disk, and a power loss costs at most the trials of the last ``SYNC_EVERY_S`` seconds (which a resume
runs again). Files other than trials.jsonl are replaced atomically and durably: written to a temp file, fsynced,
renamed over the old one, and the folder fsynced.

Damage (docs/reliability.md, "Damaged state"): a torn last line (a crash or power loss in the middle of a write) is
never counted: :meth:`RunStore.current_manifest` finds it on every read, counts the trials that are readable and says
so (``Manifest.damage``); a resume cuts it off (its bytes are kept in ``trials.jsonl.torn``). started.json, the
manifest as the run started (written once, never rewritten), is what :func:`knowgap.engine.repair.repair_run`
rebuilds a damaged or lost manifest from, with trials.jsonl; :func:`scan_runs` lists such runs as damaged instead of
leaving them out.

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
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import IO, overload

from pydantic import BaseModel, ValidationError

from knowgap.engine.lock import RunLock, writer_alive
from knowgap.engine.outcome import error_causes, finished_status
from knowgap.engine.records import Manifest, MetricValue, TrialRecord
from knowgap.errors import InputError, KnowgapError, first_validation_error
from knowgap.redaction import redact

MANIFEST = "manifest.json"
STARTED = "started.json"
"""The manifest as the run started (configuration, dataset hashes, judges, models, planned trials): written once, when
the run is created, and never rewritten; a damaged manifest is rebuilt from it and trials.jsonl."""
TRIALS = "trials.jsonl"
TORN = "trials.jsonl.torn"
"""The bytes of the torn last lines a resume cut off, appended (kept for whoever wants to look, never read)."""
METRICS = "metrics.json"
SYNC_EVERY_S = 5.0
"""trials.jsonl is fsynced when this long has passed since it last was, at the next append: what a power loss can
cost a running run."""
_TRIAL_ID = re.compile(r'^\{"trial_id":"((?:[^"\\]|\\.)*)"')


def new_run_id(suite: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{suite}-{stamp}-{secrets.token_hex(2)}"


class StoreWriteError(KnowgapError):
    """The file system refused a write (read-only, no permission, a file where a folder should be...)."""


def cannot_write(path: Path, exc: OSError) -> StoreWriteError:
    """One line: the path knowgap meant to write and why the file system refused."""
    return StoreWriteError(f"cannot write to {path}: {(exc.strerror or str(exc)).lower()}")


def sync_folder(path: Path) -> None:
    """fsync a folder, so that the names created or renamed in it survive a power loss (where the file system can:
    one that cannot fsync a folder is left as it is)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text``, atomically and durably: a temp file written and fsynced, renamed over
    ``path``, the folder fsynced. A reader (or a power loss) sees the old file or the new one, never a mix."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()  # nothing half-written is left behind
        raise cannot_write(path, exc) from None
    sync_folder(path.parent)


@dataclass(frozen=True)
class TornTail:
    """A last line of trials.jsonl without its newline: a write cut off by a crash or a power loss."""

    line: int
    """The torn line's number (from 1)."""
    size: int
    """Its bytes."""
    offset: int
    """Where it starts in the file (the file's size once it is cut off)."""

    def text(self) -> str:
        return f"{TRIALS} ends in a torn line (line {self.line}, {self.size} bytes cut off mid-write)"


class DamagedManifest(InputError):
    """A manifest that cannot be read; ``problem`` says what is wrong without the hint to repair it."""

    def __init__(self, file: str, problem: str, hint: str, *, field: str | None = None) -> None:
        super().__init__(file, problem + hint, field=field)
        self.problem = f"{file}{f', field {field!r}' if field else ''}: {problem}"


class DamagedRun(BaseModel):
    """A run folder whose manifest cannot be read (or is missing), as :func:`scan_runs` lists it."""

    run_id: str
    path: str
    reason: str
    """Why the manifest cannot be read: the file, and what is wrong with it."""
    repairable: bool
    """Whether ``knowgap repair`` can rebuild the manifest (the run has a readable started.json)."""


class RunStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.run_id = path.name
        self._fh: IO[str] | None = None
        self._lock = RunLock(path)
        self._synced_at = time.monotonic()

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
        sync_folder(root)
        store = cls(path)
        store.lock()
        try:
            write_atomic(path / STARTED, redact(manifest.model_dump_json(indent=2, exclude={"damage"})))
            store.write_manifest(manifest)
        except BaseException:
            store.unlock()
            raise
        return store

    @classmethod
    def open(cls, root: Path, run: str) -> RunStore:
        """A run by id, or by path to its folder."""
        path = cls.find(root, run)
        if not (path / MANIFEST).exists():
            if path.is_dir() and ((path / STARTED).exists() or (path / TRIALS).exists()):
                raise KnowgapError(f"run '{path.name}' has lost its manifest ({path / MANIFEST} is missing); "
                                   f"knowgap repair {path.name} rebuilds it from its stored configuration and trials")
            raise KnowgapError(f"no run '{run}' (looked for {path / MANIFEST}); `knowgap runs` lists runs")
        return cls(path)

    @staticmethod
    def find(root: Path, run: str) -> Path:
        """The folder of run ``run`` (an id under ``root``, or a path to the folder), whatever it holds."""
        candidate = Path(run)
        if (candidate / MANIFEST).exists() or (candidate / STARTED).exists() or (candidate / TRIALS).exists():
            return candidate
        return root / run

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
        """The manifest as the file holds it; a file that cannot be read is an InputError naming it, and what
        ``knowgap repair`` can do about it."""
        file = self.path / MANIFEST
        try:
            return Manifest.model_validate_json(file.read_bytes())
        except ValidationError as exc:
            field, message = first_validation_error(exc)
            hint = (f"; knowgap repair {self.run_id} rebuilds it from {STARTED} and {TRIALS}"
                    if (self.path / STARTED).exists() else "")
            raise DamagedManifest(str(file), message, hint, field=field or None) from None

    def read_started(self) -> Manifest:
        """The manifest as the run started (:data:`STARTED`)."""
        file = self.path / STARTED
        try:
            return Manifest.model_validate_json(file.read_bytes())
        except ValidationError as exc:
            raise InputError.from_validation(str(file), exc) from None

    def current_manifest(self) -> Manifest:
        """The manifest as it stands now, its counts true to the trials that can be read (the file is left as it
        is): a run that says ``running`` while no process holds its lock died (SIGKILL, power loss) and is shown as
        ``interrupted``, with the trials it stored; a trials.jsonl that ends in a torn line (:meth:`torn_tail`) has
        that line left out of the counts, the run shown ``interrupted`` when a trial is missing for it, and
        ``damage`` saying so."""
        manifest = self.read_manifest()
        running = manifest.status == "running"
        if running and self.writer_alive():
            return manifest  # a torn last line is a line being written
        torn = self.torn_tail()
        if not running and torn is None:
            return manifest
        if running:
            manifest.status = "interrupted"
        claimed = manifest.trials_ok + manifest.trials_error
        statuses: Counter[str] = Counter()

        def counted() -> Iterator[TrialRecord]:
            for record in self.iter_records():
                statuses[record.status] += 1
                yield record

        try:  # a dead writer never wrote its counts; a torn line's trial is not stored
            causes = error_causes(counted())
        except InputError:
            return manifest
        manifest.trials_ok = statuses["ok"]
        manifest.trials_error = sum(statuses.values()) - statuses["ok"]
        if torn is not None:
            stored = manifest.trials_ok + manifest.trials_error
            manifest.error_causes = causes
            lost = claimed - stored if not running else 0
            manifest.damage = torn.text() + ": not counted" + (
                f"; the manifest counted {lost} trial{'s' if lost != 1 else ''} more, and the metrics were computed "
                f"with {'them' if lost != 1 else 'it'}" if lost > 0 else "")
            if not running:
                manifest.status = (finished_status(manifest.trials_ok, manifest.trials_error)
                                   if stored >= manifest.trials_total else "interrupted")
        return manifest

    def write_manifest(self, manifest: Manifest) -> None:
        """Write ``manifest`` atomically, after an fsync of trials.jsonl: the counts it holds are of trials whose
        lines are on disk."""
        self.sync_trials()
        write_atomic(self.path / MANIFEST, redact(manifest.model_dump_json(indent=2, exclude={"damage"})))

    # trials -----------------------------------------------------------------------------------
    def torn_tail(self) -> TornTail | None:
        """The torn last line of trials.jsonl (one without its newline), or None. Looks at the last byte; reads the
        file only when that is not a newline."""
        file = self.path / TRIALS
        try:
            with file.open("rb") as fh:
                size = fh.seek(0, os.SEEK_END)
                if size == 0:
                    return None
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) == b"\n":
                    return None
                fh.seek(0)
                lines, start, read = 0, 0, 0
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    found = chunk.count(b"\n")
                    if found:
                        lines += found
                        start = read + chunk.rfind(b"\n") + 1
                    read += len(chunk)
        except FileNotFoundError:
            return None
        return TornTail(line=lines + 1, size=size - start, offset=start)

    def _repair_tail(self) -> None:
        """Cut a torn last line (a crash mid-write) so appends start on a clean line; its bytes are appended to
        trials.jsonl.torn first."""
        torn = self.torn_tail()
        if torn is None:
            return
        file = self.path / TRIALS
        with file.open("rb+") as fh:
            fh.seek(torn.offset)
            cut = fh.read()
            with (self.path / TORN).open("ab") as kept:
                kept.write(cut + b"\n")
                kept.flush()
                os.fsync(kept.fileno())
            fh.truncate(torn.offset)
            fh.flush()
            os.fsync(fh.fileno())

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
            created = False
            if self._fh is None:
                self._repair_tail()
                created = not (self.path / TRIALS).exists()
                self._fh = (self.path / TRIALS).open("a", encoding="utf-8")
            self._fh.write("".join(lines))
            self._fh.flush()
            if created or time.monotonic() - self._synced_at >= SYNC_EVERY_S:
                os.fsync(self._fh.fileno())
                self._synced_at = time.monotonic()
                if created:
                    sync_folder(self.path)
        except OSError as exc:
            raise cannot_write(self.path / TRIALS, exc) from None

    def sync_trials(self) -> None:
        """fsync trials.jsonl: every line written so far survives a power loss."""
        file = self.path / TRIALS
        try:
            if self._fh is not None:
                self._fh.flush()
                os.fsync(self._fh.fileno())
            elif file.exists():
                fd = os.open(file, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        except OSError as exc:
            raise cannot_write(file, exc) from None
        self._synced_at = time.monotonic()

    def close(self) -> None:
        fh, self._fh = self._fh, None
        if fh is not None:
            try:
                fh.close()  # flushes what a refused write left in its buffer: refused again on a full disk
            except OSError as exc:
                raise cannot_write(self.path / TRIALS, exc) from None

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
        """Write the metrics atomically, after an fsync of the trials they are computed from."""
        self.sync_trials()
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
    """The current manifest of every run under ``root`` (see ``RunStore.current_manifest``), newest first; runs
    whose manifest cannot be read are left out (:func:`scan_runs` lists them)."""
    return scan_runs(root)[0]


def scan_runs(root: Path) -> tuple[list[Manifest], list[DamagedRun]]:
    """Every run under ``root``: the current manifests, newest first, and the runs whose manifest cannot be read or
    is missing (a folder with a started.json or a trials.jsonl), by id, each with the reason."""
    if not root.exists():
        return [], []
    if not root.is_dir():
        raise KnowgapError(f"the runs folder {root} is not a folder")
    manifests: list[Manifest] = []
    damaged: list[DamagedRun] = []
    for child in sorted(root.iterdir()):
        if (child / MANIFEST).exists():
            store = RunStore(child)
            try:
                manifests.append(store.current_manifest())
                continue
            except DamagedManifest as exc:
                reason = exc.problem
            except (InputError, ValueError) as exc:
                reason = str(exc)
            except OSError as exc:
                reason = f"{exc.filename or child / MANIFEST}: {(exc.strerror or str(exc)).lower()}"
        elif child.is_dir() and ((child / STARTED).exists() or (child / TRIALS).exists()):
            reason = f"{child / MANIFEST} is missing"
        else:
            continue
        try:
            RunStore(child).read_started()
            repairable = True
        except (InputError, OSError):
            repairable = False
        damaged.append(DamagedRun(run_id=child.name, path=str(child), reason=reason, repairable=repairable))
    return sorted(manifests, key=lambda m: m.started_at, reverse=True), damaged
