"""The validity card of the ``element-coverage`` judge, measured on real replies (issue 37, the card rule).

The labelled set is ``judges/data/labelled/clarify_coverage.jsonl`` (:mod:`knowgap.suites.clarify.labelled_replies`):
replies of two local models to the clarify suite's deficient cases, each annotated missing element labelled
covered or not by rule covered-1 (``judges/data/labelled/clarify_cards_rule.md``) before the judge ran on them.
Each reply is scored as a run scores it (:func:`~knowgap.suites.clarify.scoring.score_response`) and an element is
judged covered when it is among the reply's ``elements_covered``. The thresholds
(:data:`~knowgap.suites.clarify.coverage.THRESHOLDS`) were fitted on the 82 hand-written calibration pairs, not on
these replies, so the figures are held out.

The card's ``extra`` holds the judge's **precision** (of the pairs it calls covered, the share labelled covered:
Wilson 95% CI, overall and per language). Element recall counts every such call, so this is how far it can
over-credit: the reports show it beside ``element_recall`` (:mod:`knowgap.suites.clarify.recall_bound`). The
calibration pairs stay as a discrimination check (:func:`constructed_check`: leave-one-element-out, keys
``constructed_*``); constructed pairs never make the card reportable alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from knowgap.errors import InputError
from knowgap.jsonl import read_models
from knowgap.judges.cards import (
    Estimate,
    KnownFailure,
    Labelling,
    ValidityCard,
    binary_card,
    binary_measures,
    confusion_of,
    sha256_files,
)
from knowgap.judges.judge import Judge
from knowgap.judges.known_failures import construct_entry
from knowgap.judges.labelled_sets import labelled_file, stratified
from knowgap.judges.offline_cards import sample_method
from knowgap.judges.validation import stratified_sample
from knowgap.stats import wilson
from knowgap.suites.clarify import coverage
from knowgap.suites.clarify.coverage import best_threshold, load_pairs, pair_scores
from knowgap.suites.clarify.dataset import CASES_FILE, ClarifyCase, load_cases
from knowgap.suites.clarify.labelled_replies import RULE_FILE, CoverageReply, ElementLabel, coverage_replies
from knowgap.suites.clarify.scoring import score_response
from knowgap.text import detect_lang
from knowgap.text.embed import default_embedder


def _shipped(lang: str) -> float:
    return coverage.THRESHOLDS.get(lang, coverage.THRESHOLDS["en"])


def precision(name: str, verdicts: Sequence[bool | None], labels: Sequence[bool]) -> dict[str, Estimate | float]:
    """``{name: estimate, name_n: n}``: of the n items judged positive, the share labelled positive, with its
    Wilson 95% interval (no value when none was judged positive)."""
    called = [label for verdict, label in zip(verdicts, labels, strict=True) if verdict]
    if not called:
        return {name: Estimate(value=None), f"{name}_n": 0.0}
    low, high = wilson(sum(called), len(called))
    return {name: Estimate(value=sum(called) / len(called), ci_low=low, ci_high=high), f"{name}_n": float(len(called))}


def constructed_check(limit: int | None = None) -> dict[str, Estimate | float | str]:
    """The discrimination check on the 82 hand-written calibration pairs (constructed, not real replies): held-out
    (leave-one-element-out) agreement of the threshold rule with their labels, every pair of an element judged with
    a threshold fitted, per language, by :func:`~knowgap.suites.clarify.coverage.best_threshold` on the other
    elements' pairs; the shipped thresholds' in-sample figures beside it. Keys start with ``constructed_``."""
    pairs = load_pairs(coverage.CALIBRATION_FILE)
    labels = [p.match for p in pairs]
    picked = stratified_sample(pairs, labels, limit)
    pairs, labels = [pairs[i] for i in picked], [labels[i] for i in picked]
    scores = pair_scores(pairs, default_embedder())
    langs = [detect_lang(p.element) for p in pairs]
    held_out: list[bool | None] = [None] * len(pairs)
    for element in dict.fromkeys(p.element for p in pairs):
        test = [i for i, p in enumerate(pairs) if p.element == element]
        lang = langs[test[0]]
        train = [i for i, p in enumerate(pairs) if p.element != element and langs[i] == lang]
        if len({labels[i] for i in train}) < 2:  # no threshold can be fitted: the language's shipped one
            threshold = _shipped(lang)
        else:
            threshold = best_threshold([scores[i] for i in train], [labels[i] for i in train])
        for i in test:
            held_out[i] = scores[i] >= threshold
    shipped = [s >= _shipped(lang) for s, lang in zip(scores, langs, strict=True)]
    measures = binary_measures(confusion_of(held_out, labels)[0])
    extra: dict[str, Estimate | float | str] = {
        "constructed_n": float(len(pairs)),
        "constructed_balanced_accuracy_held_out": measures["balanced_accuracy"],
        "constructed_in_sample_balanced_accuracy_shipped_thresholds":
            binary_measures(confusion_of(shipped, labels)[0])["balanced_accuracy"]}
    extra.update(precision("constructed_precision_held_out", held_out, labels))
    return extra


def _cases_of(replies: Sequence[CoverageReply], path: Path) -> dict[str, ClarifyCase]:
    """The clarify case of each reply, checked: a reply naming an unknown case, or elements that are not its case's
    missing information in order, is an InputError naming the file, line and field."""
    cases = {c.id: c for c in load_cases(CASES_FILE)}
    for line, row in enumerate(replies, start=1):
        case = cases.get(row.case_id)
        if case is None or not case.deficient:
            raise InputError(str(path), f"{row.case_id!r} is not a deficient clarify case", line=line,
                             field="case_id")
        if [m.text for m in case.missing_information] != [e.text for e in row.elements]:
            raise InputError(str(path), f"not case {case.id}'s missing information, in its order", line=line,
                             field="elements")
    return cases


def _covered_verdicts(rows: Sequence[CoverageReply], cases: dict[str, ClarifyCase]) -> list[list[bool | None]]:
    """Per reply, the judge's verdict on each of its case's missing elements, as a run scores the reply
    (:func:`~knowgap.suites.clarify.scoring.score_response`): covered when the element is among
    ``elements_covered``; None (counted wrong) for a reply the judge does not score (another language)."""
    embedder = default_embedder()
    out: list[list[bool | None]] = []
    for row in rows:
        output, scores = score_response(cases[row.case_id], row.reply, embedder)
        covered = set(output.get("elements_covered", ()))
        out.append([None if scores.get("coverage_other_language") else e.text in covered for e in row.elements])
    return out


def validate_element_coverage(data_dir: Path | None = None, limit: int | None = None, judge_model: str | None = None,
                              progress: Callable[[int, int], None] | None = None, *,
                              path: Path | None = None) -> ValidityCard:
    """The element-coverage judge on real replies to the clarify cases: per (missing element, reply) pair of
    ``judges/data/labelled/clarify_coverage.jsonl`` (labelled by rule covered-1 before the judge ran), is the
    element among those the judge credits? ``limit`` draws a seeded label-balanced sample of pairs. ``extra``:
    precision (of the pairs it credits, the share labelled covered; held out: the thresholds were fitted on other
    pairs), overall and per language, sensitivity and specificity per category, and the constructed check on the
    calibration pairs (:func:`constructed_check`). ``data_dir`` and ``judge_model`` are not used; ``path``: another
    file in the same format (tests)."""
    replies, path = coverage_replies(path)
    cases = _cases_of(replies, path)
    pairs = [(r, e) for r in replies for e in r.elements]
    chosen = stratified([e.covered for _, e in pairs], limit)
    rows = [pairs[i] for i in chosen]
    labels = [e.covered for _, e in rows]
    by_reply = list(dict.fromkeys(r.id for r, _ in rows))
    start = time.perf_counter()
    needed = [r for r in replies if r.id in set(by_reply)]
    verdict_of = {(r.id, e.text): v for r, vs in zip(needed, _covered_verdicts(needed, cases), strict=True)
                  for e, v in zip(r.elements, vs, strict=True)}

    def decide(i: int) -> bool | None:
        reply, element = rows[i]
        return verdict_of[(reply.id, element.text)]

    verdicts = [decide(i) for i in range(len(rows))]
    if progress:
        progress(len(rows), len(rows))
    seconds = time.perf_counter() - start
    extra: dict[str, Estimate | float | str] = {}
    extra.update(precision(PRECISION, verdicts, labels))
    for group, members in _groups(rows).items():
        measures = binary_measures(confusion_of([verdicts[i] for i in members], [labels[i] for i in members])[0])
        for measure in ("sensitivity", "specificity"):
            if measures[measure].value is not None:
                extra[f"{measure}_{group}"] = measures[measure]
        if group in ("zh", "en"):
            extra.update(precision(f"{PRECISION}_{group}", [verdicts[i] for i in members],
                                   [labels[i] for i in members]))
    extra.update(constructed_check())
    return binary_card("element-coverage", coverage.VERSION, verdicts, labels, positive="the text covers the element",
                       dataset=f"judges/data/labelled/{path.name}",
                       dataset_sha256=sha256_files([path, coverage.CALIBRATION_FILE]), seconds=seconds,
                       method=sample_method(len(pairs), chosen, limit, f"(missing element, reply) pairs of "
                                                                       f"{len(replies)} real replies")
                       + "; each reply scored as a run scores it; the 82 calibration pairs (constructed) are a "
                         "discrimination check in extra (constructed_*)",
                       extra=extra, notes=NOTES, claim=CLAIM, item_languages=[r.lang for r, _ in rows],
                       writers=[r.model for r, _ in rows], replies_how=REPLIES_HOW, labelling=LABELLING)


def _groups(rows: Sequence[tuple[CoverageReply, ElementLabel]]) -> dict[str, list[int]]:
    """Item indices per model, per language and per element category."""
    groups: dict[str, list[int]] = {}
    for i, (reply, element) in enumerate(rows):
        for group in (reply.model, reply.lang, element.category):
            groups.setdefault(group, []).append(i)
    return dict(sorted(groups.items()))


PRECISION = "precision_held_out"
"""The key of the precision the reports print beside element_recall (:mod:`knowgap.suites.clarify.recall_bound`)."""
CLAIM = ("clarify.element_recall, element_precision, element_f2, recall_*: share of annotated missing elements the "
         "response names or asks")
REPLIES_HOW = ("replies of local models to the clarify suite's deficient cases (knowgap run clarify --seed 0 "
               "--sample 40, prompts plain and cautious), one per distinct model, case and reply; each pair is one "
               "annotated missing element of the case and the reply")
LABELLING = Labelling(
    rule=f"{RULE_FILE}, rule covered-1: committed in 477ce5a before the labels (562c127 and after)",
    by="one annotator: a Claude-based helper agent (a language model) working for the lead engineer, blind to the "
       "judge's verdicts, by rule covered-1; no second annotator",
    before_judge=True)
NOTES = ("Real replies of local:qwen2.5-1.5b and local:qwen2.5-0.5b to the clarify deficient cases, each annotated "
         "missing element labelled covered (the reply asks for it, conditions on it or says it is unknown) or not by "
         "rule covered-1 before the judge ran; a reply written in another language than its elements is not in the "
         "set (the judge does not score it). The verdict is the run's own: the reply scored by score_response, the "
         "element credited when it is in elements_covered. The thresholds were fitted on the 82 calibration pairs, "
         "not on these, so every figure here is held out. extra: precision (the bound on element_recall the "
         "reports print), sensitivity and specificity per model, language and category, and the constructed "
         "calibration pairs' held-out figures (constructed_*, a discrimination check only).")


class SiblingElement(BaseModel):
    """One line of ``sibling_elements.jsonl`` (rule sibling-element-1): a reply asking only about one missing element
    of its case, against another of the case's elements."""

    id: str
    lang: str
    case_id: str
    reply: str
    element: int = Field(ge=0)
    element_text: str
    covered: bool
    reason: str = Field(min_length=1)


SIBLING_NAME = ("sibling element (near miss): a reply asking only about one missing element of its case, scored "
                "against the case's other missing elements (same case, other facts), which it does not cover")


def measure_sibling_elements(path: Path | None = None) -> KnownFailure:
    """The known-failure entry of ``element-coverage`` on sibling elements (rule sibling-element-1): the share of
    items whose element the judge, scoring the reply as a run does, does not count covered."""
    path = path or labelled_file("sibling_elements.jsonl")
    cases = {c.id: c for c in load_cases(CASES_FILE)}
    rows = read_models(path, SiblingElement, what="items")
    embedder = default_embedder()
    covered: dict[tuple[str, str], set[str]] = {}  # each (case, reply) scored once, as a run scores it
    verdicts = []
    for line, row in rows:
        case = cases.get(row.case_id)
        if case is None or row.element >= len(case.missing_information) or \
                case.missing_information[row.element].text != row.element_text:
            raise InputError(str(path), f"no element {row.element} '{row.element_text}' in case {row.case_id}",
                             line=line, field="element")
        key = (case.id, row.reply)
        if key not in covered:
            covered[key] = set(score_response(case, row.reply, embedder)[0].get("elements_covered", ()))
        verdicts.append(row.element_text in covered[key])
    return construct_entry(SIBLING_NAME, path, "sibling-element-1",
                           "specificity (other elements not counted covered)", [r.id for _, r in rows],
                           [r.lang for _, r in rows],
                           [v == r.covered for v, (_, r) in zip(verdicts, rows, strict=True)],
                           wrong_means="sibling elements counted covered", labels=[r.covered for _, r in rows],
                           notes="Items share a reply two by two (one case, two other elements), so they are not "
                                 "independent.")


ELEMENT_COVERAGE = Judge(
    name="element-coverage", kind="offline", decides="does a response sentence name or ask about a missing element?",
    current=coverage.VERSION, positive="the text covers the element",
    labelled_set="judges/data/labelled/clarify_coverage.jsonl (real replies of two local models, each missing "
                 "element labelled covered or not by rule covered-1; the 82 calibration pairs as a constructed check)",
    validator=validate_element_coverage, needs_data=False)
