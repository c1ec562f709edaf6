"""Which restriction dimensions remove a role's deciding evidence, derived from its policy and the ground truth.

A case (task, role) is tagged with the dimension of each deciding path the role lacks (the oracle's hidden
relevant paths), read off the view the policy builds:

- ``timeliness`` (the seed's 2.3, timeliness and consistency): the role's view shows a stale source
  (``sources.X.stale``) holding the path's field, and not the fresh path itself in full: the role has the field,
  but only an out-of-date copy; or it shows the path's record next to another current source holding the same
  field with other values (:func:`contradicted`): two sources that disagree;
- ``breadth``: otherwise, the path is denied (record type, field or row not allowed), or its record type is
  shown through a rows filter (the deciding row may be the one filtered out);
- ``depth``: otherwise, the path is shown only transformed (masked, bucketed, summarised, redacted).

``cost`` is tagged when a path that decides the task for this role is one the policy allows but whose source is
not preloaded: in budget mode the role gets it only by spending query tokens (the tag means nothing in the other
views, and the metrics only slice budget runs by it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import cast

from knowgap.suites.partial.dataset import DIMENSIONS, Dimension, Policy, Scenario, record_fields, resolve_key
from knowgap.suites.partial.view import BuiltView, build_view


def _bare(path: str) -> str:
    """A secret's path without row indices: ``litigation[1].amount`` -> ``litigation.amount``."""
    return re.sub(r"\[\d+\]", "", path)


def _covers(secret_path: str, path: str) -> bool:
    bare = _bare(secret_path)
    return bare == path or bare.startswith(path + ".")


def _built(scenario: Scenario, policy: Policy, *, budget_mode: bool = False) -> BuiltView:
    # The summaries' wording does not matter here, only which values are transformed.
    return build_view(scenario, policy, summariser=lambda _path, _text: "", budget_mode=budget_mode)


def _field_values(records: object, field: str) -> set[str]:
    rows = records if isinstance(records, list) else [records]
    return {json.dumps(row.get(field), ensure_ascii=False, sort_keys=True) for row in rows
            if isinstance(row, dict) and field in row}


def contradicted(scenario: Scenario, built: BuiltView, path: str) -> bool:
    """Does the view show ``path``'s record (its field not denied) next to another current (not stale) source
    holding the same field with other values? The role then sees two sources that disagree (seed 2.3, 多源数据冲突)
    and, unless its view also holds what settles it, cannot tell which is right."""
    head, _, field = path.partition(".")
    record_type = resolve_key(scenario, head) or head
    if not field or record_type not in built.view.evidence:
        return False
    if any(s.op == "denied" and _covers(s.path, path) for s in built.secrets):
        return False
    own = _field_values(scenario.ground_truth[record_type], field)
    return any(k != record_type and not (k in scenario.sources and scenario.sources[k].stale)
               and field in record_fields(scenario.ground_truth[k])
               and _field_values(scenario.ground_truth[k], field) != own
               for k in built.view.evidence)


def evidence_loss(scenario: Scenario, policy: Policy, built: BuiltView, path: str) -> Dimension | None:
    """The dimension that keeps ``path`` from the role whose policy built ``built``; None when the policy
    shows it in full (nothing removes it)."""
    head, _, field = path.partition(".")
    record_type = resolve_key(scenario, head) or head
    secrets = [s for s in built.secrets if _covers(s.path, path)]
    fresh_in_full = record_type in built.view.evidence and not secrets
    stale_copies = [k for k in built.view.evidence if k != record_type and k in scenario.sources
                    and scenario.sources[k].stale and field and field in record_fields(scenario.ground_truth[k])]
    if stale_copies and not fresh_in_full:
        return "timeliness"
    if contradicted(scenario, built, path):
        return "timeliness"
    rule = policy.allowed_evidence.get(record_type) or next(
        (r for k, r in policy.allowed_evidence.items() if resolve_key(scenario, k) == record_type), None)
    if any(s.op == "denied" for s in secrets) or (rule is not None and rule.rows is not None):
        return "breadth"
    if secrets:
        return "depth"
    return None


def derive_dimensions(scenario: Scenario, policy: Policy, lost: Sequence[str], deciding: Sequence[str]
                      ) -> list[Dimension]:
    """The dimensions of one case: of each ``lost`` path (deciding evidence the role lacks, see
    :func:`evidence_loss`), and ``cost`` when one of ``deciding`` (paths that decide the task for the role) sits
    in a source the role may only request in budget mode. In :data:`DIMENSIONS` order."""
    built = _built(scenario, policy)
    found: set[str] = {d for path in lost if (d := evidence_loss(scenario, policy, built, path)) is not None}
    requestable = set(_built(scenario, policy, budget_mode=True).view.requestable)
    if any((resolve_key(scenario, p.partition(".")[0]) or p) in requestable for p in deciding):
        found.add("cost")
    return cast(list[Dimension], [d for d in DIMENSIONS if d in found])


def unexplained(scenario: Scenario, policy: Policy, lost: Sequence[str]) -> list[str]:
    """Lost paths that nothing in the policy removes (a visibility table that contradicts the policy)."""
    built = _built(scenario, policy)
    return [p for p in lost if evidence_loss(scenario, policy, built, p) is None]
