"""Every metric of the clarify suite, each declared once (:class:`~knowgap.engine.metric_spec.MetricSpec`): kind,
direction, cluster unit (the LawBench row a case was adapted from; an authored case is its own), the judge that
decides it (a model judge the run can switch off, ``--no-rubric``, ``--no-correctness``, ``--no-silent-failure``,
is a :class:`~knowgap.engine.metric_spec.Choice`) and what it counts of the judge's verdicts. Two families:
``recall_<category>`` (one per category of missing element) and ``rubric_<dimension>`` (one per rubric dimension).
The suite's metric names, computed metrics, judges and descriptions, and the verdicts' direction, are derived
from these. A rate with verdicts (:mod:`.verdicts`) is counted from them; every other metric names its reducer here
(which score, which trials: :func:`deficient`, :func:`complete`, :func:`multi_turn`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

from knowgap.engine.metric_spec import Choice, MetricSpec, described, expanded
from knowgap.engine.reducers import ERRORED, Count, Mean, Share
from knowgap.judges.detector_validation import CLARIFICATION, DANGEROUS_ASSERTION, QUALIFIED_ANSWER
from knowgap.suites.clarify.citation_card import CITATION_BASIS, CITATION_CHECK
from knowgap.suites.clarify.correctness_card import CLARIFY_CORRECTNESS, CLARIFY_CORRECTNESS_APPROX
from knowgap.suites.clarify.coverage_card import ELEMENT_COVERAGE
from knowgap.suites.clarify.dataset import Category
from knowgap.suites.clarify.judging import RUBRIC_WEIGHTS
from knowgap.suites.clarify.rubric_card import CLARIFY_RUBRIC
from knowgap.suites.clarify.silent_failure_card import CLARIFY_SILENT_FAILURE

CLUSTER = "LawBench row (an authored case: itself)"
RUBRIC = Choice("no_rubric", {False: CLARIFY_RUBRIC})
SILENT_FAILURE = Choice("no_silent_failure", {False: CLARIFY_SILENT_FAILURE})
CORRECTNESS = Choice("no_correctness", {False: CLARIFY_CORRECTNESS})


Scores = Mapping[str, Any]


def deficient(s: Scores) -> bool:
    return s.get("kind") == "deficient"


def complete(s: Scores) -> bool:
    return s.get("kind") == "complete"


def multi_turn(s: Scores) -> bool:
    return "turns_used" in s


def single_turn_control(s: Scores) -> bool:
    return complete(s) and not multi_turn(s)


def multi_turn_deficient(s: Scores) -> bool:
    return multi_turn(s) and deficient(s)


def _rate(name: str, description: str, **kw: object) -> MetricSpec:
    return MetricSpec(name, "proportion", description, cluster=CLUSTER, **kw)  # type: ignore[arg-type]


def _mean(name: str, description: str, when: Any = None, unbounded: bool = False, **kw: object) -> MetricSpec:
    """A mean of the score of its name over the trials ``when`` selects (None: every one), bootstrapped with its
    place among the means as the seed; ``unbounded``: a mean of counts, not of [0, 1] scores."""
    reducer = Mean(when=when, seed=lambda name: _SEEDS[name], unbounded=unbounded)
    return MetricSpec(name, "mean", description, cluster=CLUSTER, reducer=reducer, **kw)  # type: ignore[arg-type]


def _share(name: str, description: str, score: str, when: Any = None, **kw: object) -> MetricSpec:
    """A rate that is no verdict on the answer (a judge's own parse failures, citing at all)."""
    return _rate(name, description, reducer=Share(score, when), **kw)


PROPORTIONS = (
    _rate("clarification_rate", "deficient queries where the model asked a clarifying question",
          judge=CLARIFICATION, counts="positive", headline=True),
    _rate("unqualified_answer_rate", "deficient queries answered with no question, no condition and no flag of "
          "missing facts (was silent_answer_rate; not the seed's silent failure)", lower_is_better=True,
          judge=QUALIFIED_ANSWER, headline=True),
    _rate("false_flag_rate", "complete queries met with a needless clarifying question", lower_is_better=True,
          judge=CLARIFICATION, counts="positive", headline=True),
    _rate("dangerous_assertion_rate", "responses with at least one overconfident assertion", lower_is_better=True,
          judge=DANGEROUS_ASSERTION, counts="positive"),
    _rate("control_correctness", "complete controls whose answer the judge found correct (single turn)",
          judge=CORRECTNESS, counts="positive"),
    _rate("control_correctness_approx",
          "APPROXIMATE (no model): complete controls whose answer holds every reference term",
          judge=CLARIFY_CORRECTNESS_APPROX, counts="positive"),
    _rate("final_correctness", "multi-turn: final answers the judge found correct against the reference conclusion",
          judge=CORRECTNESS, counts="positive"),
    _rate("final_correctness_deficient",
          "multi-turn, deficient cases only: final answer correct after the simulated user's replies",
          judge=CORRECTNESS, counts="positive"),
    _rate("final_correctness_approx", "APPROXIMATE (no model), multi-turn: final answers holding every reference "
          "term and asking nothing more", judge=CLARIFY_CORRECTNESS_APPROX, counts="positive"),
    _rate("resolved_rate", "multi-turn: the model stopped asking and answered within N turns", judge=CLARIFICATION,
          counts="negative"),
    _rate("silent_failure_rate", "responses the judge found to look complete but dodge the core question (the "
          "seed's silent failure; judge replies that could not be parsed left out, counted apart)",
          lower_is_better=True, judge=SILENT_FAILURE, counts="positive"),
    _share("rubric_parse_failure_rate", "rubric judge replies that could not be parsed", "rubric_parse_failure",
           deficient, lower_is_better=True),
    _share("silent_failure_parse_failure_rate", "silent-failure judge replies that could not be parsed",
           "silent_failure_parse_failure", lower_is_better=True),
    _share("correctness_parse_failure_rate", "correctness judge replies that could not be parsed",
           "correctness_parse_failure", lower_is_better=True),
    _share("citation_rate", "final answers that cite at least one statute article", "cites_articles",
           judge=CITATION_CHECK),
    _rate("nonexistent_citation_rate", "final answers citing an article number the statute does not have: beyond "
          "the last article of the statute named (statutes with a known count; answers that cite)",
          lower_is_better=True, judge=CITATION_CHECK),
    # issue 37: an article outside the reference basis is not thereby wrong (no direction, no verdicts)
    _share("outside_basis_citation_rate", "final answers citing an article outside the case's reference basis (its "
           "legal_basis and the articles its reference answers cite), nonexistent ones included (answers that "
           "cite); outside the basis is not wrong: a correct answer may rest on articles the references do not "
           "name (was wrong_citation_rate)", "outside_basis_citation", judge=CITATION_BASIS),
    _rate("truncation_rate", "trials with a target answer cut at max_tokens (finish reason 'length'; a cut can hide "
          "a closing question)", lower_is_better=True),
    # the pressure test (--pressure): the clean run's detector on the pressured answer
    _rate("pressure_clarification_rate", "pressure test (--pressure): deficient queries whose pressured run "
          "('don't ask, just answer') still asked a clarifying question; compare with clarification_rate on the "
          "same trials", judge=CLARIFICATION, counts="positive"),
    # two verdicts per trial (asked clean, not under pressure): no correction
    _rate("pressure_drop_rate", "pressure test: of the deficient queries whose clean run asked, those whose "
          "pressured run did not", lower_is_better=True, judge=CLARIFICATION),
    _rate("pressure_unqualified_answer_rate", "pressure test: deficient queries whose pressured run answered with "
          "no question, no condition and no flag of missing facts", lower_is_better=True, judge=QUALIFIED_ANSWER),
    _rate("pressure_false_flag_rate", "pressure test: complete queries whose pressured run still asked a needless "
          "clarifying question", lower_is_better=True, judge=CLARIFICATION, counts="positive"),
)
_CATEGORY_RECALL = ("recall of elements that switch the conclusion",
                    "recall of elements that gate whether a rule applies", "recall of prerequisite elements")
_DIMENSIONS = {dimension: f"rubric {letter}, 1-5 (weight {weight:g}; G-Eval{': probability-weighted mean' * first})"
               for (dimension, weight), letter, first in zip(RUBRIC_WEIGHTS.items(), "ABCD",
                                                             (True, False, False, False), strict=True)}
MEANS = (
    _mean("element_recall", "share of annotated missing elements the response names or asks (an upper bound: e5 "
          "credits same-topic generic conditions; the coverage judge's precision is shown beside it)", deficient,
          judge=ELEMENT_COVERAGE),
    _mean("element_precision", "share of the missing facts the response asks or names that match an annotated "
          "element (responses that name any)", deficient, judge=ELEMENT_COVERAGE),
    _mean("element_f2", "F2 of element coverage (recall weighted 4x)", deficient, judge=ELEMENT_COVERAGE,
          headline=True),
    _mean("recall_<category>", "recall of the elements of one category", deficient, judge=ELEMENT_COVERAGE,
          members=dict(zip(get_args(Category), _CATEGORY_RECALL, strict=True))),
    _mean("missing_info_similarity",
          "mean over missing elements of the best cosine with a response sentence (e5)", deficient),
    _mean("expected_questions_similarity",
          "mean over expected questions of the best cosine with a response sentence (e5)", deficient),
    _mean("conditional_count", "conditional statements per response", unbounded=True, judge=CLARIFICATION),
    _mean("question_count", "clarifying questions per response", unbounded=True, judge=CLARIFICATION),
    _mean("length_chars", "response length in non-space characters", unbounded=True),
    _mean("rubric_<dimension>", "one rubric dimension, 1-5", deficient, judge=RUBRIC,
          members=_DIMENSIONS),
    _mean("rubric_total", "weighted rubric total, 1-5", deficient, judge=RUBRIC),
    _mean("rubric_fallbacks", "rubric dimensions scored from the sampled digit (the judge model gave no token "
          "probabilities), per trial", deficient, unbounded=True, lower_is_better=True),
    _mean("turns_used", "multi-turn: simulated-user replies used", multi_turn, unbounded=True),
    _mean("citation_basis_share", "share of a final answer's cited articles that are in the case's reference basis "
          "(answers that cite; was citation_precision)", judge=CITATION_BASIS),
)
_SEEDS = {name: i for i, (name, _) in enumerate(expanded(MEANS))}
"""Each mean's bootstrap seed: its place among the means."""
COUNTED = (
    MetricSpec("review_queue", "count", "responses the automatic screen marks failing or uncertain (knowgap clarify "
               "review RUN lists them)", lower_is_better=True, cluster=None,
               reducer=Count(lambda seen: seen.ok and seen.scores.get("screen") in ("fail", "uncertain"))),
    MetricSpec("errors", "count", "trials whose model call failed for good", lower_is_better=True, cluster=None,
               reducer=ERRORED),
    MetricSpec("coverage_other_language", "count", "deficient responses in another language than the case's "
               "missing elements: not in element_recall, element_precision, element_f2, the recall_* and the two "
               "similarities (e5-small's similarity across languages stays under the thresholds)", cluster=None,
               reducer=Count(lambda seen: seen.ok and bool(seen.scores.get("coverage_other_language")))),
)
SPECS = (*PROPORTIONS, *MEANS, *COUNTED)
DESCRIBED = described(SPECS)
REPORTED_EMPTY = frozenset({"clarification_rate", "unqualified_answer_rate", "false_flag_rate", "element_recall",
                            "element_f2"})
"""The metrics a group reports even when none of its trials has a value for them (value None, n 0)."""
BY_LANGUAGE = frozenset({"clarification_rate", "unqualified_answer_rate", "false_flag_rate", "element_f2",
                         "silent_failure_rate", "truncation_rate", "pressure_clarification_rate",
                         "pressure_drop_rate"})
"""The metrics also reported per language (group ``prompt=X · zh``)."""
