"""Scenario and policy files of the ``partial`` suite (pydantic), their loaders, and the checks of a policy
against a scenario's ground truth.

A scenario holds the full ground truth (records, rows, documents), where each record type comes from
(endpoint, timestamp, staleness), fixed summaries, the tasks with their oracles, and optionally the
policies of its roles. A policy says what one role may see. The seed's own JSON (``scenario_001`` with
``ground_truth``; ``policy_agent_tier1`` with ``role``, ``allowed_evidence``, ``masking_rules``, with its
``//`` comments) loads as written.
"""

from __future__ import annotations

import json
import re
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from knowgap.errors import InputError
from knowgap.injection.plan import Injection
from knowgap.strictjsonl import CaseFileCheck, Problem, ProblemsError, read_strict, validation_problems
from knowgap.suites.partial.transforms import as_number

Family = Literal["customer_support", "due_diligence", "compliance_audit", "security_incident"]
FAMILIES: tuple[str, ...] = ("customer_support", "due_diligence", "compliance_audit", "security_incident")
Dimension = Literal["breadth", "depth", "timeliness", "cost"]
DIMENSIONS: tuple[str, ...] = ("breadth", "depth", "timeliness", "cost")
TaskType = Literal["classification", "root_cause", "next_action", "gap_identification", "query_planning"]
TASK_TYPES: tuple[str, ...] = ("classification", "root_cause", "next_action", "gap_identification",
                               "query_planning")
Op = Literal["mask_middle", "keep_last", "bucket", "summarise", "redact", "drop", "show_full"]
DATA = Path(str(files("knowgap.suites.partial") / "data" / "scenarios.jsonl"))
"""The shipped dataset (written by :mod:`.generate`)."""

_OP_ALIASES = {"summarize": "summarise", "summary": "summarise", "mask": "mask_middle", "show": "show_full",
               "full": "show_full", "hide": "drop"}


# ---------------------------------------------------------------------------------------------- policy
class Transform(BaseModel):
    """One masking rule. String forms: ``mask_middle``, ``keep_last:4``, ``bucket:100,1000:元``,
    ``summarise``, ``redact``, ``drop``, ``show_full``."""

    model_config = ConfigDict(extra="forbid")

    op: Op
    n: int = Field(4, ge=1, description="keep_last: characters kept at the end")
    edges: list[float] = Field(default_factory=list, description="bucket: ascending range edges")
    unit: str = ""

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        if isinstance(data, str):
            head, *rest = data.strip().split(":")
            op = _OP_ALIASES.get(head.strip().lower(), head.strip().lower())
            out: dict[str, Any] = {"op": op}
            if op == "keep_last" and rest:
                out["n"] = _number(rest[0])
            elif op == "keep_last" and re.fullmatch(r"keep_last_?\d+", head):
                out["n"] = _number(re.sub(r"\D", "", head))
            if op == "bucket":
                out["edges"] = [_number(e) for e in (rest[0].split(",") if rest else []) if e.strip()]
                out["unit"] = rest[1] if len(rest) > 1 else ""
            if re.fullmatch(r"keep_last_?\d+", head):
                out["op"] = "keep_last"
            return out
        if isinstance(data, dict) and isinstance(data.get("op"), str):
            data = dict(data)
            data["op"] = _OP_ALIASES.get(data["op"].lower(), data["op"].lower())
        return data

    @model_validator(mode="after")
    def _check(self) -> Transform:
        if self.op == "bucket":
            if not self.edges:
                raise ValueError("bucket needs at least one edge, e.g. {\"op\": \"bucket\", \"edges\": [100]}")
            if any(b <= a for a, b in zip(self.edges, self.edges[1:], strict=False)):
                raise ValueError(f"bucket edges must be strictly ascending, got {self.edges}")
        return self


def _number(text: str) -> Any:
    """A number written inside a rule's string form (``keep_last:4``); the text itself when it is none (the
    model then says which field wants a number)."""
    for kind in (int, float):
        try:
            return kind(text.strip())
        except ValueError:
            pass
    return text


class RowFilter(BaseModel):
    """Row-level access: keep rows whose ``field`` is (not) in a list, and/or only the latest ``limit``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    field: str | None = None
    in_: list[Any] | None = Field(None, alias="in")
    not_in: list[Any] | None = None
    limit: int | None = Field(None, ge=0)
    order_by: str | None = None
    descending: bool = True

    @model_validator(mode="after")
    def _check(self) -> RowFilter:
        if (self.in_ is not None or self.not_in is not None) and not self.field:
            raise ValueError("'in' / 'not_in' need 'field'")
        if self.field and self.in_ is None and self.not_in is None:
            raise ValueError("'field' needs 'in' or 'not_in'")
        return self


class RecordRule(BaseModel):
    """What a role may see of one record type: columns (``"*"`` = all) and rows."""

    model_config = ConfigDict(extra="forbid")

    fields: list[str] | Literal["*"] = "*"
    rows: RowFilter | None = None


class Policy(BaseModel):
    """One role's access: allowed evidence per record type (or per endpoint), and masking rules per
    ``record.field`` (or per record type for a text document)."""

    model_config = ConfigDict(extra="forbid")

    role: str = Field(min_length=1)
    description: str = ""
    allowed_evidence: dict[str, RecordRule]
    masking_rules: dict[str, Transform] = Field(default_factory=dict)
    disclose_schema: bool = False
    """When true the view also lists the names of withheld fields (never their values)."""

    @field_validator("allowed_evidence", mode="before",
                     json_schema_input_type=dict[str, RecordRule | list[str] | Literal[True, "*"]])
    @classmethod
    def _rules(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out: dict[str, Any] = {}
        for key, rule in value.items():
            if rule is True or rule == "*":
                out[key] = {"fields": "*"}
            elif isinstance(rule, list):
                out[key] = {"fields": rule}
            else:
                out[key] = rule
        return out

    @field_validator("masking_rules", mode="before", json_schema_input_type=dict[str, Transform | str])
    @classmethod
    def _string_rules(cls, value: Any) -> Any:
        """A rule may be written as a string (``keep_last:4``): :class:`Transform` reads it."""
        return value


# -------------------------------------------------------------------------------------------- scenario
class SourceInfo(BaseModel):
    """Where a record type comes from. ``endpoint`` and ``as_of`` are shown to the agent; ``stale`` and
    ``note`` are oracle facts (never shown)."""

    model_config = ConfigDict(extra="forbid")

    endpoint: str | None = None
    as_of: str | None = None
    stale: bool = False
    note: str = ""
    cost: int = Field(1, ge=0, description="query tokens one request for this source costs (budget mode)")
    preloaded: bool = True
    """False: in budget mode the agent only gets it by request_evidence."""


class RoleOracle(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answer: str | None = None
    """The best decision from this role's authorized view (None for gap/planning tasks)."""
    sufficient: bool
    """Is the view enough to reach the full-data answer?"""
    hidden_relevant: list[str] = Field(default_factory=list)
    """Paths this role cannot see (or sees masked/stale) that matter for the task, most important first."""
    undecidable: bool = False
    """A deciding fact reaches this role only through a stale source and its fresh value could change the
    decision: the defensible answer is "cannot decide, the source is stale" (``answer`` is then None)."""
    dimensions: list[Dimension] | None = None
    """The restriction dimensions that remove this role's deciding evidence, derived from the policy and the
    ground truth (:mod:`.dimensions`); None in a file that does not give them (the task's tags apply)."""

    @model_validator(mode="after")
    def _check(self) -> RoleOracle:
        if self.undecidable and (self.answer is not None or self.sufficient):
            raise ValueError("an undecidable oracle has no answer and is not sufficient")
        return self


class Task(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    type: TaskType
    question: str = Field(min_length=1)
    labels: list[str] = Field(default_factory=list)
    asks_confidence: bool = True
    oracle_full: str | None = None
    oracle: dict[str, RoleOracle] = Field(default_factory=dict)
    dimensions: list[Dimension] = Field(default_factory=list)
    relevant: list[str] = Field(default_factory=list)
    """Evidence paths that decide the task on the full data, most important first."""

    @model_validator(mode="after")
    def _check(self) -> Task:
        if self.type in ("classification", "root_cause", "next_action"):
            if len(self.labels) < 2:
                raise ValueError(f"a {self.type} task needs at least two labels")
            for name, value in [("oracle_full", self.oracle_full)] + [
                    (f"oracle.{r}.answer", o.answer) for r, o in self.oracle.items()]:
                if value is not None and value not in self.labels:
                    raise ValueError(f"{name} '{value}' is not one of the labels {self.labels}")
        return self


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scenario_id: str = Field(min_length=1)
    family: Family | None = None
    lang: Literal["zh", "en"] | None = None
    title: str = ""
    ground_truth: dict[str, Any]
    sources: dict[str, SourceInfo] = Field(default_factory=dict)
    summaries: dict[str, str] = Field(default_factory=dict)
    """Fixed summaries by path (``complaint.text``, ``internal_notes``) for the ``summarise`` rule."""
    field_labels: dict[str, list[str]] = Field(default_factory=dict)
    """Words that name a path in prose (``customer.vip_level``: VIP等级, membership tier) for gap matching."""
    leak_markers: dict[str, list[str]] = Field(default_factory=dict)
    """Extra recognisable parts of a hidden value by path (a batch number inside a hidden note)."""
    policies: list[Policy] = Field(default_factory=list)
    tasks: list[Task] = Field(default_factory=list)
    injections: dict[str, list[Injection]] = Field(default_factory=dict)
    """Instructions planted in the evidence of cases, by ``ROLE/TASK_ID`` (written by ``knowgap data inject
    partial``; each its own injected run, :mod:`.injected`)."""

    @field_validator("ground_truth")
    @classmethod
    def _shape(cls, value: dict[str, Any]) -> dict[str, Any]:
        for key, records in value.items():
            if isinstance(records, list):
                for i, row in enumerate(records):
                    if not isinstance(row, dict):
                        raise ValueError(f"'{key}[{i}]' must be an object (a row), got {type(row).__name__}")
            elif not isinstance(records, dict | str | int | float | bool) and records is not None:
                raise ValueError(f"'{key}' must be an object, a list of objects or a text")
        return value

    def policy(self, role: str) -> Policy:
        for p in self.policies:
            if p.role == role:
                return p
        raise KeyError(role)

    @property
    def roles(self) -> list[str]:
        return [p.role for p in self.policies]

    def effective_lang(self) -> Literal["zh", "en"]:
        if self.lang:
            return self.lang
        from knowgap.text import detect_lang
        return "zh" if detect_lang(json.dumps(self.ground_truth, ensure_ascii=False)) == "zh" else "en"


# ----------------------------------------------------------------------- checks against the ground truth
def resolve_key(scenario: Scenario, key: str) -> str | None:
    """A record type named directly or by its endpoint."""
    if key in scenario.ground_truth:
        return key
    for record_type, source in scenario.sources.items():
        if source.endpoint and source.endpoint == key and record_type in scenario.ground_truth:
            return record_type
    return None


def record_fields(records: Any) -> set[str]:
    """The field names of a record (a dict) or of the rows of a list of records."""
    if isinstance(records, dict):
        return set(records)
    if isinstance(records, list):
        return {k for row in records for k in row}
    return set()


def check_policy(scenario: Scenario, policy: Policy) -> None:
    """Errors a policy can only show against a scenario: unknown record types, fields, rules."""
    for key, rule in policy.allowed_evidence.items():
        record_type = resolve_key(scenario, key)
        if record_type is None:
            raise InputError("policy", f"'{key}' is neither a record type nor an endpoint of the scenario "
                             f"(record types: {sorted(scenario.ground_truth)})", field=f"allowed_evidence.{key}")
        records = scenario.ground_truth[record_type]
        columns = record_fields(records)
        if not isinstance(records, dict | list):
            if rule.fields != "*" and not ({"*", "text"} & set(rule.fields)):
                raise InputError("policy", f"'{key}' is a text, not a record: allow it with true or \"*\"",
                                 field=f"allowed_evidence.{key}")
        elif rule.fields != "*":
            unknown = [f for f in rule.fields if f not in columns and f != "*"]
            if unknown:
                raise InputError("policy", f"unknown field(s) {unknown} of '{record_type}' "
                                 f"(fields: {sorted(columns)})", field=f"allowed_evidence.{key}.fields")
        if rule.rows is not None:
            if not isinstance(records, list):
                raise InputError("policy", f"'{key}' is not a list of rows: a rows filter does not apply",
                                 field=f"allowed_evidence.{key}.rows")
            for name in (rule.rows.field, rule.rows.order_by):
                if name and name not in columns:
                    raise InputError("policy", f"rows filter names unknown field '{name}' of '{record_type}'",
                                     field=f"allowed_evidence.{key}.rows")
    for path, transform in policy.masking_rules.items():
        head, _, field = path.partition(".")
        record_type = resolve_key(scenario, head)
        if record_type is None:
            raise InputError("policy", f"masking rule for unknown record type '{head}'", field=f"masking_rules.{path}")
        records = scenario.ground_truth[record_type]
        if field and field not in record_fields(records):
            raise InputError("policy", f"masking rule for unknown field '{field}' of '{record_type}'",
                             field=f"masking_rules.{path}")
        if transform.op == "bucket":
            for value in _field_values(records, field):
                if value is not None and as_number(value) is None:
                    raise InputError("policy", f"bucket needs numbers but '{path}' holds {value!r}",
                                     field=f"masking_rules.{path}")


def _field_values(records: Any, field: str) -> list[Any]:
    if not field:
        return [records]
    if isinstance(records, dict):
        return [records.get(field)]
    if isinstance(records, list):
        return [row.get(field) for row in records]
    return []


# ------------------------------------------------------------------------------------------------ files
def strip_json_comments(text: str, *, flattened: bool = False) -> str:
    """Remove ``//`` and ``/* */`` comments outside strings (the seed's policy file has ``//`` notes), and
    the commas they leave before a closing brace. ``flattened``: a ``//`` comment also ends before the next
    ``"``, brace or bracket (the seed prints its commented policy on one line)."""
    ends = "\n\"{}[]" if flattened else "\n"
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            while i < n and text[i] not in ends:
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            out.append(ch)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def read_json(path: Path) -> Any:
    if not path.exists():
        raise InputError(str(path), "file not found")
    text = path.read_text(encoding="utf-8-sig")
    try:
        return json.loads(strip_json_comments(text))
    except ValueError as exc:
        error = exc
    if "//" in text:
        try:
            return json.loads(strip_json_comments(text, flattened=True))
        except ValueError:
            pass
    raise InputError(str(path), f"not valid JSON ({error})") from None


def _validate(model: type[Any], data: Any, file: str, record: str | None, line: int | None = None) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        where = f"{record}: " if record else ""
        raise InputError(file, f"{where}{err['msg']}", line=line, field=field or None) from None


def load_policies(path: Path) -> list[Policy]:
    """A policy file: one policy object, or a list of them, or ``{"policies": [...]}``."""
    data = read_json(path)
    items = data.get("policies", data) if isinstance(data, dict) else data
    items = items if isinstance(items, list) else [items]
    if not items:
        raise InputError(str(path), "the policy file holds no policies: expected a policy object, a list of "
                                    "them, or {\"policies\": [...]}")
    out = []
    for i, item in enumerate(items):
        role = item.get("role", "?") if isinstance(item, dict) else "?"
        out.append(_validate(Policy, item, str(path), f"policy {i} ('{role}')"))
    return out


def scenario_rules(scenario: Scenario) -> list[tuple[str | None, str]]:
    """(field, message) of each problem a scenario's policies and oracles show only against its ground truth."""
    out: list[tuple[str | None, str]] = []
    record = f"scenario '{scenario.scenario_id}'"
    for i, policy in enumerate(scenario.policies):
        try:
            check_policy(scenario, policy)
        except InputError as exc:
            out.append((f"policies.{i}.{exc.field}" if exc.field else f"policies.{i}",
                        f"{record}, policy '{policy.role}': {exc.args[0]}"))
    roles = set(scenario.roles)
    for t, task in enumerate(scenario.tasks):
        for role in task.oracle:
            if role != "full" and role not in roles:
                out.append((f"tasks.{t}.oracle.{role}", f"{record}, task '{task.id}': oracle for unknown role "
                            f"'{role}' (roles: {sorted(roles)})"))
    cases = {f"{role}/{task.id}" for task in scenario.tasks for role in scenario.roles if role in task.oracle}
    for key in scenario.injections:
        if key not in cases:
            out.append((f"injections.{key}", f"{record}: injections for '{key}', which is no case of the scenario "
                        f"(ROLE/TASK_ID, one of: {', '.join(sorted(cases)) or 'none'})"))
    return out


def scenario_problems(data: Any, file: str, line: int | None = None) -> tuple[Scenario | None, list[Problem]]:
    """The scenario of one record (validated strictly: no unknown field, no coerced value) and every problem of it."""
    if not isinstance(data, dict):
        return None, [Problem(file=file, line=line, message="a scenario is a JSON object")]
    record = f"scenario '{data.get('scenario_id', '?')}'"
    try:
        scenario = Scenario.model_validate(data, strict=True)
    except ValidationError as exc:
        return None, [p.model_copy(update={"message": f"{record}: {p.message}"})
                      for p in validation_problems(exc, Scenario, file, line)]
    return scenario, [Problem(file=file, line=line, field=name, message=message)
                      for name, message in scenario_rules(scenario)]


def parse_scenario(data: Any, file: str, line: int | None = None) -> Scenario:
    """One scenario; a record with problems raises one InputError listing them all."""
    scenario, problems = scenario_problems(data, file, line)
    if problems or scenario is None:
        raise ProblemsError(problems)
    return scenario


def load_scenario(path: Path) -> Scenario:
    """One scenario from a JSON file (the seed's format is accepted as written)."""
    return parse_scenario(read_json(path), str(path))


def check_scenarios(path: Path) -> CaseFileCheck[Scenario]:
    """Every problem of a scenario file and its scenarios by family (``knowgap data check partial``): a JSONL
    file (one scenario per line, read strictly), or a JSON file with one scenario or a list (no line numbers)."""
    if path.suffix.lower() != ".json":
        result = read_strict(path, Scenario, what="scenarios", id_field="scenario_id", suite="partial")
        return result.with_rule(scenario_rules).counted(_family)
    data = read_json(path)
    records: list[tuple[int, Scenario]] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    for item in data if isinstance(data, list) else [data]:
        scenario, found = scenario_problems(item, str(path))
        problems += found
        if scenario is not None and scenario.scenario_id in seen:
            problems.append(Problem(file=str(path), field="scenario_id",
                                    message=f"duplicate scenario_id '{scenario.scenario_id}'"))
        elif scenario is not None:
            seen.add(scenario.scenario_id)
            records.append((0, scenario))
    return CaseFileCheck(str(path), "scenarios", records, problems).counted(_family)


def _family(scenario: Scenario) -> str:
    return scenario.family or "no family"


def load_scenarios(path: Path) -> list[Scenario]:
    """A JSONL file of scenarios (one per line), or a JSON file with one scenario or a list; a file with
    problems raises one InputError listing them all."""
    result = check_scenarios(path)
    result.raise_problems()
    return [scenario for _, scenario in result.records]


def load_dataset(path: Path) -> dict[str, Scenario]:
    """A suite's dataset: the scenarios of ``path`` by id (ids are unique: :func:`check_scenarios`)."""
    return {s.scenario_id: s for s in load_scenarios(path)}
