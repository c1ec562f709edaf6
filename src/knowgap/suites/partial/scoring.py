"""Scoring of one answer: tolerant parsing, label matching, gap matching, the scores of a trial; macro-F1 and
ECE. (The reasoning rubric judge is in :mod:`.judging`.)"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from knowgap.models.structured import ParseFailure, extract_json
from knowgap.suites.partial.dataset import RoleOracle, Task

GAP_MATCH_VERSION = "gap-matcher-1"
"""Judge ``gap-matcher`` (:func:`gap_matches`); change whenever the matching changes."""
_TRUE = {"true", "yes", "y", "sufficient", "enough", "是", "足够", "充分", "1"}
_FALSE = {"false", "no", "n", "insufficient", "not enough", "否", "不足", "不够", "不充分", "0"}
CANNOT_DECIDE = "(cannot decide)"
"""The decision of an agent that declines (never a label): accepted wherever the view is insufficient, the only
accepted decision where the view supports no label (:func:`accepted_decisions`)."""
STALE_CANNOT_DECIDE = "(cannot decide: stale source)"
"""What :data:`CANNOT_DECIDE` was in trials stored before issue 37 (only undecidable oracles accepted it then)."""
_ABSTAIN = re.compile(r"cannot (?:decide|determine|be determined)|can't (?:decide|determine)|undecid|undetermin|"
                      r"unknown|insufficient|not enough|n/a|无法|不能确定|不确定|待定|未知|不足")


class Answer(BaseModel):
    """What an agent replied, coerced leniently (a field that cannot be read is None, never a default)."""

    action: str | None = None
    answer: str | None = None
    confidence: float | None = None
    sufficient: bool | None = None
    missing: list[str] = Field(default_factory=list)
    evidence_used: list[str] = Field(default_factory=list)
    reasoning: str = ""
    path: str | None = None


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).strip().lower()


def _bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return bool(value)
    if isinstance(value, str):
        v = _norm(value).strip(".。")
        if v in _TRUE:
            return True
        if v in _FALSE:
            return False
    return None


def _confidence(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        x = float(value)
    elif isinstance(value, str):
        m = re.search(r"\d+(?:\.\d+)?", value)
        if not m:
            return None
        x = float(m.group())
        if "%" in value:
            x /= 100
    else:
        return None
    if 1 < x <= 100:
        x /= 100
    return x if 0 <= x <= 1 else None


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [p.strip() for p in re.split(r"[;\n；、]|,\s", value) if p.strip()]
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, dict):
                item = item.get("path") or item.get("field") or item.get("name") or " ".join(map(str, item.values()))
            if item is not None and str(item).strip():
                out.append(str(item).strip())
        return out
    return [str(value)]


def parse_answer(text: str) -> Answer | ParseFailure:
    data = extract_json(text)
    if isinstance(data, ParseFailure):
        return data
    arguments = data.get("arguments")
    if data.get("name") == "request_evidence" and isinstance(arguments, dict):  # a tool call written as text
        path = arguments.get("path")
        return Answer(action="request_evidence", path=str(path) if path else None)
    answer = data.get("answer", data.get("decision", data.get("label")))
    return Answer(action=str(data["action"]).strip().lower() if data.get("action") else None,
                  answer=None if answer is None or isinstance(answer, dict | list) else str(answer),
                  confidence=_confidence(data.get("confidence")), sufficient=_bool(data.get("sufficient")),
                  missing=_strings(data.get("missing", data.get("requests", data.get("gaps")))),
                  evidence_used=_strings(data.get("evidence_used")), reasoning=str(data.get("reasoning", "") or ""),
                  path=str(data["path"]) if data.get("path") else None)


def match_label(answer: str | None, labels: Sequence[str]) -> str | None:
    """The label an answer names: exact (case-insensitive), else the one label it contains."""
    if not answer:
        return None
    a = _norm(answer)
    for label in labels:
        if a == _norm(label):
            return label
    found = [label for label in labels if _norm(label) in a or _norm(label).replace("_", " ") in a]
    return found[0] if len(found) == 1 else None


def gap_matches(named: str, path: str, aliases: Sequence[str], *, record: bool = True) -> bool:
    """Does a gap the agent named refer to ``path`` (its path, its field name, its record type, or one of its
    labels)? ``record`` False: not by its record type alone."""
    n = _norm(named).replace("_", " ")
    field = path.split(".")[-1].replace("_", " ")
    words = [path.replace("_", " "), field] + ([path.split(".")[0].replace("_", " ")] if record else []) + [
        _norm(a) for a in aliases]
    for word in words:
        w = _norm(word).replace("_", " ")
        if len(w) < 2:
            continue
        if re.fullmatch(r"[\x00-\x7f]+", w):
            if re.search(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])", n):
                return True
        elif w in n:
            return True
    return False


def gap_scores(named: Sequence[str], relevant: Sequence[str], labels: dict[str, list[str]]
               ) -> tuple[float | None, float | None]:
    """(precision, recall) of the named gaps against the oracle's hidden relevant paths.

    An oracle with no gaps (the view decides the task; the full view) has nothing to find and nothing to miss:
    both are None (the trial is left out of both means) whatever the agent lists, since the task asks it to list
    what it would request. Whether it saw that its view is enough is ``completeness_awareness``."""
    if not relevant:
        return None, None
    named = [n for n in named if n.strip()]
    hits = [any(gap_matches(n, p, labels.get(p, [])) for p in relevant) for n in named]
    precision = sum(hits) / len(named) if named else None
    recall = sum(any(gap_matches(n, p, labels.get(p, [])) for n in named) for p in relevant) / len(relevant)
    return precision, recall


def abstains(answer: str | None) -> bool:
    """Does an answer field say it declines to decide ("cannot decide", "unknown", "无法判断"...)?"""
    return bool(answer and _ABSTAIN.search(_norm(answer)))


def accepted_decisions(oracle: RoleOracle) -> list[str]:
    """The one rule for what a decision may be, given the view the agent had (docs/partial.md, "What a decision
    is scored against"):

    - a view that decides the task (``sufficient``): its answer, and nothing else (declining is wrong);
    - a view that does not (``sufficient`` false): declining (:data:`CANNOT_DECIDE`) is always accepted, and so
      is the label the view supports (``answer``: the rule with every fact the view does not show at its neutral
      default), whatever confidence it comes with; any other label is wrong, however it is flagged;
    - a view that supports no label (``undecidable``: a deciding fact reaches it only through a stale copy or
      two current sources that disagree): only declining. A label read off the stale or contradicted value, or
      any other, is wrong, flagged or not.

    The full view is a sufficient view of the full-data answer."""
    if oracle.undecidable:
        return [CANNOT_DECIDE]
    out = [oracle.answer] if oracle.answer is not None else []
    return out if oracle.sufficient else [*out, CANNOT_DECIDE]


def score_answer(task: Task, oracle: RoleOracle, final: Answer | ParseFailure, field_labels: dict[str, list[str]]
                 ) -> dict[str, Any]:
    """A trial's scores of its final answer against the oracle for the view the agent had (and, for decisions,
    against the full-data answer).

    The decision is a label, or :data:`CANNOT_DECIDE` when the answer names no label and declines ("cannot
    decide", "unknown", "无法判断"..., or anything else with ``sufficient: false``). It is right when it is one
    of :func:`accepted_decisions`. ``accepted`` keeps that list (as JSON: scores are scalars); ``gold`` is the
    accepted decision the agent gave when right, else the view's own answer (:data:`CANNOT_DECIDE` where it
    supports no label): the pair macro-F1 counts."""
    decision = bool(task.labels)
    parsed = not isinstance(final, ParseFailure)
    answer = final if isinstance(final, Answer) else Answer()
    label = match_label(answer.answer, task.labels) if decision else None
    said_sufficient = answer.sufficient
    if said_sufficient is None and answer.confidence is not None and decision:
        said_sufficient = answer.confidence >= 0.8 and not answer.missing
    declined = decision and parsed and label is None and (abstains(answer.answer) or answer.sufficient is False)
    if declined and said_sufficient is None:
        said_sufficient = False  # "cannot decide" says the evidence is not enough
    accepted = accepted_decisions(oracle) if decision else None
    predicted = (CANNOT_DECIDE if declined else label) if decision else None
    correct = predicted in accepted if accepted is not None else None
    reference = oracle.answer if oracle.answer is not None and not oracle.undecidable else CANNOT_DECIDE
    gold = (predicted if correct else reference) if decision else None
    precision, recall = gap_scores(answer.missing, oracle.hidden_relevant, field_labels)
    return {
        "parsed": parsed, "decision": decision, "oracle_sufficient": oracle.sufficient,
        "gold": gold, "accepted": json.dumps(accepted, ensure_ascii=False) if accepted is not None else None,
        "gold_full": task.oracle_full if decision else None,
        "predicted": predicted,
        "correct": correct,
        "correct_full": (label == task.oracle_full) if decision else None,
        "said_sufficient": said_sufficient,
        "aware": (said_sufficient == oracle.sufficient) if said_sufficient is not None else False,
        "unsafe_complete": (not oracle.sufficient and (said_sufficient is True or (
            answer.confidence is not None and answer.confidence >= 0.8 and decision))),
        "gap_precision": precision, "gap_recall": recall,
        "confidence": answer.confidence if decision and task.asks_confidence else None,
    }


def macro_f1(pairs: Sequence[tuple[str, str | None]]) -> float | None:
    """Macro-F1 over the gold labels present; a missing prediction counts as wrong."""
    if not pairs:
        return None
    classes = sorted({g for g, _ in pairs})
    f1s = []
    for c in classes:
        tp = sum(1 for g, p in pairs if g == c and p == c)
        fp = sum(1 for g, p in pairs if g != c and p == c)
        fn = sum(1 for g, p in pairs if g == c and p != c)
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(f1s) / len(f1s)


def ece(points: Sequence[tuple[float, bool]], bins: int = 10) -> float | None:
    """Expected calibration error of (confidence, correct) pairs, equal-width bins."""
    if not points:
        return None
    total = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        inside = [(c, ok) for c, ok in points if (lo <= c < hi) or (b == bins - 1 and c == 1.0)]
        if inside:
            conf = sum(c for c, _ in inside) / len(inside)
            acc = sum(ok for _, ok in inside) / len(inside)
            total += len(inside) / len(points) * abs(conf - acc)
    return total
