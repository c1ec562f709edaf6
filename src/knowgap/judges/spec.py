"""LLM-as-judge specs in YAML: a name, a versioned prompt, allowed outcomes, the fields the judge sees, and a
skip rule. A spec renders one record into a :class:`ChatRequest`; the judge's answer is parsed tolerantly into
one of the allowed outcomes, and anything else is a :class:`ParseFailure` (counted, never defaulted).

```yaml
name: abstention
version: abstention_v1
outcomes: ["yes", "no"]
fields: [question, response]
skip_if: {}                      # e.g. {abstained: true} for factuality
prompt: |
  ... {question} ... {response} ...
```
"""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field, ValidationError, model_validator

from knowgap.errors import InputError
from knowgap.models.structured import ParseFailure, extract_json
from knowgap.models.types import ChatRequest

BUILTIN_DIR = Path(str(files("knowgap.judges") / "data"))


class JudgeSpec(BaseModel):
    name: str
    version: str = Field(description="The prompt's identifier; change it whenever the prompt changes.")
    outcomes: list[str] = Field(min_length=2)
    fields: list[str] = Field(min_length=1, description="Record fields the judge sees (placeholders in the prompt).")
    prompt: str
    system: str = "You are a careful evaluator. Follow the criteria exactly."
    skip_if: dict[str, Any] = Field(default_factory=dict,
                                    description="Skip a record whose fields equal all of these values.")
    max_tokens: int = 256

    @model_validator(mode="after")
    def _placeholders_are_fields(self) -> JudgeSpec:
        used = set(re.findall(r"\{(\w+)\}", self.prompt))
        unknown = used - set(self.fields)
        if unknown:
            raise ValueError(f"prompt uses {sorted(unknown)} which are not in fields {self.fields}")
        return self

    def should_skip(self, record: dict[str, Any]) -> bool:
        return bool(self.skip_if) and all(record.get(k) == v for k, v in self.skip_if.items())

    def request(self, record: dict[str, Any], *, where: str = "record") -> ChatRequest:
        missing = [f for f in self.fields if f not in record]
        if missing:
            raise InputError(where, f"judge '{self.name}' needs this field", field=missing[0])
        values = {f: _as_text(record[f]) for f in self.fields}
        prompt = re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), self.prompt)
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


def _as_text(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(f"[{i}] {_as_text(v)}" for i, v in enumerate(value))
    if isinstance(value, dict):
        return "; ".join(f"{k}: {v}" for k, v in value.items())
    return str(value)


def load_spec(name_or_path: str) -> JudgeSpec:
    """A built-in spec by name (``abstention``, ``factuality``) or a YAML file."""
    path = Path(name_or_path)
    if not path.exists():
        path = BUILTIN_DIR / f"{name_or_path}.yaml"
    if not path.exists():
        raise InputError(name_or_path, "no such judge spec file or built-in spec "
                         f"(built in: {', '.join(sorted(p.stem for p in BUILTIN_DIR.glob('*.yaml')))})")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
    except yaml.YAMLError as exc:
        raise InputError(str(path), f"not valid YAML ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(str(path), "expected a mapping with name, version, outcomes, fields, prompt")
    try:
        return JudgeSpec.model_validate(data)
    except ValidationError as exc:
        raise InputError.from_validation(str(path), exc) from None
