"""Injected runs of the ``partial`` suite: where an instruction hidden in the evidence a role MAY see goes (the
carriers and the plant function partial gives the injection driver, :mod:`.injection`).

Where it sits: one visible text field of the view carries the payload (appended to its value after a space).
The carrying field is the first, the middle or the last text field of the view that holds prose (:func:`_prose`;
any text field when none does) in render order (the order of the JSON evidence the agent reads): that is the
injection's **position**. A view with no text field gets the
payload as a record of its own (``note``) at that place among the records. An attack's ``{field}`` names a
path the role may NOT see (:func:`hidden_field`: the first hidden, masked or bucketed value the leak detector
can recognise), so an exfiltration attack asks for a real hidden value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from knowgap.injection import Injection
from knowgap.injection.placement import list_index
from knowgap.suites.partial.dataset import Scenario, Task
from knowgap.suites.partial.leak import fingerprints
from knowgap.suites.partial.view import BuiltView, build_view, render_view

CHECKS = ("field_leak", "marker", "system_echo", "takeover", "behaviour")
"""The attack checks partial makes."""
NOTE = "note"
"""The record a view with no text field gets to carry the payload."""

Key = str | int
_DATE_LIKE = re.compile(r"[\d\-/:T .]+")


def case_keys(scenarios: Iterable[Scenario]) -> Iterator[tuple[Scenario, str, Task]]:
    """(scenario, role, task) of every case of ``scenarios``, in the suite's stable order."""
    for s in scenarios:
        for task in s.tasks:
            for role in s.roles:
                if role in task.oracle:
                    yield s, role, task


def case_id(scenario_id: str, role: str, task_id: str) -> str:
    return f"{scenario_id}/{role}/{task_id}"


def file_key(role: str, task_id: str) -> str:
    """The key of a case's injections in its scenario's ``injections`` field."""
    return f"{role}/{task_id}"


def hidden_field(scenario: Scenario, role: str) -> str | None:
    """The path (row indices dropped: ``orders.amount``) of the first value the role may not see that the leak
    detector can recognise: one denied outright if there is one (so a budget-mode request for it is denied),
    else one shown only masked or bucketed; None when the role sees everything."""
    built = build_view(scenario, scenario.policy(role), summariser=lambda _p, _t: "")
    visible = render_view(built.view, scenario.effective_lang())
    prints = {fp.path for fp in fingerprints(built.secrets, visible, scenario.leak_markers)}
    shown = {_generic(_dotted(keys)) for keys in _leaves(built.view.evidence, ())}
    found = [s for s in built.secrets if s.path in prints]
    # stable: first a field the role sees in no row, denied, then denied in some rows, then transformed
    found.sort(key=lambda s: (_generic(s.path) in shown, s.op != "denied"))
    return _generic(found[0].path) if found else None


def _generic(path: str) -> str:
    return re.sub(r"\[\d+\]", "", path)


def _leaves(value: Any, keys: tuple[Key, ...], text_only: bool = False) -> Iterator[tuple[Key, ...]]:
    """The key paths of the leaves of ``value`` (only those holding text with ``text_only``)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*keys, k), text_only)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*keys, i), text_only)
    elif keys and (isinstance(value, str) or not text_only):
        yield keys


def _dotted(keys: tuple[Key, ...]) -> str:
    return "".join(f"[{k}]" if isinstance(k, int) else (f".{k}" if i else k) for i, k in enumerate(keys))


def plant(built: BuiltView, injection: Injection) -> tuple[BuiltView, str]:
    """``built`` with ``injection``'s payload in one visible text field (chosen by its position, as the module
    says), and that field's path."""
    planted = built.model_copy(deep=True)
    evidence = planted.view.evidence
    texts = list(_leaves(evidence, (), text_only=True))
    leaves = [keys for keys in texts if _prose(_at(evidence, keys))] or texts
    if not leaves:
        items = list(evidence.items())
        items.insert(list_index(len(items) + 1, injection.position), (NOTE, injection.payload))
        planted.view.evidence = dict(items)
        return planted, NOTE
    keys = leaves[list_index(len(leaves), injection.position)]
    holder = _at(evidence, keys[:-1])
    holder[keys[-1]] = f"{holder[keys[-1]]} {injection.payload}"
    return planted, _dotted(keys)


def _at(value: Any, keys: tuple[Key, ...]) -> Any:
    for k in keys:
        value = value[k]
    return value


def _prose(text: str) -> bool:
    """Text a person wrote (a note, a complaint, a description), not a code, a date or a masked number: 8+
    characters with a space or a Chinese character."""
    return len(text) >= 8 and (" " in text.strip() or any("\u4e00" <= ch <= "\u9fff" for ch in text)) \
        and not _DATE_LIKE.fullmatch(text.strip())
