"""Judge spec versions: run several versions of a judge on the same labelled set and compare them.

A spec file (YAML or JSON) is one JudgeSpec::

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

Verdicts land in ``labels/judges/NAME@VERSION.jsonl`` of the run, each with the spec's sha256, and the
agreement report then lists every version as a judge next to the run's own verdicts.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import yaml
from pydantic import ValidationError

from knowgap.engine.records import ScoreValue, TrialRecord
from knowgap.errors import InputError, KnowgapError
from knowgap.judges.abstention import is_abstention
from knowgap.labels.records import JudgeSpec, JudgeVerdict
from knowgap.labels.store import LabelStore, context_of
from knowgap.models.types import ChatRequest


def load_spec(path: str | Path) -> JudgeSpec:
    file = Path(path)
    if not file.exists():
        raise InputError(str(file), "judge spec file not found")
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8-sig"))
    except yaml.YAMLError as exc:
        raise InputError(str(file), f"not valid YAML/JSON ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(str(file), "expected a mapping with name, version, field, kind, prompt")
    try:
        spec = JudgeSpec.model_validate(data)
    except ValidationError as exc:
        raise InputError.from_validation(str(file), exc) from None
    if spec.kind == "llm" and "{response}" not in spec.prompt:
        raise InputError(str(file), "an llm judge prompt must contain {response}", field="prompt")
    if not spec.answers:
        raise InputError(str(file), "needs at least one answer keyword", field="answers")
    return spec


def spec_sha256(spec: JudgeSpec) -> str:
    canonical = json.dumps(spec.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def parse_reply(reply: str, answers: dict[str, ScoreValue]) -> ScoreValue:
    """The value of the answer keyword found first in the reply (case-insensitive), or None."""
    low = reply.lower()
    found = [(low.find(k.lower()), k) for k in answers if k.lower() in low]
    return answers[min(found)[1]] if found else None


def _prompt(spec: JudgeSpec, record: TrialRecord) -> str:
    ctx = context_of(record)
    user = [m.content for m in ctx.messages if m.role == "user"]
    system = [m.content for m in ctx.messages if m.role == "system"]
    return (spec.prompt.replace("{question}", user[-1] if user else "")
            .replace("{system}", system[0] if system else "").replace("{response}", ctx.response))


def run_spec(store: LabelStore, spec: JudgeSpec, *, model: str | None = None,
             trial_ids: list[str] | None = None) -> tuple[list[JudgeVerdict], Path]:
    """Run one spec version on the labelled trials of its field (or ``trial_ids``); store the verdicts."""
    records = store.records()
    if trial_ids is None:
        trial_ids = sorted({t for labels in store.human_labels(spec.field).values() for t in labels})
    if not trial_ids:
        raise KnowgapError(f"run {store.run_id} has no labels on '{spec.field}' yet: label some first "
                           f"(knowgap label {store.run_id} --annotator NAME --field {spec.field})")
    missing = [t for t in trial_ids if t not in records]
    if missing:
        raise KnowgapError(f"run {store.run_id} has no trial {missing[0]}")
    sha = spec_sha256(spec)
    verdicts: list[JudgeVerdict] = []
    if spec.kind == "lexicon":
        for t in trial_ids:
            response = context_of(records[t]).response
            verdicts.append(JudgeVerdict(spec=spec.ref, spec_sha256=sha, field=spec.field, trial_id=t,
                                         value=is_abstention(response), raw="", model="lexicon"))
    else:
        if not model:
            raise KnowgapError(f"judge spec {spec.ref} is an llm judge: give --judge-model SPEC")
        from knowgap.models.registry import create_model

        async def go() -> None:
            client = create_model(model)
            try:
                for t in trial_ids:
                    request = ChatRequest.simple(_prompt(spec, records[t]), max_tokens=spec.max_tokens,
                                                 temperature=0.0, seed=0)
                    reply = (await client.chat(request)).text
                    verdicts.append(JudgeVerdict(spec=spec.ref, spec_sha256=sha, field=spec.field, trial_id=t,
                                                 value=parse_reply(reply, spec.answers), raw=reply, model=model))
            finally:
                await client.aclose()

        asyncio.run(go())
    return verdicts, store.write_verdicts(spec.ref, verdicts)
