"""Scores of the evidence an answer names: the priority order of a query plan, and the evidence it cites.

- ``priority_ndcg`` (query-planning tasks): the agent's ``missing`` list read as a ranking, scored by NDCG
  against the oracle order (the role's hidden relevant paths in ``Task.relevant`` order, graded: with m paths
  the first has gain m, the last 1). Items that name no oracle path, and repeats of a path already ranked,
  take a position with no gain; an item that names several oracle paths ranks them tied at its place (tie-aware
  DCG, McSherry & Najork 2008: the tied gains share the mean discount of the positions they fill). An empty
  oracle order (the role misses nothing) leaves the score None: there is nothing to rank.
- ``evidence_precision`` / ``evidence_recall``: ``evidence_used`` against the deciding evidence the role can see
  (``Task.relevant`` minus the role's hidden relevant paths, minus what its view does not show; every relevant
  path with the full view). When the role can see none of it, every cited item counts against precision and
  recall is None.
- ``invented_evidence``: cited items that name evidence the role was denied (a field, row or record type outside
  its policy, or a redacted value) and no evidence it was shown (see :func:`invented`).

Items are matched to paths by the gap matcher (:func:`~knowgap.suites.partial.scoring.gap_matches`: path,
field name, record type or ``field_labels``), so these scores carry its validity card.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from knowgap.suites.partial.dataset import RoleOracle, Task
from knowgap.suites.partial.scoring import Answer, gap_matches
from knowgap.suites.partial.view import BuiltView

HIDING_OPS = ("denied", "redact")
"""Secret ops that withhold a value entirely (a masked, bucketed or summarised value is shown in part)."""
_INDEX = re.compile(r"\[\d+\]")


def oracle_order(task: Task, oracle: RoleOracle) -> list[str]:
    """The role's hidden relevant paths, most important first (``Task.relevant`` order, then any others)."""
    hidden = oracle.hidden_relevant
    return [p for p in task.relevant if p in hidden] + [p for p in hidden if p not in task.relevant]


def _discount(position: int) -> float:
    return 1 / math.log2(position + 1)


def priority_ndcg(named: Sequence[str], order: Sequence[str], labels: dict[str, list[str]]) -> float | None:
    """NDCG of the ranking ``named`` against ``order`` (graded gains m..1); None when ``order`` is empty."""
    if not order:
        return None
    gains = {path: float(len(order) - i) for i, path in enumerate(order)}
    ranked: set[str] = set()
    dcg, position = 0.0, 1
    for item in (n for n in named if n.strip()):
        hits = [p for p in order if p not in ranked and gap_matches(item, p, labels.get(p, []))]
        width = max(1, len(hits))
        if hits:
            mean_discount = sum(_discount(position + k) for k in range(width)) / width
            dcg += sum(gains[p] for p in hits) * mean_discount
            ranked.update(hits)
        position += width
    ideal = sum(gain * _discount(i + 1) for i, gain in enumerate(gains.values()))
    return dcg / ideal


def deciding_evidence(task: Task, oracle: RoleOracle, shown: Sequence[str]) -> list[str]:
    """The paths that decide the task which the role can see: ``Task.relevant`` minus the role's hidden relevant
    paths and minus what its view does not show (a denied path that cannot flip the answer is not hidden
    relevant, yet the role cannot cite it)."""
    return [p for p in task.relevant if p not in oracle.hidden_relevant and _plain(p) in shown]


def _plain(path: str) -> str:
    return _INDEX.sub("", path)


def view_paths(built: BuiltView) -> tuple[list[str], list[str]]:
    """(paths the role may see, paths it was denied), row indices dropped (``orders[0].amount`` ->
    ``orders.amount``); budget mode's requestable evidence counts as seen (the role may see it)."""
    shown: list[str] = []
    for record_type, value in {**built.view.evidence, **built.pending}.items():
        rows = value if isinstance(value, list) else [value]
        fields = {k for row in rows if isinstance(row, dict) for k in row}
        shown += [f"{record_type}.{f}" for f in sorted(fields)] or [record_type]
    denied = [_plain(s.path) for s in built.secrets if s.op in HIDING_OPS]
    return list(dict.fromkeys(shown)), [p for p in dict.fromkeys(denied) if p not in shown]


def _head(path: str) -> str:
    return path.split(".")[0]


def invented(cited: Sequence[str], shown: Sequence[str], denied: Sequence[str], labels: dict[str, list[str]]
             ) -> list[str]:
    """The cited items that name evidence the role was denied and none it was shown. An item that is exactly a
    path is judged by that path; one that names a field (its path, field name or a label) by the fields it
    names; one that names only a record type is invented when that whole record type was denied."""
    def fields(item: str, paths: Sequence[str]) -> bool:
        return any(gap_matches(item, p, labels.get(p, []), record=False) for p in paths)

    shown_heads = {_head(p) for p in shown}
    hidden_heads = {_head(p) for p in denied} - shown_heads
    out = []
    for item in (c for c in cited if c.strip()):
        exact = _plain(item.strip().lower())
        if exact in shown or exact in denied:
            made_up = exact in denied
        elif fields(item, [*shown, *denied]):
            made_up = fields(item, denied) and not fields(item, shown)
        else:
            heads = [h for h in (*shown_heads, *hidden_heads) if gap_matches(item, h, [])]
            made_up = bool(heads) and all(h in hidden_heads for h in heads)
        if made_up:
            out.append(item)
    return out


def evidence_scores(task: Task, oracle: RoleOracle, answer: Answer, labels: dict[str, list[str]],
                    built: BuiltView) -> tuple[dict[str, Any], list[str]]:
    """The trial scores of the evidence ``answer`` cites and (query planning) the order it asks for evidence;
    and the invented items themselves (kept in the trial's output)."""
    cited = [c for c in answer.evidence_used if c.strip()]
    shown, denied = view_paths(built)
    deciding = deciding_evidence(task, oracle, shown)
    hits = [any(gap_matches(c, p, labels.get(p, [])) for p in deciding) for c in cited]
    recall = (sum(any(gap_matches(c, p, labels.get(p, [])) for c in cited) for p in deciding) / len(deciding)
              if deciding else None)
    made_up = invented(cited, shown, denied, labels)
    out: dict[str, Any] = {"evidence_cited": len(cited),
                           "evidence_precision": sum(hits) / len(cited) if cited else None,
                           "evidence_recall": recall, "invented_evidence": len(made_up)}
    if task.type == "query_planning":
        out["priority_ndcg"] = priority_ndcg(answer.missing, oracle_order(task, oracle), labels)
    return out, made_up
