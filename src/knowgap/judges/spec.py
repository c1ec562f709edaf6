"""Judge specs: one versioned record (YAML or JSON) for every judge knowgap runs from a prompt: the suites' LLM
judges (the built-in ``judges/data/*.yaml``) and the judge spec versions the label tools compare
(``knowgap label judges``).

```yaml
name: abstention
version: abstention_v1                  # the judge's identifier: change it whenever the prompt changes
kind: llm                               # or lexicon: the built-in zh + en abstention phrase lexicon, no model
fields: [question, response]            # record fields the judge sees (default: the prompt's placeholders)
prompt: |                               # an llm judge's prompt must contain {response}
  ... {question} ... {response} ...
system: You are a careful evaluator.    # optional system message (default: none)
outcomes: ["yes", "no"]                 # the allowed outcomes, each standing for itself; or instead:
answers: {"yes": true, "no": false}     # outcome -> verdict value (default when neither is given)
skip_if: {abstained: true}              # skip a record whose fields equal all of these values
field: abstained                        # the verdict field a label-tool judge is about
max_tokens: 16
```

A spec renders one record into a :class:`ChatRequest` (``request``). ``parse`` reads the judge's answer
strictly: a JSON ``{"outcome": ...}`` or the one allowed outcome named as a word; anything else is a
:class:`ParseFailure` (counted, never defaulted). ``verdict`` reads it as the label tools do: the value of the
answer keyword found first in the reply, or None.
"""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from knowgap.engine.records import ScoreValue
from knowgap.errors import InputError
from knowgap.models.structured import ParseFailure, extract_json
from knowgap.models.types import ChatRequest
from knowgap.yamlfile import read_yaml

BUILTIN_DIR = Path(str(files("knowgap.judges") / "data"))
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


class JudgeSpec(BaseModel):
    """A versioned judge. ``llm`` asks a model with ``prompt``; ``lexicon`` uses the built-in abstention phrase
    lexicon (no model, label tools only)."""

    name: str
    version: str = Field(description="The judge's identifier; change it whenever the prompt changes.")
    kind: Literal["llm", "lexicon"] = "llm"
    field: str | None = Field(default=None, description="The verdict field a label-tool judge is about.")
    fields: list[str] = Field(default_factory=list,
                              description="Record fields the judge sees (default: the prompt's placeholders).")
    prompt: str = Field(default="", validate_default=True)
    system: str | None = None
    answers: dict[str, ScoreValue] = Field(default_factory=dict,
                                           description="Outcome -> verdict value (default yes/no -> true/false).")
    outcomes: list[str] = Field(default_factory=list, description="The allowed outcomes (the keys of answers).")
    skip_if: dict[str, Any] = Field(default_factory=dict,
                                    description="Skip a record whose fields equal all of these values.")
    max_tokens: int = 16

    @field_validator("prompt")
    @classmethod
    def _llm_prompt_sees_the_response(cls, prompt: str, info: ValidationInfo) -> str:
        if info.data.get("kind", "llm") == "llm" and "{response}" not in prompt:
            raise ValueError("an llm judge prompt must contain {response}")
        return prompt

    @model_validator(mode="before")
    @classmethod
    def _answers_and_outcomes(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        outcomes, answers = data.get("outcomes"), data.get("answers")
        if outcomes is not None and (not isinstance(outcomes, list) or len(outcomes) < 2
                                     or not all(isinstance(o, str) for o in outcomes)):
            raise ValueError("outcomes must list at least 2 outcomes, each a string (quote yes and no in YAML)")
        if answers is None:
            answers = {o: o for o in outcomes} if outcomes is not None else {"yes": True, "no": False}
        elif outcomes is not None and isinstance(answers, dict) and list(answers) != outcomes:
            raise ValueError(f"answers {list(answers)} and outcomes {outcomes} name different outcomes")
        if isinstance(answers, dict):
            if not answers:
                raise ValueError("answers needs at least one answer keyword")
            outcomes = list(answers)
        fields = data.get("fields")
        if fields is None:
            fields = list(dict.fromkeys(_PLACEHOLDER.findall(str(data.get("prompt", "")))))
        return {**data, "answers": answers, "outcomes": outcomes, "fields": fields}

    @model_validator(mode="after")
    def _placeholders_are_fields(self) -> JudgeSpec:
        unknown = set(_PLACEHOLDER.findall(self.prompt)) - set(self.fields)
        if unknown:
            raise ValueError(f"prompt uses {sorted(unknown)} which are not in fields {self.fields}")
        return self

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"

    def should_skip(self, record: dict[str, Any]) -> bool:
        return bool(self.skip_if) and all(record.get(k) == v for k, v in self.skip_if.items())

    def request(self, record: dict[str, Any], *, where: str = "record") -> ChatRequest:
        missing = [f for f in self.fields if f not in record]
        if missing:
            raise InputError(where, f"judge '{self.name}' needs this field", field=missing[0])
        values = {f: _as_text(record[f]) for f in self.fields}
        prompt = _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), self.prompt)
        return ChatRequest.simple(prompt, system=self.system, max_tokens=self.max_tokens, temperature=0.0, seed=0)

    def parse(self, text: str) -> str | ParseFailure:
        """The outcome in the judge's answer: a JSON ``{"outcome": ...}`` or, failing that, the one allowed
        outcome that appears as a word in the answer."""
        data = extract_json(text)
        if not isinstance(data, ParseFailure):
            value = str(data.get("outcome", data.get("label", ""))).strip().lower()
            for outcome in self.outcomes:
                if value == outcome.lower():
                    return outcome
        found = [o for o in self.outcomes if re.search(rf"(?<!\w){re.escape(o)}(?!\w)", text, re.IGNORECASE)]
        if len(found) == 1:
            return found[0]
        return ParseFailure(reason=f"no single outcome of {self.outcomes} in the judge's answer", text=text)

    def verdict(self, reply: str) -> ScoreValue:
        """The value of the answer keyword found first in the reply (case-insensitive), or None."""
        low = reply.lower()
        found = [(low.find(k.lower()), k) for k in self.answers if k.lower() in low]
        return self.answers[min(found)[1]] if found else None


def _as_text(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(f"[{i}] {_as_text(v)}" for i, v in enumerate(value))
    if isinstance(value, dict):
        return "; ".join(f"{k}: {v}" for k, v in value.items())
    return str(value)


def builtin_specs() -> list[str]:
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.yaml"))


def load_spec(name_or_path: str | Path, *, require_field: bool = False) -> JudgeSpec:
    """A built-in spec by name (``abstention``, ``factuality``, ``groundedness``) or a YAML / JSON file.
    ``require_field``: the spec must name the verdict field it judges (the label tools' judges)."""
    path = Path(name_or_path)
    if not path.exists():
        path = BUILTIN_DIR / f"{name_or_path}.yaml"
    if not path.exists():
        raise InputError(str(name_or_path), "no such judge spec file or built-in spec "
                         f"(built in: {', '.join(builtin_specs())})")
    document = read_yaml(path, what="judge spec file")
    spec = document.validate(JudgeSpec, expected="a mapping with name, version, kind, prompt, answers")
    if require_field and spec.field is None:
        raise document.error("missing: the judge field its verdicts are about (e.g. field: abstained)", ("field",))
    return spec
