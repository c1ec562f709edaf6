"""What the labelling sheets of real replies share (``clarify_real_replies.py``, ``partial_real_replies.py``,
``abstain_real_replies.py``, ``extract_real_summaries.py``, ``starter_real_replies.py``): each finished trial of
stored runs of one suite with its target model's replies (:func:`target_trials`), and one sheet item per distinct
(model, case, reply text) that lists every run and trial it came from (:func:`reply_id`, :func:`seen_before`),
written as JSONL with a count per model and language (:func:`write_sheet`). Read through knowgap's public API
(:func:`knowgap.iter_trials`, :func:`knowgap.load_run`); never a trial's output or scores."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from knowgap import CallRecord, Manifest, TrialRecord, iter_trials, load_run

OriginT = TypeVar("OriginT")


class HasOrigins(Protocol[OriginT]):
    """A sheet item: the runs and trials that gave its reply."""

    origins: list[OriginT]


def short_model(spec: str) -> str:
    """``local:qwen2.5-1.5b`` -> ``qwen2.5-1.5b`` (the id's first part)."""
    return spec.split(":", 1)[-1].replace("/", "_")


def reply_id(model: str, case_id: str, reply: str) -> str:
    """``MODEL/CASE/sha256(reply)[:8]``: stable across re-runs of a sheet, so items labelled earlier keep their ids."""
    return f"{short_model(model)}/{case_id}/{hashlib.sha256(reply.encode('utf-8')).hexdigest()[:8]}"


def target_trials(run_dirs: list[Path], suite: str) -> Iterator[tuple[Manifest, TrialRecord, list[CallRecord]]]:
    """(manifest, trial, target calls with a reply) of each finished trial of the runs in ``run_dirs`` (each folder
    ``RUNS_ROOT/RUN_ID``, a run of ``suite``, else SystemExit); a trial that did not finish or has no target reply
    is skipped, said on stderr."""
    for run_dir in run_dirs:
        manifest, _ = load_run(run_dir.name, run_dir.parent)
        if manifest.config.suite != suite:
            raise SystemExit(f"{run_dir}: a {manifest.config.suite} run, not {suite}")
        for trial in iter_trials(run_dir.name, run_dir.parent):
            calls = [c for c in trial.calls if c.role == "target" and c.response is not None]
            if trial.status != "ok" or not calls:
                print(f"skipped {run_dir.name} {trial.trial_id}: status {trial.status}, no target reply",
                      file=sys.stderr)
                continue
            yield manifest, trial, calls


def seen_before(items: Mapping[str, HasOrigins[OriginT]], key: str, origin: OriginT) -> bool:
    """Whether ``items`` holds the reply ``key`` already: then ``origin`` is added to its origins (once)."""
    item = items.get(key)
    if item is None:
        return False
    if origin not in item.origins:
        item.origins.append(origin)
    return True


class SheetItem(Protocol):
    """What :func:`write_sheet` reads of an item besides its fields."""

    model: str
    lang: str

    def model_dump(self) -> dict[str, object]: ...


def write_sheet(items: Sequence[SheetItem], out: Path, noun: str = "replies") -> None:
    """``items`` as JSONL into ``out`` (its folder made), and one line on stdout: how many, per model and language."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for item in items:
            f.write(json.dumps(item.model_dump(), ensure_ascii=False) + "\n")
    by: dict[tuple[str, str], int] = {}
    for item in items:
        by[(item.model, item.lang)] = by.get((item.model, item.lang), 0) + 1
    print(f"{len(items)} distinct {noun} -> {out}: "
          + ", ".join(f"{m} {lang} {n}" for (m, lang), n in sorted(by.items())))
