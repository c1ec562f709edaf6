"""The view builder: what one role may see of a scenario, and the record of everything it may not.

:func:`build_view` applies a policy to the ground truth: record types (or endpoints) allowed, columns,
rows, then the masking rules. It returns the :class:`View` (the only thing a prompt is built from) and the
list of :class:`Secret` values the role was denied (kept apart, for the leak detector). :func:`render_view`
is the exact evidence text an agent gets.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from knowgap.errors import InputError
from knowgap.suites.partial.dataset import (
    Policy,
    RecordRule,
    RowFilter,
    Scenario,
    Transform,
    check_policy,
    record_fields,
    resolve_key,
)
from knowgap.suites.partial.transforms import REDACTED, as_number, bucket, keep_last, mask_middle

Summariser = Callable[[str, str], str | None]
"""(path, original text) -> a summary, or None when it cannot write one."""


class Secret(BaseModel):
    """One value the role may not see in full: denied outright, or shown only transformed."""

    path: str
    value: Any
    op: str = "denied"
    """denied (field, row or record type not allowed), or the transform applied (mask_middle, bucket...)."""
    shown: str | None = None


class View(BaseModel):
    role: str
    evidence: dict[str, Any] = Field(default_factory=dict)
    sources: dict[str, dict[str, str]] = Field(default_factory=dict)
    withheld: dict[str, list[str]] = Field(default_factory=dict)
    requestable: list[str] = Field(default_factory=list)
    """Budget mode: allowed record types that are not preloaded (the agent must request them)."""


class BuiltView(BaseModel):
    view: View
    secrets: list[Secret] = Field(default_factory=list)
    pending: dict[str, Any] = Field(default_factory=dict)
    """Budget mode: the transformed evidence of requestable record types, served on request."""


def full_policy(scenario: Scenario) -> Policy:
    """A policy that shows everything (the full-data view of the sufficiency pre-test)."""
    return Policy(role="full", allowed_evidence={k: RecordRule(fields="*") for k in scenario.ground_truth})


# ---------------------------------------------------------------------------------------------- build
def _leaves(path: str, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(f"{path}.{k}", v)]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(f"{path}[{i}]", v)]
    return [(path, value)]


def _keep_row(row: dict[str, Any], rows: RowFilter) -> bool:
    if rows.field is None:
        return True
    value = row.get(rows.field)
    if rows.in_ is not None and value not in rows.in_:
        return False
    return not (rows.not_in is not None and value in rows.not_in)


def _select_rows(records: list[dict[str, Any]], rows: RowFilter | None) -> list[int]:
    if rows is None:
        return list(range(len(records)))
    kept = [i for i, row in enumerate(records) if _keep_row(row, rows)]
    if rows.limit is not None:
        if rows.order_by:
            key = rows.order_by
            kept.sort(key=lambda i: str(records[i].get(key, "")), reverse=rows.descending)
            kept = sorted(kept[:rows.limit])
        else:
            kept = kept[-rows.limit:] if rows.limit else []
    return kept


class _Builder:
    def __init__(self, scenario: Scenario, policy: Policy, summariser: Summariser | None) -> None:
        self.scenario, self.policy, self.summariser = scenario, policy, summariser
        self.secrets: list[Secret] = []

    def deny(self, path: str, value: Any) -> None:
        self.secrets.extend(Secret(path=p, value=v) for p, v in _leaves(path, value))

    def summary(self, path: str, generic: str, text: str) -> str:
        for key in (path, generic):
            if key in self.scenario.summaries:
                return self.scenario.summaries[key]
        if self.summariser is not None:
            written = self.summariser(path, text)
            if written is not None:
                return written
        raise InputError("policy", f"'summarise' needs a summary of '{path}': give one in the scenario's "
                         "summaries, or a generator model", field=f"masking_rules.{generic}")

    def transform(self, path: str, generic: str, value: Any, rule: Transform) -> tuple[bool, Any]:
        """(keep the field?, the value shown)."""
        if rule.op == "show_full" or value is None:
            return True, value
        if rule.op == "drop":
            self.deny(path, value)
            return False, None
        if isinstance(value, dict | list):
            if rule.op == "redact":
                self.deny(path, value)
                return True, REDACTED
            raise InputError("policy", f"'{rule.op}' applies to a single value, '{path}' holds a "
                             f"{type(value).__name__}", field=f"masking_rules.{generic}")
        if rule.op == "redact":
            shown: Any = REDACTED
        elif rule.op == "mask_middle":
            shown = mask_middle(str(value))
        elif rule.op == "keep_last":
            shown = keep_last(str(value), rule.n)
        elif rule.op == "bucket":
            number = as_number(value)
            if number is None:
                raise InputError("policy", f"bucket needs a number but '{path}' holds {value!r}",
                                 field=f"masking_rules.{generic}")
            shown = bucket(number, rule.edges, rule.unit)
        else:  # summarise
            shown = self.summary(path, generic, str(value))
        self.secrets.append(Secret(path=path, value=value, op=rule.op, shown=str(shown)))
        return True, shown

    def record(self, record_type: str, rule: RecordRule) -> Any:
        records = self.scenario.ground_truth[record_type]
        rules = self.policy.masking_rules
        if not isinstance(records, dict | list):
            transform = rules.get(record_type)
            if transform is None:
                return records
            keep, shown = self.transform(record_type, record_type, records, transform)
            return shown if keep else None

        def one(row: dict[str, Any], prefix: str) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for field, value in row.items():
                path = f"{prefix}.{field}"
                if rule.fields != "*" and field not in rule.fields and "*" not in rule.fields:
                    self.deny(path, value)
                    continue
                transform = rules.get(f"{record_type}.{field}")
                if transform is None:
                    out[field] = value
                    continue
                keep, shown = self.transform(path, f"{record_type}.{field}", value, transform)
                if keep:
                    out[field] = shown
            return out

        if isinstance(records, dict):
            return one(records, record_type)
        kept = set(_select_rows(records, rule.rows))
        rows = []
        for i, row in enumerate(records):
            if i in kept:
                rows.append(one(row, f"{record_type}[{i}]"))
            else:
                self.deny(f"{record_type}[{i}]", row)
        return rows


def build_view(scenario: Scenario, policy: Policy, *, summariser: Summariser | None = None,
               budget_mode: bool = False) -> BuiltView:
    """What ``policy``'s role sees of ``scenario`` (and, apart, what it may not see).

    In budget mode, allowed record types whose source is not preloaded are held back as ``pending``: the
    agent gets them only through ``request_evidence``.
    """
    check_policy(scenario, policy)
    builder = _Builder(scenario, policy, summariser)
    allowed: dict[str, RecordRule] = {}
    for key, rule in policy.allowed_evidence.items():
        record_type = resolve_key(scenario, key)
        assert record_type is not None  # check_policy
        allowed[record_type] = rule
    view = View(role=policy.role)
    pending: dict[str, Any] = {}
    for record_type, records in scenario.ground_truth.items():
        if record_type not in allowed:
            builder.deny(record_type, records)
            continue
        shown = builder.record(record_type, allowed[record_type])
        if shown is None:
            continue
        source = scenario.sources.get(record_type)
        if budget_mode and source is not None and not source.preloaded:
            pending[record_type] = shown
            view.requestable.append(record_type)
            continue
        view.evidence[record_type] = shown
        if source is not None:
            meta = {k: v for k, v in (("endpoint", source.endpoint), ("as_of", source.as_of)) if v}
            if meta:
                view.sources[record_type] = meta
    if policy.disclose_schema:
        for record_type, records in scenario.ground_truth.items():
            shown_fields = record_fields(view.evidence.get(record_type, pending.get(record_type)))
            missing = sorted(record_fields(records) - shown_fields)
            if record_type not in allowed:
                view.withheld[record_type] = ["*"]
            elif missing:
                view.withheld[record_type] = missing
    return BuiltView(view=view, secrets=builder.secrets, pending=pending)


def source_line(record_type: str, meta: dict[str, str], lang: str) -> str:
    parts = [record_type]
    if meta.get("endpoint"):
        parts.append(meta["endpoint"])
    if meta.get("as_of"):
        parts.append(("数据时间 " if lang == "zh" else "as of ") + meta["as_of"])
    return " · ".join(parts)


def render_view(view: View, lang: str = "en") -> str:
    """The exact evidence text an agent gets (JSON evidence, then sources with their timestamps)."""
    body = ",\n".join(f"  {json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}"
                      for k, v in view.evidence.items())
    lines = ["证据（JSON）：" if lang == "zh" else "Evidence (JSON):", "{\n" + body + "\n}" if body else "{}"]
    if view.sources:
        lines.append("来源：" if lang == "zh" else "Sources:")
        lines += [f"- {source_line(k, m, lang)}" for k, m in view.sources.items()]
    if view.withheld:
        lines.append("未授权查看的字段（只有名称）：" if lang == "zh" else "Withheld fields (names only):")
        lines += [f"- {k}: {', '.join(v)}" for k, v in view.withheld.items()]
    if view.requestable:
        lines.append("可用 request_evidence 申请的来源：" if lang == "zh" else "Sources you may request:")
        lines += [f"- {k}" for k in view.requestable]
    return "\n".join(lines)


def serve_request(built: BuiltView, scenario: Scenario, path: str) -> tuple[str, Any]:
    """Budget mode: answer ``request_evidence(path)``: ("granted", value) for evidence the role may see,
    ("denied", None) for evidence outside its policy, ("unknown", None) for a path that does not exist."""
    path = path.strip().strip("/").replace("/", ".")
    head, _, field = path.partition(".")
    record_type = resolve_key(scenario, head) or resolve_key(scenario, path)
    if record_type is None:
        return "unknown", None
    if record_type == path:
        field = ""
    if record_type in built.pending:
        value = built.pending[record_type]
    elif record_type in built.view.evidence:
        value = built.view.evidence[record_type]
    else:
        return "denied", None
    if not field:
        return "granted", value
    if isinstance(value, dict):
        return ("granted", value[field]) if field in value else _missing(scenario, record_type, field)
    if isinstance(value, list):
        column = [row[field] for row in value if field in row]
        return ("granted", column) if column else _missing(scenario, record_type, field)
    return "granted", value


def _missing(scenario: Scenario, record_type: str, field: str) -> tuple[str, Any]:
    return ("denied", None) if field in record_fields(scenario.ground_truth[record_type]) else ("unknown", None)
