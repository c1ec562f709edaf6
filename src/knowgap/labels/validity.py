"""A user's own labels as a labelled set for a judge's validity card.

The labels a person saved with ``knowgap label`` (or the web app) for one judge field become the truth (the
people's majority per trial, ties left out) against which a judge's verdicts are measured, and
:func:`knowgap.judges.cards.binary_card` turns the two into a :class:`~knowgap.judges.cards.ValidityCard`:
the dataset is the labels file, with its sha256 and n, and the card names the judge version whose verdicts
were compared. A verdict that could not be parsed (None) counts as wrong, as on every card.

The verdicts are, in order of preference: a function the caller passes (``knowgap judge validate NAME
--labels FILE`` runs judge NAME on each labelled response), a judge spec version run on the labelled set
(``spec="name@version"``, stored under the run's ``labels/judges/``), else the run's own stored verdict as
the annotator's event recorded it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path

from pydantic import BaseModel

from knowgap.engine.records import ScoreValue
from knowgap.engine.store import MANIFEST, RunStore
from knowgap.errors import KnowgapError
from knowgap.judges.cards import ValidityCard, binary_card, sha256_files
from knowgap.labels.records import LabelEvent, verdict_key, verdict_text
from knowgap.labels.store import LABELS, LABELS_DIR, LabelStore, current_labels, read_events
from knowgap.paths import runs_dir


def majority_labels(humans: Mapping[str, Mapping[str, ScoreValue]]) -> dict[str, str]:
    """trial_id -> the most frequent label key among the people who labelled it (ties left out)."""
    by_item: dict[str, list[str]] = {}
    for labels in humans.values():
        for trial_id, value in labels.items():
            by_item.setdefault(trial_id, []).append(verdict_key(value))
    out = {}
    for trial_id, keys in by_item.items():
        top = Counter(keys).most_common()
        if len(top) == 1 or top[0][1] > top[1][1]:
            out[trial_id] = top[0][0]
    return out


def is_positive(verdicts: Mapping[str, ScoreValue], positive: str) -> dict[str, bool | None]:
    """trial_id -> whether the verdict is the positive value (key ``positive``); None stays None."""
    return {t: None if v is None else verdict_key(v) == positive for t, v in verdicts.items()}


def run_judge_version(versions: Mapping[str, str]) -> str:
    """The version a run's own verdicts carry: its judge versions from the manifest (``rubric=3``), if any."""
    return ",".join(f"{k}={v}" for k, v in sorted(versions.items())) or "unversioned"


def judge_card(judge: str, version: str, said: Mapping[str, bool | None], truth: Mapping[str, str],
               positive: str, *, dataset: str, dataset_sha256: str, judge_model: str | None = None,
               method: str = "", seconds: float | None = None) -> ValidityCard:
    """The card of one judge (``said``: trial_id -> positive verdict?) against ``truth`` (trial_id -> label key)
    on every truth item; an item the judge gave no verdict on (None or absent) counts as a wrong verdict."""
    items = sorted(truth)
    return binary_card(judge, version, [said.get(t) for t in items], [truth[t] == positive for t in items],
                       positive=verdict_text(positive), dataset=dataset, dataset_sha256=dataset_sha256,
                       judge_model=judge_model, method=method, seconds=seconds)


class LabelledItem(BaseModel):
    """One trial a person labelled, as a judge sees it: what was asked, what was answered, the truth."""

    trial_id: str
    question: str
    response: str
    label: ScoreValue
    """The people's majority label (the truth of the card)."""
    run_verdict: ScoreValue
    """The run's stored verdict on the field when the trial was labelled."""
    annotators: int


class LabelledSet(BaseModel):
    file: str
    sha256: str
    run_id: str
    field: str
    items: list[LabelledItem]
    judge_versions: dict[str, str] = {}
    """The run's judge versions (manifest), when the labels file sits in a run folder."""


def labels_file(source: str | Path, runs_root: str | Path | None = None) -> Path:
    """A ``labels.jsonl`` file, a run folder, or a run id (under ``runs_root``) -> the labels file."""
    path = Path(source)
    if path.is_file():
        return path
    if (path / MANIFEST).exists():
        return path / LABELS_DIR / LABELS
    if (path / LABELS).is_file():
        return path / LABELS
    return RunStore.open(runs_dir(runs_root), str(source)).path / LABELS_DIR / LABELS


def _run_folder(file: Path) -> Path | None:
    folder = file.parent.parent
    return folder if file.parent.name == LABELS_DIR and (folder / MANIFEST).exists() else None


def labelled_set(source: str | Path, field: str, *, runs_root: str | Path | None = None) -> LabelledSet:
    """The trials labelled on ``field`` with a majority label, each with its question, response and the run's
    verdict (from the label events' own record of what was shown, so a copied labels file is enough)."""
    file = labels_file(source, runs_root)
    if not file.is_file():
        raise KnowgapError(f"{file}: no labels yet; label some first (knowgap label RUN --annotator NAME)")
    events = read_events(file)
    current = current_labels(events, field)
    if not current:
        fields = sorted({e.field for e in events})
        raise KnowgapError(f"{file}: no labels on '{field}' (labelled fields: {', '.join(fields) or 'none'})")
    humans: dict[str, dict[str, ScoreValue]] = {}
    last: dict[str, LabelEvent] = {}
    for (trial_id, _f, annotator), event in current.items():
        humans.setdefault(annotator, {})[trial_id] = event.value
        last[trial_id] = event
    truth = majority_labels(humans)
    counts = Counter(t for labels in humans.values() for t in labels)
    items = []
    for trial_id in sorted(truth):
        ctx = last[trial_id].context
        users = [m.content for m in ctx.messages if m.role == "user"]
        items.append(LabelledItem(trial_id=trial_id, question=users[-1] if users else "", response=ctx.response,
                                  label=_value(truth[trial_id]), run_verdict=ctx.judge_verdicts.get(field),
                                  annotators=counts[trial_id]))
    run = _run_folder(file)
    versions = (RunStore(run).current_manifest().judges or {}) if run else {}
    return LabelledSet(file=str(file), sha256=sha256_files([file]), run_id=events[-1].run_id, field=field,
                       items=items, judge_versions=versions)


def _value(key: str) -> ScoreValue:
    value: ScoreValue = json.loads(key)
    return value


def card_from_labels(source: str | Path, field: str, *, positive: ScoreValue = True, judge: str | None = None,
                     version: str | None = None, judge_model: str | None = None, spec: str | None = None,
                     verdict: Callable[[LabelledItem], bool | None] | None = None, seconds: float | None = None,
                     runs_root: str | Path | None = None) -> ValidityCard:
    """A validity card from the labels people saved for ``field`` (source: a labels.jsonl file, a run folder or a
    run id). Truth: the people's majority per trial (ties left out); ``positive`` is the label value the judge's
    positive verdict means.

    Verdicts: ``verdict(item)`` when given (True/False, None = could not be parsed; pass ``judge``, ``version``
    and the ``seconds`` it took), else the judge spec version ``spec`` ("name@version") stored with the run's
    labels, else the run's own verdicts (judge ``run:FIELD``, version: the run's judge versions)."""
    data = labelled_set(source, field, runs_root=runs_root)
    if not data.items:
        raise KnowgapError(f"{data.file}: no trial labelled on '{field}' has a majority label (ties are left out)")
    pos = verdict_key(positive)
    truth = {i.trial_id: verdict_key(i.label) for i in data.items}
    if verdict is not None:
        said = {item.trial_id: verdict(item) for item in data.items}
        name, ver = judge or "custom", version or "unversioned"
    elif spec is not None:
        run = _run_folder(Path(data.file))
        if run is None:
            raise KnowgapError(f"{data.file}: judge spec verdicts live in a run's label store; give the run")
        stored = LabelStore(run).judge_verdicts(field)
        if spec not in stored:
            raise KnowgapError(f"run {run.name}: no verdicts of judge spec '{spec}' on '{field}' "
                               f"(run: knowgap label judges {run.name} --spec FILE; stored: "
                               f"{', '.join(stored) or 'none'})")
        said = is_positive(stored[spec], pos)
        spec_name, _, spec_version = spec.partition("@")
        name, ver = judge or spec_name, version or spec_version
    else:
        said = is_positive({i.trial_id: i.run_verdict for i in data.items}, pos)
        name = judge or f"run:{field}"
        ver = version or run_judge_version(data.judge_versions)
    people = max((i.annotators for i in data.items), default=0)
    method = (f"labels of run {data.run_id}: the people's majority on {len(data.items)} trials "
              f"(up to {people} annotator{'s' if people != 1 else ''} a trial, ties left out)")
    return judge_card(name, ver, said, truth, pos, dataset=data.file, dataset_sha256=data.sha256,
                      judge_model=judge_model, method=method, seconds=seconds)
