"""Judge spec versions: run several versions of a judge on the same labelled set and compare them.

A spec file (YAML or JSON) is one :class:`knowgap.judges.spec.JudgeSpec` that names its verdict field::

    name: abstain-judge
    version: "2"
    field: abstained
    kind: llm            # or lexicon: the built-in abstention phrase lexicon, no model
    prompt: |
      Does the answer decline to answer (say it does not know / the context does not say)?
      Question: {question}
      Answer: {response}
      Reply yes or no.
    answers: {"yes": true, "no": false}

The prompt sees a trial as ``{question}`` (its last user message), ``{system}`` (its system prompt) and
``{response}``. An llm judge's calls go through the model gateway (response cache, retries, time-out).
Verdicts land in ``labels/judges/NAME@VERSION.jsonl`` of the run, each with the spec's sha256, and the
agreement report then lists every version as a judge next to the run's own verdicts.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from knowgap.engine.records import TrialRecord
from knowgap.errors import KnowgapError
from knowgap.judges.abstention import is_abstention
from knowgap.judges.spec import JudgeSpec
from knowgap.labels.records import JudgeVerdict
from knowgap.labels.store import LabelStore, context_of


def spec_sha256(spec: JudgeSpec) -> str:
    canonical = json.dumps(spec.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def trial_fields(record: TrialRecord) -> dict[str, str]:
    """What a judge spec's prompt sees of a trial: question (last user message), system prompt, response."""
    ctx = context_of(record)
    user = [m.content for m in ctx.messages if m.role == "user"]
    system = [m.content for m in ctx.messages if m.role == "system"]
    return {"question": user[-1] if user else "", "system": system[0] if system else "", "response": ctx.response}


def run_spec(store: LabelStore, spec: JudgeSpec, *, model: str | None = None,
             trial_ids: list[str] | None = None) -> tuple[list[JudgeVerdict], Path]:
    """Run one spec version on the labelled trials of its field (or ``trial_ids``); store the verdicts."""
    if spec.field is None:
        raise KnowgapError(f"judge spec {spec.ref} names no field: add e.g. 'field: abstained'")
    field = spec.field
    records = store.records()
    if trial_ids is None:
        trial_ids = sorted({t for labels in store.human_labels(field).values() for t in labels})
    if not trial_ids:
        raise KnowgapError(f"run {store.run_id} has no labels on '{field}' yet: label some first "
                           f"(knowgap label {store.run_id} --annotator NAME --field {field})")
    missing = [t for t in trial_ids if t not in records]
    if missing:
        raise KnowgapError(f"run {store.run_id} has no trial {missing[0]}")
    sha = spec_sha256(spec)
    verdicts: list[JudgeVerdict] = []
    if spec.kind == "lexicon":
        for t in trial_ids:
            response = context_of(records[t]).response
            verdicts.append(JudgeVerdict(spec=spec.ref, spec_sha256=sha, field=field, trial_id=t,
                                         value=is_abstention(response), raw="", model="lexicon"))
    else:
        if not model:
            raise KnowgapError(f"judge spec {spec.ref} is an llm judge: give --judge-model SPEC")
        from knowgap.engine.gateway import ModelGateway

        with ModelGateway.open(run_id=f"label-{store.run_id}") as gateway:
            judge = gateway.text(model, "judge")
            for t in trial_ids:
                reply = judge(spec.request(trial_fields(records[t]), where=f"trial {t}"))
                verdicts.append(JudgeVerdict(spec=spec.ref, spec_sha256=sha, field=field, trial_id=t,
                                             value=spec.verdict(reply), raw=reply, model=model))
    return verdicts, store.write_verdicts(spec.ref, verdicts)
