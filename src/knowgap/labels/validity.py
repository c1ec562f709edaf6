"""A user's own labels as a labelled set for a judge's validity card.

The labels a person saved with ``knowgap label`` (or the web app) for one judge field become the truth (the
people's majority per trial, ties left out) against which a judge's verdicts are measured, and
:func:`knowgap.judges.cards.binary_card` turns the two into a :class:`~knowgap.judges.cards.ValidityCard`:
the dataset is the labels file, with its sha256 and n, and the card names the judge version whose verdicts
were compared. A verdict that could not be parsed (None) counts as wrong, as on every card.

The verdicts are, in order of preference: a function the caller passes (run on each labelled response), a
judge spec version run on the labelled set (``spec="name@version"``, stored under the run's ``labels/judges/``),
else the run's own stored verdict as the annotator's event recorded it. The run's own verdicts are named after
the catalogue judge that gave them (the judge the run's manifest records for its metrics whose catalogue entry
declares the field, e.g. ``abstention`` for ``abstained``), with the version the run recorded, so the card is the
one :func:`knowgap.judges.cards.find_card` looks up for that judge version in ``knowgap judges`` and reports.

:func:`judge_card_from_labels` is ``knowgap judge validate NAME --labels FILE``: the card of judge NAME's current
version from the run's own verdicts, refused when the labels are on a field that is not NAME's verdict or when
the run's verdicts came from another judge or another version.

Every such card says what the card rule asks (:mod:`knowgap.judges.cards`): the replies are real ones, each written
by the model its run's trial called as the target (from the run's trials; not recorded when the run is not found),
in the language of its case (the case's ``lang``, else its question's), labelled by the people named in the file
through ``knowgap label``, which never shows a judge's verdict before a label is saved.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path

from pydantic import BaseModel

from knowgap.engine.records import Manifest, MetricJudge, ScoreValue
from knowgap.engine.store import MANIFEST, RunStore
from knowgap.errors import KnowgapError
from knowgap.judges.cards import Labelling, ValidityCard, binary_card, sha256_files
from knowgap.labels.records import LabelEvent, verdict_key, verdict_text
from knowgap.labels.store import LABELS, LABELS_DIR, LabelStore, current_labels, read_events
from knowgap.paths import runs_dir
from knowgap.suites.judge_registry import get_judge, judges_deciding


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
               method: str = "", seconds: float | None = None, languages: Mapping[str, str] | None = None,
               writers: Mapping[str, str] | None = None, labelling: Labelling | None = None,
               claim: str | None = None) -> ValidityCard:
    """The card of one judge (``said``: trial_id -> positive verdict?) against ``truth`` (trial_id -> label key)
    on every truth item; an item the judge gave no verdict on (None or absent) counts as a wrong verdict. The card
    rule's fields from ``languages`` and ``writers`` (trial_id -> language, and -> the model that wrote the reply;
    each left out of the card unless it names every item), ``labelling`` and ``claim``."""
    items = sorted(truth)
    return binary_card(judge, version, [said.get(t) for t in items], [truth[t] == positive for t in items],
                       positive=verdict_text(positive), dataset=dataset, dataset_sha256=dataset_sha256,
                       judge_model=judge_model, method=method, seconds=seconds, claim=claim, labelling=labelling,
                       item_languages=[languages[t] for t in items]
                       if languages is not None and all(t in languages for t in items) else None,
                       writers=[writers[t] for t in items]
                       if writers is not None and all(t in writers for t in items) else None,
                       replies_how="replies of the run's target, labelled with knowgap label")


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
    lang: str | None = None
    """The language of the trial's case (its ``lang``, else its question's); None when the run is not found."""
    model: str | None = None
    """The model that wrote the response (the trial's target call); None when the run is not found."""


class LabelledSet(BaseModel):
    file: str
    sha256: str
    run_id: str
    field: str
    items: list[LabelledItem]
    judge_versions: dict[str, str] = {}
    """The run's judge versions (manifest), when the run is found (see :func:`run_of_labels`)."""
    run_judge: MetricJudge | None = None
    """The catalogue judge whose verdicts the run stored under ``field`` (:func:`judge_of_field`), when the run is
    found and names one."""
    annotator_names: list[str] = []
    """The people whose labels make the truth."""


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


def run_of_labels(file: Path, run_id: str, runs_root: str | Path | None = None) -> Path | None:
    """The run folder the labels in ``file`` belong to: the one it sits in (``RUN/labels/labels.jsonl``), else run
    ``run_id`` under ``runs_root`` (default: KNOWGAP_RUNS or ./runs) for a copy kept elsewhere; None when neither."""
    if (folder := _run_folder(file)) is not None:
        return folder
    candidate = runs_dir(runs_root) / run_id
    return candidate if run_id and (candidate / MANIFEST).exists() else None


def judge_of_field(manifest: Manifest, field: str) -> MetricJudge | None:
    """The judge whose verdicts a run stored under the trial score ``field``: among the judges its manifest records
    for its metrics, the one whose catalogue entry declares ``field`` (e.g. ``abstention`` or ``abstention-llm``
    for ``abstained``). None when the run recorded none (a run from before knowgap named judges, a field no
    catalogue judge declares) or several."""
    deciders = set(judges_deciding(field))
    found = {(j.judge, j.version, j.judge_model): j for j in (manifest.metric_judges or {}).values()
             if j.judge in deciders}
    if len(found) != 1:
        return None
    (judge,) = found.values()
    return judge.model_copy(update={"counts": None})


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
    run = run_of_labels(file, events[-1].run_id, runs_root)
    manifest = RunStore(run).current_manifest() if run else None
    if run is not None and manifest is not None:
        _who_and_language(run, manifest, items, {t: e.context.case_id for t, e in last.items()})
    return LabelledSet(file=str(file), sha256=sha256_files([file]), run_id=events[-1].run_id, field=field,
                       items=items, judge_versions=(manifest.judges or {}) if manifest else {},
                       run_judge=judge_of_field(manifest, field) if manifest else None,
                       annotator_names=sorted(humans))


def _who_and_language(run: Path, manifest: Manifest, items: list[LabelledItem], case_of: Mapping[str, str]) -> None:
    """Set each item's ``model`` (the target model its trial called) and ``lang`` (its case's language, else its
    question's) from the run's trials and suite."""
    from knowgap.report.data import load_suite
    from knowgap.report.run_languages import case_language
    from knowgap.text import detect_lang

    wanted = {i.trial_id for i in items}
    models: dict[str, str] = {}
    for record in RunStore(run).snapshot():
        if record.trial_id in wanted:
            called = [c.model for c in record.calls if c.role == "target"]
            models[record.trial_id] = called[0] if called else manifest.config.models.get("target", "")
    suite = load_suite(manifest)
    try:
        case_langs = {c.id: case_language(c) for c in suite.cases()} if suite is not None else {}
    except Exception:  # noqa: BLE001 - a dataset that no longer loads: each question's own language instead
        case_langs = {}
    for item in items:
        item.model = models.get(item.trial_id) or None
        item.lang = case_langs.get(case_of.get(item.trial_id, "")) or (detect_lang(item.question)
                                                                        if item.question.strip() else None)


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
    labels, else the run's own verdicts: named after the catalogue judge that gave them, with the version and
    judge model the run recorded (:func:`judge_of_field`), or ``run:FIELD`` with the run's judge versions when
    the run is not found or names no such judge."""
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
        own = data.run_judge if judge is None else None
        name = judge or (own.judge if own else f"run:{field}")
        ver = version or (own.version if own else run_judge_version(data.judge_versions))
        judge_model = judge_model or (own.judge_model if own else None)
    people = max((i.annotators for i in data.items), default=0)
    method = (f"labels of run {data.run_id}: the people's majority on {len(data.items)} trials "
              f"(up to {people} annotator{'s' if people != 1 else ''} a trial, ties left out)")
    names = ", ".join(data.annotator_names)
    labelling = Labelling(rule=f"knowgap label on '{field}' (the annotators' own reading; no written rule recorded)",
                          by=f"{len(data.annotator_names)} {'people' if len(data.annotator_names) != 1 else 'person'}"
                             f" ({names}), each alone, the majority per trial", before_judge=True)
    claim = _claim(name, field)
    return judge_card(name, ver, said, truth, pos, dataset=data.file, dataset_sha256=data.sha256,
                      judge_model=judge_model, method=method, seconds=seconds, labelling=labelling, claim=claim,
                      languages={i.trial_id: i.lang for i in data.items if i.lang},
                      writers={i.trial_id: i.model for i in data.items if i.model})


def _claim(judge: str, field: str) -> str:
    """What the card validates: the catalogue judge's decision, on the run's ``field``."""
    try:
        decides = get_judge(judge).decides
    except KnowgapError:
        return f"the run's verdicts on '{field}'"
    return f"{decides} (the run's verdicts on '{field}')"


def judge_card_from_labels(name: str, source: str | Path, *, field: str | None = None,
                           runs_root: str | Path | None = None) -> ValidityCard:
    """``knowgap judge validate NAME --labels FILE``: the card of catalogue judge ``name`` at its current version,
    from the people's labels in ``source`` (a labels.jsonl, a run folder or a run id) against the run's own
    verdicts.

    The labels must be on a trial score that holds this judge's verdict (its ``fields``; ``field`` picks one when
    the file labels several), the run must be found (the file in its run folder, or run RUN_ID under
    ``runs_root``) and its manifest must record this judge, at its current version, for its metrics: a card
    applies to one judge version, and the run's verdicts are the judge's only when that judge gave them. Anything
    else is one :class:`KnowgapError` naming the file and the field."""
    judge = get_judge(name)
    if Path(source).suffix == ".jsonl" and not Path(source).is_file():
        raise KnowgapError(f"{source}: no such labels file (knowgap label writes RUN/labels/labels.jsonl)")
    file = labels_file(source, runs_root)
    if not file.is_file():
        raise KnowgapError(f"{file}: no labels yet; label some first (knowgap label RUN --annotator NAME)")
    events = read_events(file)
    labelled = sorted({f for (_t, f, _a) in current_labels(events)})
    field = _judge_field(judge.name, judge.fields, file, labelled, field)
    run = run_of_labels(file, events[-1].run_id, runs_root)
    if run is None:
        raise KnowgapError(f"{file}: run {events[-1].run_id} is not found (the file is not in its run folder "
                           f"RUN/labels/, and {runs_dir(runs_root) / events[-1].run_id} has no manifest): its "
                           "manifest says which judge version gave the verdicts; set KNOWGAP_RUNS to the folder "
                           "holding the run")
    manifest = RunStore(run).current_manifest()
    used = {(j.version, j.judge_model) for j in (manifest.metric_judges or {}).values() if j.judge == name}
    if not used:
        other = judge_of_field(manifest, field)
        why = (f"were given by judge '{other.judge}' ({other.version}): knowgap judge validate {other.judge} "
               f"--labels {file}" if other else "do not name the judge that gave them (a run recorded before "
               "knowgap named each metric's judge)")
        raise KnowgapError(f"{file}: field '{field}': run {manifest.run_id}'s verdicts {why}")
    current = judge.version()
    stale = sorted(v for v, _m in used if v != current)
    if stale:
        raise KnowgapError(f"{file}: field '{field}': run {manifest.run_id} used judge '{name}' version "
                           f"{', '.join(stale)}, not the current {current}; a card applies to one judge version: "
                           "label a run made with the current version")
    models = sorted({m or "" for _v, m in used})
    if len(models) > 1:
        raise KnowgapError(f"{file}: field '{field}': run {manifest.run_id} used judge '{name}' with several judge "
                           f"models ({', '.join(models)}); a card is for one")
    return card_from_labels(file, field, judge=name, version=current, judge_model=models[0] or None,
                            runs_root=runs_root)


def _judge_field(name: str, fields: tuple[str, ...], file: Path, labelled: list[str], field: str | None) -> str:
    """The labelled field that holds judge ``name``'s verdict (``field`` when given); else a clear refusal."""
    decides = f"its verdict is the trial score {' or '.join(repr(f) for f in fields)}" if fields else \
        "no trial score holds its verdict, so labels cannot measure it (knowgap judge validate " + name + \
        " measures it on its labelled set)"
    if field is not None and field not in fields:
        others = judges_deciding(field)
        hint = f"; labels on '{field}' measure {', '.join(others)}" if others else ""
        raise KnowgapError(f"{file}: field '{field}' is not judge '{name}''s decision ({decides}){hint}")
    if field is not None:
        if field not in labelled:
            raise KnowgapError(f"{file}: no labels on '{field}' (labelled fields: {', '.join(labelled) or 'none'})")
        return field
    mine = [f for f in labelled if f in fields]
    if len(mine) == 1:
        return mine[0]
    if len(mine) > 1:
        raise KnowgapError(f"{file}: labels on {', '.join(mine)} all measure judge '{name}': say which with --field")
    others = sorted({j for f in labelled for j in judges_deciding(f)})
    hint = f"; these labels measure {', '.join(others)}" if others else ""
    raise KnowgapError(f"{file}: field {', '.join(repr(f) for f in labelled) or '(none labelled)'} is not judge "
                       f"'{name}''s decision ({decides}){hint}")
