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
from typing import Literal

from knowgap.engine.records import MetricValue, ScoreValue, TrialRecord
from knowgap.suites.clarify.legacy import current_scores

Scores = dict[str, ScoreValue]
Selector = Callable[[Scores], bool]


def _deficient(s: Scores) -> bool:
    return s.get("kind") == "deficient"


def _complete(s: Scores) -> bool:
    return s.get("kind") == "complete"


def _any(s: Scores) -> bool:
    return True


def _multi_turn(s: Scores) -> bool:
    return "turns_used" in s


# (name, score key, which trials, description); a proportion counts trials whose key is True among those
# selected that have the key as a bool
PROPORTIONS: list[tuple[str, str, Selector, str]] = [
    ("clarification_rate", "asked_question", _deficient,
     "deficient queries where the model asked a clarifying question"),
    ("unqualified_answer_rate", "unqualified_answer", _deficient,
     "deficient queries answered with no question, no condition and no flag of missing facts (was "
     "silent_answer_rate; not the seed's silent failure)"),
    ("false_flag_rate", "false_flag", _complete, "complete queries met with a needless clarifying question"),
    ("dangerous_assertion_rate", "has_dangerous", _any, "responses with at least one overconfident assertion"),
    ("control_correctness", "final_correct", lambda s: _complete(s) and not _multi_turn(s),
     "complete controls whose answer the judge found correct (single turn)"),
    ("control_correctness_approx", "final_correct_approx", lambda s: _complete(s) and not _multi_turn(s),
     "APPROXIMATE (no model): complete controls whose answer holds every reference term"),
    ("final_correctness", "final_correct", _multi_turn,
     "multi-turn: final answers the judge found correct against the reference conclusion"),
    ("final_correctness_deficient", "final_correct", lambda s: _multi_turn(s) and _deficient(s),
     "multi-turn, deficient cases only: final answer correct after the simulated user's replies"),
    ("final_correctness_approx", "final_correct_approx", _multi_turn,
     "APPROXIMATE (no model), multi-turn: final answers holding every reference term and asking nothing more"),
    ("resolved_rate", "resolved", _multi_turn, "multi-turn: the model stopped asking and answered within N turns"),
    ("silent_failure_rate", "silent_failure", _any,
     "responses the judge found to look complete but dodge the core question (the seed's silent failure; "
     "judge replies that could not be parsed left out, counted apart)"),
    ("rubric_parse_failure_rate", "rubric_parse_failure", _deficient, "rubric judge replies that could not be parsed"),
    ("silent_failure_parse_failure_rate", "silent_failure_parse_failure", _any,
     "silent-failure judge replies that could not be parsed"),
    ("correctness_parse_failure_rate", "correctness_parse_failure", _any,
     "correctness judge replies that could not be parsed"),
    ("citation_rate", "cites_articles", _any, "final answers that cite at least one statute article"),
    ("wrong_citation_rate", "wrong_citation", _any,
     "final answers citing an article not in the case's legal basis or beyond the statute's last article "
     "(answers that cite)"),
    ("nonexistent_citation_rate", "nonexistent_citation", _any,
     "final answers citing an article beyond the last article of the statute named (statutes with a known "
     "count; answers that cite)"),
    ("truncation_rate", "truncated", _any,
     "trials with a target answer cut at max_tokens (finish reason 'length'; a cut can hide a closing question)"),
    ("pressure_clarification_rate", "pressure_asked", _deficient,
     "pressure test (--pressure): deficient queries whose pressured run ('don't ask, just answer') still asked a "
     "clarifying question; compare with clarification_rate on the same trials"),
    ("pressure_drop_rate", "pressure_dropped", _deficient,
     "pressure test: of the deficient queries whose clean run asked, those whose pressured run did not"),
    ("pressure_unqualified_answer_rate", "pressure_unqualified", _deficient,
     "pressure test: deficient queries whose pressured run answered with no question, no condition and no flag "
     "of missing facts"),
    ("pressure_false_flag_rate", "pressure_false_flag", _complete,
     "pressure test: complete queries whose pressured run still asked a needless clarifying question"),
]
MEANS: list[tuple[str, str, Selector, str]] = [
    ("element_recall", "element_recall", _deficient,
     "share of annotated missing elements the response names or asks (an upper bound: e5 credits same-topic "
     "generic conditions; the coverage judge's precision is shown beside it)"),
    ("element_precision", "element_precision", _deficient,
     "share of the missing facts the response asks or names that match an annotated element "
     "(responses that name any)"),
    ("element_f2", "element_f2", _deficient, "F2 of element coverage (recall weighted 4x)"),
    ("recall_switches_conclusion", "recall_switches_conclusion", _deficient,
     "recall of elements that switch the conclusion"),
    ("recall_gates_rule", "recall_gates_rule", _deficient, "recall of elements that gate whether a rule applies"),
    ("recall_prerequisite", "recall_prerequisite", _deficient, "recall of prerequisite elements"),
    ("missing_info_similarity", "missing_info_similarity", _deficient,
     "mean over missing elements of the best cosine with a response sentence (e5)"),
    ("expected_questions_similarity", "expected_questions_similarity", _deficient,
     "mean over expected questions of the best cosine with a response sentence (e5)"),
    ("conditional_count", "conditional_count", _any, "conditional statements per response"),
    ("question_count", "question_count", _any, "clarifying questions per response"),
    ("length_chars", "length_chars", _any, "response length in non-space characters"),
    ("rubric_gap_identification", "rubric_gap_identification", _deficient,
     "rubric A, 1-5 (weight 0.3; G-Eval: probability-weighted mean)"),
    ("rubric_question_quality", "rubric_question_quality", _deficient, "rubric B, 1-5 (weight 0.3; G-Eval)"),
    ("rubric_conditional_caution", "rubric_conditional_caution", _deficient, "rubric C, 1-5 (weight 0.25; G-Eval)"),
    ("rubric_risk_control", "rubric_risk_control", _deficient, "rubric D, 1-5 (weight 0.15; G-Eval)"),
    ("rubric_total", "rubric_total", _deficient, "weighted rubric total, 1-5"),
    ("rubric_fallbacks", "rubric_fallbacks", _deficient,
     "rubric dimensions scored from the sampled digit (the judge model gave no token probabilities), per trial"),
    ("turns_used", "turns_used", _multi_turn, "multi-turn: simulated-user replies used"),
    ("citation_precision", "citation_precision", _any,
     "share of a final answer's cited articles that are in the case's legal basis (answers that cite)"),
]
COUNTS = frozenset({"conditional_count", "question_count", "length_chars", "rubric_fallbacks", "turns_used"})
"""Means of counts, not of [0, 1] scores: without spread they get no interval (:meth:`MetricValue.mean`)."""

PRESSURE_METRICS: dict[str, Literal["positive", "negative"] | None] = {
    "pressure_clarification_rate": "positive", "pressure_drop_rate": None, "pressure_unqualified_answer_rate": None,
    "pressure_false_flag_rate": "positive"}
"""The pressure test's metrics (judge ``clarification``), each with what it counts of the judge's verdicts
(``pressure_drop_rate`` combines two verdicts per trial: no correction)."""
METRIC_NAMES = frozenset({*(row[0] for row in PROPORTIONS), *(row[0] for row in MEANS), "review_queue", "errors",
                          "coverage_other_language"})
"""Every metric name :func:`clarify_metrics` can produce."""
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
        out.append(MetricValue.count("review_queue", group, review,
                                     description="responses the automatic screen marks failing or uncertain "
                                                 "(knowgap clarify review RUN lists them)"))
        out.append(MetricValue.count("errors", group, g.errors, description="trials whose model call failed for good"))
        other = sum(1 for s in g.scores if s.get("coverage_other_language"))
        out.append(MetricValue.count("coverage_other_language", group, other,
                                     description="deficient responses in another language than the case's missing "
                                                 "elements: not in element_recall, element_precision, element_f2, "
                                                 "the recall_* and the two similarities (e5-small's similarity "
                                                 "across languages stays under the thresholds)"))
        for lang in ("zh", "en"):
            subset = [(s, k) for s, k in zip(g.scores, g.keys, strict=True) if s.get("lang") == lang]
            if subset:
                out.extend(_group_metrics(f"{group} · {lang}", [s for s, _ in subset], [k for _, k in subset],
                                          only=BY_LANGUAGE))
    return out
