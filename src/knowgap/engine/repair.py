"""``knowgap repair RUN``: rebuild a run's manifest that cannot be read, or was lost, from what the run stored.

A run's manifest is rewritten when the run starts, resumes and ends (atomically, see :mod:`knowgap.engine.store`),
so only a fault outside knowgap damages it: a disk error, a file system that lost a rename, an edit by hand. The
trials are in ``trials.jsonl`` and the run's configuration in ``started.json`` (the manifest as the run started,
written once and never rewritten), so the manifest can be rebuilt: the configuration, dataset hashes, judges and
models from started.json; the counts, error causes and usage from the trials that can be read; the status
``finished`` / ``finished_with_errors`` / ``failed`` when every planned trial is stored and the metrics were written,
else ``interrupted`` (``knowgap resume`` runs the rest and computes the metrics). What only the old manifest held
is not known any more (when the run ended, when it was resumed, a model's description at a resume) and the rebuilt
manifest says so in ``repaired``. The damaged manifest is kept beside it (``manifest.json.damaged-<UTC time>``).

A run made before knowgap wrote started.json cannot be rebuilt; the error says so. A run being written by a live
process is refused (its lock is held).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from knowgap.engine.outcome import finished_status, tally_trials
from knowgap.engine.records import Manifest, RunStatus, utcnow
from knowgap.engine.store import MANIFEST, METRICS, STARTED, TRIALS, DamagedManifest, RunStore, cannot_write
from knowgap.errors import KnowgapError


class RepairResult(BaseModel):
    """What ``knowgap repair`` did to a run."""

    run_id: str
    path: str
    rebuilt: bool
    """False when the manifest could be read: nothing was changed."""
    reason: str = ""
    """Why the old manifest could not be used (empty when nothing was rebuilt)."""
    kept_as: str | None = None
    """Where the damaged manifest was kept (None when it was missing)."""
    status: RunStatus | None = None
    trials_ok: int = 0
    trials_error: int = 0
    trials_total: int = 0


def repair_run(root: Path, run: str) -> RepairResult:
    """Rebuild the manifest of run ``run`` (an id under ``root``, or its folder) when it cannot be read or is missing;
    a run whose manifest reads is left as it is (``rebuilt`` False). Raises KnowgapError when the run cannot be
    rebuilt (no started.json) or is being written."""
    path = RunStore.find(root, run)
    if not path.is_dir():
        raise KnowgapError(f"no run '{run}' (looked for {path}); `knowgap runs` lists runs")
    store = RunStore(path)
    if (path / MANIFEST).exists():
        try:
            manifest = store.read_manifest()
            return RepairResult(run_id=manifest.run_id, path=str(path), rebuilt=False, status=manifest.status,
                                trials_ok=manifest.trials_ok, trials_error=manifest.trials_error,
                                trials_total=manifest.trials_total)
        except DamagedManifest as exc:
            reason = exc.problem
    elif (path / STARTED).exists() or (path / TRIALS).exists():
        reason = f"{path / MANIFEST} is missing"
    else:
        raise KnowgapError(f"no run '{run}' (looked for {path / MANIFEST}); `knowgap runs` lists runs")
    try:
        started = store.read_started()
    except FileNotFoundError:
        raise KnowgapError(f"cannot rebuild the manifest of {path.name}: the run has no {STARTED} (runs made before "
                           f"knowgap wrote one keep their configuration only in {MANIFEST}); its trials are in "
                           f"{path / TRIALS}. The manifest: {reason}") from None
    store.lock()  # a run being written is refused here, naming its writer
    try:
        return _rebuild(store, started, reason)
    finally:
        store.unlock()


def _rebuild(store: RunStore, manifest_at_start: Manifest, reason: str) -> RepairResult:
    manifest = manifest_at_start.model_copy(deep=True)
    tally_trials(manifest, store.iter_records(), store.iter_every_record(), manifest.config.prices)
    stored = manifest.trials_ok + manifest.trials_error
    metrics = store.path / METRICS
    manifest.status = "interrupted"
    if stored >= manifest.trials_total and metrics.exists():
        manifest.status = finished_status(manifest.trials_ok, manifest.trials_error)
        manifest.ended_at = datetime.fromtimestamp(metrics.stat().st_mtime, UTC).isoformat(timespec="milliseconds")
    manifest.repaired = (f"rebuilt by knowgap repair at {utcnow()} from {STARTED} and the {stored} trials "
                         f"{TRIALS} holds; the manifest before: {reason}; when the run ended and its resumes before "
                         "the repair are not known")
    old = store.path / MANIFEST
    kept_as = None
    if old.exists():
        kept = old.with_name(f"{MANIFEST}.damaged-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}")
        try:
            os.replace(old, kept)
        except OSError as exc:
            raise cannot_write(old, exc) from None
        kept_as = str(kept)
    store.write_manifest(manifest)
    return RepairResult(run_id=manifest.run_id, path=str(store.path), rebuilt=True, reason=reason, kept_as=kept_as,
                        status=manifest.status, trials_ok=manifest.trials_ok, trials_error=manifest.trials_error,
                        trials_total=manifest.trials_total)
