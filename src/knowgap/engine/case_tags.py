"""A trial's case tags: what a suite's groups and intervals read of the trial's case (partial's restriction
dimensions and family, abstain's knowledge base, the cluster a trial counts under), stored in its record when it
runs (:attr:`~knowgap.engine.records.TrialRecord.case_tags`, made by :meth:`knowgap.Suite.case_tags`).

A stored run's metrics are counted again from its trials (``knowgap compare``, a resume, the report's bootstraps,
``knowgap plan``): each trial counts under the groups it ran under, from its stored tags, whatever the dataset says
today. A trial stored before knowgap kept them has none: :func:`tags_of` reads its case's tags from today's dataset
instead, and :func:`dataset_note` is the one line that says so for a run."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from knowgap.engine.records import TagValue, TrialRecord
from knowgap.engine.suite import Suite
from knowgap.engine.verdict_tally import Split
from knowgap.errors import KnowgapError

Tags = Mapping[str, TagValue]


def tags_of(record: TrialRecord, today: Callable[[str], Tags | None]) -> Tags:
    """The case tags of ``record``'s trial: as stored with it, else (a trial stored before knowgap stored them)
    ``today(case_id)``, its case's in today's dataset ({} for a case that dataset lacks)."""
    if record.case_tags is not None:
        return record.case_tags
    return today(record.case_id) or {}


def tag_values(tags: Tags, key: str) -> list[str]:
    """Tag ``key`` as a list of values ([] when absent)."""
    value = tags.get(key)
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def tag_value(tags: Tags, key: str) -> str | None:
    """Tag ``key`` as one value (None when absent)."""
    value = tags.get(key)
    return value if isinstance(value, str) or value is None else (value[0] if value else None)


def dataset_note(run_id: str, suite: Suite | None, records: Iterable[TrialRecord]) -> str | None:
    """One line when some trial of run ``run_id`` was stored without its case tags and today's dataset gives its case
    some: the groups (and clusters) those tags feed are then read from today's dataset wherever the run's metrics
    are counted from its trials. None for a run whose trials store them, or a suite that keeps none.

    Reads the records up to the first that stores its tags: a run started since knowgap stored them stores them in
    every trial (its first says so at once), and an older run resumed since holds its older trials first."""
    if suite is None or type(suite).case_tags is Suite.case_tags:
        return None
    today: dict[str, Tags] | None = None
    for record in records:
        if record.case_tags is not None:
            return None
        if today is None:
            try:
                today = {c.id: suite.case_tags(c) for c in suite.cases()}
            except (KnowgapError, OSError, ValueError) as exc:
                return (f"note: run {run_id} stored its trials without their cases' tags (knowgap kept none then) "
                        f"and today's dataset cannot be read: {exc}")
        keys = set(today.get(record.case_id) or ())
        if keys:
            return _note(run_id, keys, suite.splits() or ())
    return None


def _note(run_id: str, keys: set[str], splits: Sequence[Split]) -> str:
    groups = [split.label("", "").strip(" ·") for split in splits if keys & set(split.tags)]
    what = [f"its {', '.join(dict.fromkeys(g for g in groups if g))} groups"] if groups else []
    what += ["the clusters of its intervals"] if "cluster" in keys else []
    named = " and ".join(what) or f"its case tags ({', '.join(sorted(keys))})"
    return (f"note: run {run_id} stored its trials without their cases' tags (knowgap kept none then): {named} "
            "come from today's dataset, not from the data it ran on, wherever its metrics are counted from its "
            "trials")

