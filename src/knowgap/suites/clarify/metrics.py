"""Metrics of a clarify run per configuration (system prompt version), each with a 95% CI: Wilson intervals for
proportions, a seeded bootstrap for means. Key rates are also split by language (group ``prompt=X · zh``).

Intervals are clustered (:mod:`knowgap.stats`) by the case's source: cases adapted from one LawBench row
(``source.dataset`` + ``source.row``) form one cluster, any other case (authored) is its own; repeats of a case
count once. The suite passes the key of each case (``ClarifySuite.metrics``); a case it does not know (an older
run's) is its own cluster."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field

from knowgap.engine.metric_spec import described
from knowgap.engine.records import MetricValue, ScoreValue, TrialRecord
from knowgap.suites.clarify.legacy import current_scores
from knowgap.suites.clarify.specs import SPECS

Scores = dict[str, ScoreValue]
Selector = Callable[[Scores], bool]
DESCRIBED = described(SPECS)


def _deficient(s: Scores) -> bool:
    return s.get("kind") == "deficient"


def _complete(s: Scores) -> bool:
    return s.get("kind") == "complete"


def _any(s: Scores) -> bool:
    return True


def _multi_turn(s: Scores) -> bool:
    return "turns_used" in s


# (name, score key, which trials; the description is the metric's spec's): a proportion counts trials whose
# key is True among those selected that have the key as a bool
_PROPORTIONS_ROWS: list[tuple[str, str, Selector]] = [
    ("clarification_rate", "asked_question", _deficient),
    ("unqualified_answer_rate", "unqualified_answer", _deficient),
    ("false_flag_rate", "false_flag", _complete),
    ("dangerous_assertion_rate", "has_dangerous", _any),
    ("control_correctness", "final_correct", lambda s: _complete(s) and not _multi_turn(s)),
    ("control_correctness_approx", "final_correct_approx", lambda s: _complete(s) and not _multi_turn(s)),
    ("final_correctness", "final_correct", _multi_turn),
    ("final_correctness_deficient", "final_correct", lambda s: _multi_turn(s) and _deficient(s)),
    ("final_correctness_approx", "final_correct_approx", _multi_turn),
    ("resolved_rate", "resolved", _multi_turn),
    ("silent_failure_rate", "silent_failure", _any),
    ("rubric_parse_failure_rate", "rubric_parse_failure", _deficient),
    ("silent_failure_parse_failure_rate", "silent_failure_parse_failure", _any),
    ("correctness_parse_failure_rate", "correctness_parse_failure", _any),
    ("citation_rate", "cites_articles", _any),
    ("nonexistent_citation_rate", "nonexistent_citation", _any),
    ("outside_basis_citation_rate", "outside_basis_citation", _any),
    ("truncation_rate", "truncated", _any),
    ("pressure_clarification_rate", "pressure_asked", _deficient),
    ("pressure_drop_rate", "pressure_dropped", _deficient),
    ("pressure_unqualified_answer_rate", "pressure_unqualified", _deficient),
    ("pressure_false_flag_rate", "pressure_false_flag", _complete),
]
PROPORTIONS: list[tuple[str, str, Selector, str]] = [(n, k, s, DESCRIBED[n]) for n, k, s in _PROPORTIONS_ROWS]
_MEANS_ROWS: list[tuple[str, str, Selector]] = [
    ("element_recall", "element_recall", _deficient),
    ("element_precision", "element_precision", _deficient),
    ("element_f2", "element_f2", _deficient),
    ("recall_switches_conclusion", "recall_switches_conclusion", _deficient),
    ("recall_gates_rule", "recall_gates_rule", _deficient),
    ("recall_prerequisite", "recall_prerequisite", _deficient),
    ("missing_info_similarity", "missing_info_similarity", _deficient),
    ("expected_questions_similarity", "expected_questions_similarity", _deficient),
    ("conditional_count", "conditional_count", _any),
    ("question_count", "question_count", _any),
    ("length_chars", "length_chars", _any),
    ("rubric_gap_identification", "rubric_gap_identification", _deficient),
    ("rubric_question_quality", "rubric_question_quality", _deficient),
    ("rubric_conditional_caution", "rubric_conditional_caution", _deficient),
    ("rubric_risk_control", "rubric_risk_control", _deficient),
    ("rubric_total", "rubric_total", _deficient),
    ("rubric_fallbacks", "rubric_fallbacks", _deficient),
    ("turns_used", "turns_used", _multi_turn),
    ("citation_basis_share", "citation_basis_share", _any),
]
MEANS: list[tuple[str, str, Selector, str]] = [(n, k, s, DESCRIBED[n]) for n, k, s in _MEANS_ROWS]
COUNTS = frozenset({"conditional_count", "question_count", "length_chars", "rubric_fallbacks", "turns_used"})
"""Means of counts, not of [0, 1] scores: without spread they get no interval (:meth:`MetricValue.mean`)."""

BY_LANGUAGE = {"clarification_rate", "unqualified_answer_rate", "false_flag_rate", "element_f2", "silent_failure_rate",
               "truncation_rate", "pressure_clarification_rate", "pressure_drop_rate"}


@dataclass
class _Group:
    scores: list[Scores] = field(default_factory=list)
    keys: list[Hashable] = field(default_factory=list)
    errors: int = 0


def _group_metrics(group: str, scores: list[Scores], keys: list[Hashable],
                   only: set[str] | None = None) -> list[MetricValue]:
    out = []
    for name, key, select, text in PROPORTIONS:
        if only is not None and name not in only:
            continue
        chosen = [(bool(s[key]), k) for s, k in zip(scores, keys, strict=True)
                  if select(s) and isinstance(s.get(key), bool)]
        if chosen or name in {"clarification_rate", "unqualified_answer_rate", "false_flag_rate"}:
            out.append(MetricValue.proportion_of(name, group, [v for v, _ in chosen], [k for _, k in chosen],
                                                 description=text))
    for i, (name, key, select, text) in enumerate(MEANS):
        if only is not None and name not in only:
            continue
        nums = [(float(v), k) for s, k in zip(scores, keys, strict=True)
                if select(s) and isinstance(v := s.get(key), int | float) and not isinstance(v, bool)]
        if nums or name in {"element_recall", "element_f2"}:
            out.append(MetricValue.mean(name, group, [v for v, _ in nums], description=text, seed=i,
                                        keys=[k for _, k in nums], unbounded=name in COUNTS))
    return out


def clarify_metrics(records: Iterable[TrialRecord], cluster_of: Mapping[str, str] | None = None
                    ) -> list[MetricValue]:
    """``cluster_of[case_id]``: the case's cluster key (its LawBench row); a case without one is its own."""
    groups: dict[str, _Group] = defaultdict(_Group)
    for r in records:
        g = groups[r.config_id]
        if r.status != "ok":
            g.errors += 1
            continue
        s = current_scores(r.scores)  # older runs stored some scores under other names
        s["has_dangerous"] = (s.get("dangerous_count") or 0) > 0  # type: ignore[operator]
        g.scores.append(s)
        g.keys.append((cluster_of or {}).get(r.case_id, f"case:{r.case_id}"))
    out: list[MetricValue] = []
    for group in sorted(groups):
        g = groups[group]
        out.extend(_group_metrics(group, g.scores, g.keys))
        review = sum(1 for s in g.scores if s.get("screen") in ("fail", "uncertain"))
        out.append(MetricValue.count("review_queue", group, review, description=DESCRIBED["review_queue"]))
        out.append(MetricValue.count("errors", group, g.errors, description=DESCRIBED["errors"]))
        other = sum(1 for s in g.scores if s.get("coverage_other_language"))
        out.append(MetricValue.count("coverage_other_language", group, other,
                                     description=DESCRIBED["coverage_other_language"]))
        for lang in ("zh", "en"):
            subset = [(s, k) for s, k in zip(g.scores, g.keys, strict=True) if s.get("lang") == lang]
            if subset:
                out.extend(_group_metrics(f"{group} · {lang}", [s for s, _ in subset], [k for _, k in subset],
                                          only=BY_LANGUAGE))
    return out
