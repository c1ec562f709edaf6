"""Labelling in the terminal: one sample at a time, each label saved the moment it is given, resumable
(a new session starts at the first trial of the sample this annotator has not labelled yet).

Keys: for a yes/no field ``y`` (true) and ``n`` (false); for a rubric dimension a score ``1``-``5`` on each of the
rubric's dimensions in turn; otherwise the number of a category. ``s`` skips,
``b`` goes back to the previous trial (re-labelling it is an edit, its history kept), ``q`` quits.
Each trial shows its prompt, the response and the reference the judges used (expected answer, missing
information, hidden fields...: see reference.py). The judges' verdicts are never shown before the label is
given: ``--show-judge`` shows them once it is saved, so they cannot anchor the annotator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, Literal, NamedTuple

from knowgap.engine.records import ScoreValue, TrialRecord
from knowgap.errors import KnowgapError
from knowgap.labels.records import Sample, verdict_key, verdict_text
from knowgap.labels.reference import References
from knowgap.labels.rubric import POINTS, rubric_of_field
from knowgap.labels.store import LabelStore, context_of


def pick_sample(store: LabelStore, field: str | None, name: str | None) -> Sample:
    if name:
        return store.read_sample(name)
    samples = [s for s in store.samples() if field is None or s.field == field]
    if not samples:
        what = f" on '{field}'" if field else ""
        raise KnowgapError(f"run {store.run_id} has no sample{what} to label; draw one first: "
                           f"knowgap label sample {store.run_id} --judge-field {field or 'FIELD'} --n 50 --seed 0")
    return samples[-1]


def choices(records: dict[str, TrialRecord], field: str) -> list[tuple[str, ScoreValue]]:
    """(key to type, value): y/n for a boolean field, else 1..k over the values the judge gave."""
    values = {verdict_key(r.scores[field]): r.scores[field] for r in records.values()
              if r.status == "ok" and r.scores.get(field) is not None}
    if set(values) <= {"true", "false"}:
        return [("y", True), ("n", False)]
    return [(str(i), values[k]) for i, k in enumerate(sorted(values), start=1)]


def show(record: TrialRecord, position: str, reference: dict[str, str], echo: Callable[[str], None]) -> None:
    """The trial as the annotator sees it before labelling: prompt, response, the judges' reference."""
    ctx = context_of(record)
    echo("")
    echo(f"=== {position}  trial {record.trial_id}  ({record.config_id}) ===")
    for m in ctx.messages:
        echo(f"--- {m.role} ---")
        echo(m.content)
    echo("--- response ---")
    echo(ctx.response)
    for heading, text in reference.items():
        echo(f"--- reference: {heading} ---")
        echo(text)


def show_verdicts(record: TrialRecord, echo: Callable[[str], None]) -> None:
    """The judges' verdicts, shown only after the label is saved."""
    echo(f"--- judge verdicts --- {', '.join(f'{k}={verdict_key(v)}' for k, v in record.scores.items())}")


def _prompt(field: str, options: list[tuple[str, ScoreValue]]) -> str:
    return (f"{field}? " + " / ".join(f"[{k}] {verdict_text(verdict_key(v))}" for k, v in options)
            + " / [s]kip / [b]ack / [q]uit: ")


def label_session(store: LabelStore, annotator: str, *, field: str | None = None, sample_name: str | None = None,
                  stdin: IO[str], echo: Callable[[str], None], show_judge: bool = False,
                  redo: bool = False) -> int:
    """Label the sample's pending trials; returns how many labels were saved. When the sample's field is a
    dimension of a rubric (e.g. clarify's ``rubric_gap_identification``), each trial is scored 1-5 on every
    dimension of that rubric in turn."""
    sample = pick_sample(store, field, sample_name)
    rubric = rubric_of_field(store.run_store(), sample.field)
    fields = list(rubric.weights) if rubric else [sample.field]
    records = store.records()
    current = store.current()
    done = {t for t in sample.trial_ids if all((t, f, annotator) in current for f in fields)}
    todo = [t for t in sample.trial_ids if redo or t not in done]
    references = References(store.run_store())
    scale: list[tuple[str, ScoreValue]] = [(str(p), p) for p in POINTS]
    options = {f: scale if rubric else choices(records, f) for f in fields}
    if rubric:
        echo(f"rubric '{rubric.name}': score each dimension 1 (poor) to 5 (excellent): {', '.join(fields)}")
    echo(f"sample '{sample.name}' of run {store.run_id}: {len(sample.trial_ids)} trials, "
         f"{len(sample.trial_ids) - len(todo)} already labelled by {annotator}, {len(todo)} to go")
    saved, i = 0, 0
    while 0 <= i < len(todo):
        record = records[todo[i]]
        reference = references.of(record)
        show(record, f"[{i + 1}/{len(todo)}]", reference, echo)
        step = _label_trial(store, record, fields, options, annotator, sample.name, reference, stdin, echo)
        saved += step.saved
        if step.move == "quit":
            echo(f"stopped; {saved} labels saved this session")
            return saved
        if step.move == "eof":
            echo("end of input: stopping (labels so far are saved)")
            return saved
        if step.move == "done" and show_judge:
            show_verdicts(record, echo)
        i = max(0, i - 1) if step.move == "back" else i + 1
    echo(f"done: {saved} labels saved this session")
    return saved


class _Step(NamedTuple):
    move: Literal["done", "skip", "back", "quit", "eof"]
    saved: int


def _label_trial(store: LabelStore, record: TrialRecord, fields: list[str],
                 options: dict[str, list[tuple[str, ScoreValue]]], annotator: str, sample: str,
                 reference: dict[str, str], stdin: IO[str], echo: Callable[[str], None]) -> _Step:
    """Ask each field of one trial in turn; every answer is saved at once."""
    saved = 0
    for field in fields:
        keys = dict(options[field])
        while True:
            echo(_prompt(field, options[field]))
            line = stdin.readline()
            if not line:
                return _Step("eof", saved)
            answer = line.strip().lower()
            if answer in keys:
                event = store.add(record, field, annotator, keys[answer], source="terminal", sample=sample,
                                  reference=reference)
                saved += 1
                edit = f" (edit, revision {event.revision})" if event.revision > 1 else ""
                echo(f"saved {field}={verdict_key(event.value)}{edit}")
                break
            moves: dict[str, Literal["skip", "back", "quit"]] = {"s": "skip", "b": "back", "q": "quit"}
            if answer in moves:
                return _Step(moves[answer], saved)
            echo(f"unknown answer '{answer}'")
    return _Step("done", saved)
