"""Every metric of the clarify suite, each declared once (:class:`~knowgap.engine.metric_spec.MetricSpec`): kind,
direction, cluster unit (the LawBench row a case was adapted from; an authored case is its own), the judge that
decides it (a model judge the run can switch off, ``--no-rubric``, ``--no-correctness``, ``--no-silent-failure``,
is a :class:`~knowgap.engine.metric_spec.Choice`) and what it counts of the judge's verdicts. Two families:
``recall_<category>`` (one per category of missing element) and ``rubric_<dimension>`` (one per rubric dimension).
The suite's metric names, computed metrics, judges and descriptions, and the verdicts' direction, are derived
from these; how each is counted (which score, which trials) stays in :mod:`.metrics`."""

from __future__ import annotations

from typing import get_args

from knowgap.engine.metric_spec import Choice, MetricSpec, described
from knowgap.judges.detector_validation import CLARIFICATION, DANGEROUS_ASSERTION
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


def _rate(name: str, description: str, **kw: object) -> MetricSpec:
    return MetricSpec(name, "proportion", description, cluster=CLUSTER, **kw)  # type: ignore[arg-type]


def _mean(name: str, description: str, **kw: object) -> MetricSpec:
    return MetricSpec(name, "mean", description, cluster=CLUSTER, **kw)  # type: ignore[arg-type]


PROPORTIONS = (
    _rate("clarification_rate", "deficient queries where the model asked a clarifying question",
          judge=CLARIFICATION, counts="positive", headline=True),
    _rate("unqualified_answer_rate", "deficient queries answered with no question, no condition and no flag of "
          "missing facts (was silent_answer_rate; not the seed's silent failure)", lower_is_better=True,
          judge=CLARIFICATION, headline=True),
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
    _rate("rubric_parse_failure_rate", "rubric judge replies that could not be parsed", lower_is_better=True),
    _rate("silent_failure_parse_failure_rate", "silent-failure judge replies that could not be parsed",
          lower_is_better=True),
    _rate("correctness_parse_failure_rate", "correctness judge replies that could not be parsed",
          lower_is_better=True),
    _rate("citation_rate", "final answers that cite at least one statute article", judge=CITATION_CHECK),
    _rate("nonexistent_citation_rate", "final answers citing an article number the statute does not have: beyond "
          "the last article of the statute named (statutes with a known count; answers that cite)",
          lower_is_better=True, judge=CITATION_CHECK),
    # issue 37: an article outside the reference basis is not thereby wrong (no direction, no verdicts)
    _rate("outside_basis_citation_rate", "final answers citing an article outside the case's reference basis (its "
          "legal_basis and the articles its reference answers cite), nonexistent ones included (answers that "
          "cite); outside the basis is not wrong: a correct answer may rest on articles the references do not name "
          "(was wrong_citation_rate)", judge=CITATION_BASIS),
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
          "no question, no condition and no flag of missing facts", lower_is_better=True, judge=CLARIFICATION),
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
          "credits same-topic generic conditions; the coverage judge's precision is shown beside it)",
          judge=ELEMENT_COVERAGE),
    _mean("element_precision", "share of the missing facts the response asks or names that match an annotated "
          "element (responses that name any)", judge=ELEMENT_COVERAGE),
    _mean("element_f2", "F2 of element coverage (recall weighted 4x)", judge=ELEMENT_COVERAGE, headline=True),
    _mean("recall_<category>", "recall of the elements of one category", judge=ELEMENT_COVERAGE,
          members=dict(zip(get_args(Category), _CATEGORY_RECALL, strict=True))),
    _mean("missing_info_similarity",
          "mean over missing elements of the best cosine with a response sentence (e5)"),
    _mean("expected_questions_similarity",
          "mean over expected questions of the best cosine with a response sentence (e5)"),
    _mean("conditional_count", "conditional statements per response", judge=CLARIFICATION),
    _mean("question_count", "clarifying questions per response", judge=CLARIFICATION),
    _mean("length_chars", "response length in non-space characters"),
    _mean("rubric_<dimension>", "one rubric dimension, 1-5", judge=RUBRIC,
          members=_DIMENSIONS),
    _mean("rubric_total", "weighted rubric total, 1-5", judge=RUBRIC),
    _mean("rubric_fallbacks", "rubric dimensions scored from the sampled digit (the judge model gave no token "
          "probabilities), per trial", lower_is_better=True),
    _mean("turns_used", "multi-turn: simulated-user replies used"),
    _mean("citation_basis_share", "share of a final answer's cited articles that are in the case's reference basis "
          "(answers that cite; was citation_precision)", judge=CITATION_BASIS),
)
COUNTED = (
    MetricSpec("review_queue", "count", "responses the automatic screen marks failing or uncertain (knowgap clarify "
               "review RUN lists them)", lower_is_better=True, cluster=None),
    MetricSpec("errors", "count", "trials whose model call failed for good", lower_is_better=True, cluster=None),
    MetricSpec("coverage_other_language", "count", "deficient responses in another language than the case's "
               "missing elements: not in element_recall, element_precision, element_f2, the recall_* and the two "
               "similarities (e5-small's similarity across languages stays under the thresholds)", cluster=None),
)
SPECS = (*PROPORTIONS, *MEANS, *COUNTED)
DESCRIBED = described(SPECS)
